#!/usr/bin/env bash
# Faults across fake hosts (scripts/loom-hosts.sh), 2 hosts of 2 ranks each,
# in the middle of a long AllReduce whose ring crosses the bridge:
#   rank-killed:  kill -9 of rank 3 on host 1: every other rank fails at once
#                 (loomRemoteError) naming rank 3;
#   small-rank-killed, small-leader-killed: the same in a stream of 8-byte
#                 AllReduces, which go through one leader per host (ranks 0
#                 and 2): kill -9 of rank 3, which only its leader hears
#                 from, or of leader 2, whom rank 3 and leader 0 wait for;
#                 every other rank fails naming the killed rank, those that
#                 never talk to it through the rank that does;
#   link-down:    host 1's link to the bridge goes down: nothing is closed,
#                 packets just vanish, so every rank fails with loomTimeout
#                 within its timeout, and host 0's ranks name a rank of host 1;
#   host-gone:    host 1 vanishes (its link removed, its processes killed, its
#                 namespace deleted): host 0's ranks fail within the timeout
#                 naming a rank of host 1.
# In each case the job ends well within the timeout plus its grace, and
# loom-hosts.sh leaves no namespace behind.
#
# Usage: faults_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf [CASE...]
set -euo pipefail

if [[ $# -lt 3 || ! -f $1 || ! -x $2 || ! -x $3 ]]; then
  echo "usage: $0 /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf [rank-killed|small-rank-killed|small-leader-killed|link-down|host-gone]..." >&2
  exit 2
fi
HOSTS_SCRIPT=$1
LOOMRUN=$2
PERF=$3
shift 3
cases=("$@")
((${#cases[@]} > 0)) || cases=(rank-killed small-rank-killed small-leader-killed link-down host-gone)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$HERE/prerequisites.sh"
WORK=$(mktemp -d)
hosts_pid=""
cleanup() {
  [[ -z $hosts_pid ]] || kill -TERM "$hosts_pid" 2>/dev/null || true
  [[ -z $hosts_pid ]] || wait "$hosts_pid" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Each rank's operation timeout: long enough for a loaded 2-core machine to
# set up 4 ranks, short enough to keep the test quick.
readonly TIMEOUT_MS=6000
fail() {
  echo "FAIL: $*" >&2
  sed 's/^/  | /' "$WORK/out" | cut -c1-400 | tail -n 60 >&2
  exit 1
}

# Starts the job in the background: an AllReduce of $1 bytes (8 MiB unless
# given) repeated far longer than the test lasts, with INFO lines of init so
# we know when it runs.
# Each rank runs under a shell that reports how it ended and exits 0: a
# launcher stops every rank once one fails (loomrun as torchrun and mpirun
# do), which would kill the survivors before they could say what they saw;
# for the same reason loom-hosts.sh keeps the other hosts going when one
# vanishes.
start_job() {
  local bytes=${1:-8M}
  : >"$WORK/out"
  LOOM_TIMEOUT_MS=$TIMEOUT_MS LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=INIT \
    bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" --hosts 2 -n 2 --timeout 120 --tag-output --keep-going -- \
    bash -c '"$0" "$@"; echo "rank $RANK exited with status $?"' \
    "$PERF" -b "$bytes" -e "$bytes" -w 0 -n 100000000 -c 0 >"$WORK/out" 2>&1 &
  hosts_pid=$!
  # Rank 0 logs the ring once every rank is connected.
  local waited
  for ((waited = 0; waited < 600; waited++)); do
    grep -q 'LOOM INFO INIT ring ' "$WORK/out" && break
    kill -0 "$hosts_pid" 2>/dev/null || fail "the job ended before it was running"
    sleep 0.1
  done
  grep -q 'LOOM INFO INIT ring ' "$WORK/out" || fail "the job did not finish init within 60 s"
  sleep 1  # well inside the AllReduces
}

# Waits for the job to end; its seconds since `started` go to $elapsed.
wait_job() {
  wait "$hosts_pid" || true
  hosts_pid=""
  elapsed=$(($(date +%s) - started))
}

ns() { echo "loomh${hosts_pid}-$1"; }

# The pid (as seen from here) of rank $1 of the job, on host $2, found by
# its RANK among that host's processes only: other jobs on this machine
# (other fake hosts, other tests, benchmarks) run the same program with the
# same RANKs, and must never be killed.
rank_pid() {
  local pid
  # The program itself, not the shell around it (comm: 15 characters).
  for pid in $(ip netns pids "$(ns "$2")" 2>/dev/null); do
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$(basename "$PERF" | cut -c1-15)" ]] || continue
    if tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx "RANK=$1"; then
      echo "$pid"
      return 0
    fi
  done
  return 1
}

# expect_failure RANK PATTERN: rank RANK reported a failed call matching
# PATTERN, and exited with the perf suite's status for a library error.
expect_failure() {
  grep -E "^\[$1\] perf: rank $1: .* failed: " "$WORK/out" | grep -Eq -- "$2" ||
    fail "rank $1 did not fail naming /$2/"
  grep -Eq "^\[$1\] rank $1 exited with status [1-9]" "$WORK/out" || fail "rank $1 did not exit with a failure"
}

expect_no_namespaces() {
  if ip netns list | grep -q "^loomh${1}-"; then fail "namespaces of run $1 were left behind"; fi
}

for case_name in "${cases[@]}"; do
  if [[ $case_name == small-* ]]; then start_job 8; else start_job; fi
  run=$hosts_pid
  started=$(date +%s)
  case $case_name in
    rank-killed)
      victim=$(rank_pid 3 1) || fail "cannot find rank 3's process on host 1"
      kill -KILL "$victim"
      wait_job
      for rank in 0 1 2; do expect_failure "$rank" 'rank 3'; done
      # Fails at once on EOF, not at the timeout.
      ((elapsed < TIMEOUT_MS / 1000 + 10)) || fail "the ranks took ${elapsed} s to fail after rank 3 was killed"
      ;;
    small-rank-killed | small-leader-killed)
      victim_rank=3
      [[ $case_name == small-leader-killed ]] && victim_rank=2
      victim=$(rank_pid "$victim_rank" 1) || fail "cannot find rank $victim_rank's process on host 1"
      kill -KILL "$victim"
      wait_job
      for rank in 0 1 2 3; do
        ((rank == victim_rank)) || expect_failure "$rank" "rank $victim_rank"
      done
      ((elapsed < TIMEOUT_MS / 1000 + 10)) || fail "the ranks took ${elapsed} s to fail after rank $victim_rank was killed"
      ;;
    link-down)
      ip -n "$(ns br)" link set h1 down
      wait_job
      for rank in 0 1; do expect_failure "$rank" 'rank [23]'; done
      for rank in 2 3; do expect_failure "$rank" 'rank [0-3]'; done
      grep -Eq '^\[[0-3]\] perf: rank [0-3]: .* failed: loomTimeout|timed out|timeout' "$WORK/out" ||
        fail "no rank reported a timeout"
      ;;
    host-gone)
      host_ns=$(ns 1)
      ip -n "$(ns br)" link delete h1
      # shellcheck disable=SC2046
      kill -KILL $(ip netns pids "$host_ns") 2>/dev/null || true
      ip netns delete "$host_ns"
      wait_job
      for rank in 0 1; do expect_failure "$rank" 'rank [23]'; done
      ;;
    *) echo "usage: unknown case '$case_name'" >&2; exit 2 ;;
  esac
  # Within the timeout plus what init, the destroy's flush and loomrun's
  # grace add; never the 120 s of loom-hosts.sh's own timeout.
  ((elapsed < TIMEOUT_MS / 1000 + 20)) || fail "$case_name: the job took ${elapsed} s to end"
  expect_no_namespaces "$run"
  echo "PASS: $case_name: every surviving rank named a peer of the other host; the job ended in ${elapsed} s:"
  grep -E '^\[[0-3]\] (perf: rank|rank [0-3] exited)' "$WORK/out" | cut -c1-400 | sed 's/^/  /'

done
