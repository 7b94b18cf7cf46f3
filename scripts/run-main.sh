#!/usr/bin/env bash
# The main job: install what is missing, build, run a real AllReduce perf
# sweep (8 B to 64 MiB) on 4 local ranks and print the nccl-tests table, then
# show what Loom sees of this machine with loom-topo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo "== loomrun -n 4 build/perf/all_reduce_perf -b 8 -e 64M -f 2"
build/tools/loomrun -n 4 build/perf/all_reduce_perf -b 8 -e 64M -f 2 -w 5 -n 20
echo
echo "== build/tools/loom-topo --ranks 4"
build/tools/loom-topo --ranks 4
