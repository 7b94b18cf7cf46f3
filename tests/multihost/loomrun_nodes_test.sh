#!/usr/bin/env bash
# loomrun's several-node launch (--nnodes, --node-rank, --master-port), end
# to end with Loom: two loomruns on this machine play node 0 and node 1 of
# one job, as torchrun's static rendezvous does across machines. Their ranks
# share this host, so Loom connects them over shared memory; what is tested
# is the launch: ranks numbered across nodes, nodes of unequal sizes, the
# secret passed on, derived, or disagreeing.
#
# Usage: loomrun_nodes_test.sh /path/to/loomrun /path/to/all_reduce_perf
set -euo pipefail

if [[ $# -ne 2 || ! -x $1 || ! -x $2 ]]; then
  echo "usage: $0 /path/to/loomrun /path/to/all_reduce_perf" >&2
  exit 2
fi
LOOMRUN=$1
PERF=$2
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 (to find a free port) is not installed" >&2
  exit 77
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# A broken rendezvous fails within seconds, not Loom's default 10 minutes.
export LOOM_TIMEOUT_MS=5000

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/node*.out; do
    [[ -f $f ]] && { echo "--- ${f##*/}:" >&2; cat "$f" >&2; }
  done
  exit 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# run_nodes SECRET0 SECRET1 COUNTS: node 0 and node 1 of one job, each
# loomrun with its own LOOM_SECRET ("-" for none); sets STATUS0 and STATUS1.
run_nodes() {
  local secret0=$1 secret1=$2 counts=$3 port node pids=()
  port=$(free_port)
  for node in 0 1; do
    local secret=$secret0
    [[ $node -eq 1 ]] && secret=$secret1
    (
      if [[ $secret == - ]]; then unset LOOM_SECRET; else export LOOM_SECRET=$secret; fi
      # The outer timeout is a safety net should loomrun's own fail.
      exec timeout -s KILL 60 "$LOOMRUN" -n "$counts" --nnodes 2 --node-rank "$node" --master-port "$port" \
        --timeout 30 "$PERF" -b 8 -e 64K -f 8 -c 1
    ) >"$WORK/node$node.out" 2>&1 &
    pids+=($!)
  done
  STATUS0=0
  wait "${pids[0]}" || STATUS0=$?
  STATUS1=0
  wait "${pids[1]}" || STATUS1=$?
}

# 1. Nodes of unequal sizes (1 and 2 ranks) sharing a LOOM_SECRET.
run_nodes shared shared 1,2
[[ $STATUS0 -eq 0 && $STATUS1 -eq 0 ]] || fail "uneven nodes: loomruns exited $STATUS0 and $STATUS1"
grep -q '^# Out of bounds values : 0 OK' "$WORK/node0.out" || fail "uneven nodes: no correct AllReduce"
grep -Eq '^#  Rank  2 Group  0 ' "$WORK/node0.out" || fail "uneven nodes: the job does not have 3 ranks"
echo "PASS: nodes of 1 and 2 ranks sharing LOOM_SECRET"

# 2. No LOOM_SECRET anywhere: Loom derives the same one on both nodes.
run_nodes - - 1
[[ $STATUS0 -eq 0 && $STATUS1 -eq 0 ]] || fail "derived secret: loomruns exited $STATUS0 and $STATUS1"
echo "PASS: nodes without LOOM_SECRET"

# 3. Nodes given different secrets: refused, and both fail, naming why.
run_nodes one other 1
[[ $STATUS0 -ne 0 && $STATUS1 -ne 0 ]] || fail "different secrets: loomruns exited $STATUS0 and $STATUS1"
grep -q 'wrong secret' "$WORK/node1.out" || fail "different secrets: node 1 does not say its secret was wrong"
echo "PASS: nodes with different LOOM_SECRETs are refused"
