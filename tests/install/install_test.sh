#!/usr/bin/env bash
# Installs the build into a scratch prefix, then builds and runs programs
# against it with find_package(loom) and with pkg-config.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT

cmake --install "$build" --prefix "$prefix" > /dev/null
for f in include/loom/loom.h include/loom/loom.hpp bin/loomrun bin/loom-topo bin/loom_all_reduce_perf bin/loom_sendrecv_perf include/loom/version.h; do
  [ -e "$prefix/$f" ] || { echo "FAIL: $f was not installed"; exit 1; }
done
# Installed perf binaries must not collide with nccl-tests' in one bin/.
[ ! -e "$prefix/bin/all_reduce_perf" ] || { echo "FAIL: all_reduce_perf installed under nccl-tests' name"; exit 1; }
libdir=$(dirname "$(find "$prefix" -name 'libloom.so' | head -n 1)")
[ -n "$libdir" ] || { echo "FAIL: libloom.so was not installed"; exit 1; }

cmake -S "$source/tests/install/consumer" -B "$prefix/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" > /dev/null
cmake --build "$prefix/consumer-build" > /dev/null
LD_LIBRARY_PATH="$libdir" "$prefix/consumer-build/consumer"

export PKG_CONFIG_PATH="$libdir/pkgconfig"
cc "$source/tests/install/consumer/consumer.c" -o "$prefix/consumer_c" $(pkg-config --cflags --libs loom)
LD_LIBRARY_PATH="$libdir" "$prefix/consumer_c"
echo "PASS: find_package(loom) and pkg-config loom both work from $prefix"
