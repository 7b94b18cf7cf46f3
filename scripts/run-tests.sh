#!/usr/bin/env bash
# The whole test suite: install what is missing, build, run every test, then
# the sanitizer builds (ASan+UBSan, TSan: scripts/sanitize.sh) and the
# fuzzers for 12 s each (scripts/fuzz.sh). Each test has its own timeout
# (tests/CMakeLists.txt), so a hang fails that test by name instead of
# stalling the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
(cd build && ctest -j 2 --output-on-failure --timeout 300 --no-tests=error)
bash scripts/sanitize.sh
bash scripts/fuzz.sh 12
