#!/usr/bin/env bash
# The arrows between src/ folders point one way (../shared/DESIGN.md,
# docs/ENGINE.md): nothing above transport/ includes a transport's own
# folder, base/ includes no other layer, no layer under core/ includes it,
# and nothing in src/ includes tools/.
# Prints every include that breaks a rule and fails.
set -euo pipefail
src="$(cd "$(dirname "$0")/../src" && pwd)"
failures=0

# check FOLDER PATTERN WHY: no file under src/FOLDER includes a header matching PATTERN.
check() {
  local folder="$1" pattern="$2" why="$3" hits
  hits=$(grep -rnE "#include \"($pattern)" "$src/$folder" --include=*.h --include=*.cc || true)
  if [ -n "$hits" ]; then
    echo "layering: $why:"
    echo "${hits//$src\//src/}"
    failures=$((failures + 1))
  fi
}

transport_folders='transport/(shm|tcp|ib|p2p)/'
for layer in core collectives bootstrap topology reduce base; do
  check "$layer" "$transport_folders" "src/$layer reaches into a transport's own folder (use transport/connections.h, registry.h, regions.h)"
done
check base 'core|collectives|transport|bootstrap|topology|reduce|kernels/' "src/base is under every layer and includes none"
for layer in collectives transport bootstrap topology reduce; do
  check "$layer" 'core/' "src/$layer is under src/core (the API and engine) and includes none of it (logging is base/logging.h)"
done
check . '(\.\./)*tools/' "src/ includes tools/"
check transport 'core/(communicator|engine|c_api|group|operation|request)' "transport/ includes the engine above it"
check collectives 'core/(communicator|engine|c_api|group|operation|request)' "collectives/ includes the engine above it"

if [ "$failures" -ne 0 ]; then
  exit 1
fi
echo "layering: every include points down"
