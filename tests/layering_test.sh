#!/usr/bin/env bash
# The arrows between src/ folders point one way (../shared/DESIGN.md,
# docs/ENGINE.md): nothing above transport/ includes a transport's own
# folder, base/ includes no other layer, no layer under core/ includes it,
# and nothing in src/ includes tools/; and the engine and algorithms name
# no transport's own mechanism.
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

# The engine and the algorithms know transports only through the seam
# (connection.h, transport.h, idle_sleep.h): no transport's types, and none
# of the things one kind has and another has not (sockets, poll sets,
# eventfds, futexes) nor one kind's settings (each kind reads and agrees
# its own: transport/*/*_settings.*), in their code. Comments may name
# them to say why.
names='\b(Tcp|Shm|Socket)[A-Z][A-Za-z]*|\bpollfd\b|(^|[^A-Za-z_])::poll\(|\bWakeup\b|\beventfd|\bfutex|releaseSockets|pollFds?_'
names+='|\b(shm|socket)Slots?(Bytes)?\b|crossMemoryAttach|socketsPerPeer|socketBufferBytes'
for layer in core collectives; do
  # Each line without its comment, as FILE:LINE:code.
  hits=$(find "$src/$layer" -name '*.h' -o -name '*.cc' | sort |
    xargs awk '{ code = $0; sub(/\/\/.*/, "", code); print FILENAME ":" FNR ":" code }' | grep -E ":[0-9]+:.*($names)" || true)
  if [ -n "$hits" ]; then
    echo "layering: src/$layer names a transport's own mechanism (use the seam in src/transport/):"
    echo "${hits//$src\//src/}"
    failures=$((failures + 1))
  fi
done

if [ "$failures" -ne 0 ]; then
  exit 1
fi
echo "layering: every include points down"
