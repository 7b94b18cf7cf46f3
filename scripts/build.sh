#!/usr/bin/env bash
# Configures and builds Loom into build/ (Release with debug info). A fresh
# tree compiles in unity batches of 16 files: 2.5 min on 2 cores instead of
# about 4 (the test command builds three trees). Developers who rebuild one
# file often may reconfigure with -DCMAKE_UNITY_BUILD=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
fi
cmake --build build -j "$(nproc)"
