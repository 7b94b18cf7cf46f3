#!/usr/bin/env bash
# The whole test suite: install what is missing, build, check the API
# reference (Doxygen on include/loom/loom.h: any warning, such as an
# undocumented parameter, fails it; a second or so), run every test, then
# the sanitizer builds (ASan+UBSan, TSan: scripts/sanitize.sh) and the
# fuzzers for 12 s each (scripts/fuzz.sh). Each test has its own timeout
# (tests/CMakeLists.txt), so a hang fails that test by name instead of
# stalling the run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
# A tree configured before doxygen was installed has no docs target yet:
# reconfiguring finds it (and changes nothing else).
grep -q '^DOXYGEN_EXECUTABLE:FILEPATH=/' build/CMakeCache.txt || cmake build >/dev/null
cmake --build build --target docs
(cd build && ctest -j 2 --output-on-failure --timeout 300 --no-tests=error)
bash scripts/sanitize.sh
bash scripts/fuzz.sh 12
