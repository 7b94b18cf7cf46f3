#!/usr/bin/env bash
# PyTorch's own distributed test suite on loom and on gloo, compared: every
# test that passes on gloo must pass on loom (bindings/torch/tests/
# torch_distributed_suite.py says how loom is run where the suite names
# gloo alone). About 25 minutes on 2 cores (every test spawns its ranks, each
# importing torch), so the README's test command leaves it out; the
# backend's own suites (ctest torch_collectives, torch_ddp) run there.
#
#   bash scripts/torch-suite.sh [-k EXPRESSION]   # pytest's -k, to run some tests
#
# Writes build/torch-suite/{loom,gloo,gated}.{xml,log}; exits 1 when a test
# that passed on gloo did not pass on loom.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null

python=/usr/bin/python3
if ! "$python" -c "import expecttest" 2>/dev/null; then
  # torch's test helpers import expecttest, which Debian 12 does not
  # package; Debian 13's python3-expecttest (pure Python, needing only
  # python3 and python3-hypothesis) installs on 12 as it is.
  [ "$(id -u)" -eq 0 ] || { echo "torch-suite: expecttest is missing; run as root to install it" >&2; exit 1; }
  apt_dir=$(mktemp -d)
  trap 'rm -rf "$apt_dir"' EXIT
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
    > "$apt_dir/sources.list"
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  apt_options=(-o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
               -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache" -o APT::Sandbox::User=root)
  apt-get "${apt_options[@]}" update -qq
  (cd "$apt_dir" && apt-get "${apt_options[@]}" download python3-expecttest)
  dpkg -i "$apt_dir"/python3-expecttest_*_all.deb >/dev/null
fi

out=build/torch-suite
rm -rf "$out"
mkdir -p "$out"
suite=bindings/torch/tests/torch_distributed_suite.py
export LOOM_TORCH_BUILD="$PWD/build/torch/lib" PYTHONDONTWRITEBYTECODE=1

run() {  # run MODE pytest-arguments...: one run of the suite
  local mode=$1
  shift
  echo "torch-suite: $mode ..."
  LOOM_TORCH_SUITE=$mode "$python" -m pytest -q -p no:cacheprovider -rfE --junitxml="$out/$mode.xml" "$@" \
    >"$out/$mode.log" 2>&1 || true
  tail -n 1 "$out/$mode.log"
}

run loom "$suite" "$@"
run gloo "$suite" "$@"
mapfile -t gated < <("$python" bindings/torch/tests/compare_suites.py gated-list "$out/loom.xml" "$out/gloo.xml")
if [ ${#gated[@]} -gt 0 ]; then
  run gated "${gated[@]/#/$suite::TestDistBackendWithSpawn::}"
  "$python" bindings/torch/tests/compare_suites.py report "$out/loom.xml" "$out/gloo.xml" "$out/gated.xml"
else
  "$python" bindings/torch/tests/compare_suites.py report "$out/loom.xml" "$out/gloo.xml"
fi
