#!/usr/bin/env bash
# Fills docs/RELIABILITY.md's fault table: runs each fault test many times
# and counts the runs that ended with the right
# error within the test's bound, the ones that failed an expectation (wrong
# error, wrong data, or no error), the ones that hung (killed by the
# harness's bound, or by this script's), and the shared-memory names left in
# /dev/shm afterwards.
#
#   bash scripts/fault-table.sh [REPEAT]     # default 20; needs build/
#   FAULT_ROWS='Mismatch' bash scripts/fault-table.sh 5   # rows whose name matches
set -uo pipefail
cd "$(dirname "$0")/.."
repeat="${1:-20}"
[ -x build/tests/loom_fault_tests ] || { echo "fault-table.sh: build/ is missing; run scripts/build.sh first" >&2; exit 2; }

# name | GoogleTest filter [| test binary, default fault]
rows=(
  "Mismatched count, 2-8 ranks|Calls/MismatchTest.*/Count_*"
  "Mismatched datatype, 2-8 ranks|Calls/MismatchTest.*/Dtype_*"
  "Mismatched op, 2-8 ranks|Calls/MismatchTest.*/Op_*"
  "Mismatched root, 2-8 ranks|Calls/MismatchTest.*/Root_*"
  "Mismatched collective, 2-8 ranks|Calls/MismatchTest.*/Kind_*"
  "Send/Recv of different sizes, 2-8 ranks|Calls/MismatchTest.*/PointToPointCount_*"
  "Two threads calling into one communicator|Modes/ConcurrentUseTest.SecondThreads*"
  "Extreme timeouts (LOOM_TIMEOUT_MS=1e13, INT64_MAX)|TimeoutsTest.*"
  "SIGSTOP inside a collective, past the timeout (4 ranks)|StallTest.RankStopped*"
  "SIGSTOP for 0.5 s, under the timeout (4 ranks)|StallTest.ShortStop*"
  "Rank exits mid-AllReduce (3 ranks)|PeerFailureTest.ProcessThatExits*"
  "Abort on one rank while another waits|PeerFailureTest.AbortOnOneRank*"
  "kill -9 at 5 points of init (3 ranks; each run is 5 kills)|PeerFailureTest.RankKilledDuringInit*"
  "kill -9 mid-AllReduce, 2, 3, 5 and 8 ranks|Ranks/KilledMidOperationTest.*"
  "Ranks that never join, or stop before a setup round, named by the rendezvous|MissingRanksTest.*|integration"
  "Every end of a communicator (6 kinds x 3) gives back fds and threads|ReleaseTest.*"
  "Rendezvous out of file descriptors, 48 idle strangers, 3 ranks|AdmissionTest.RendezvousOutOfDescriptors*|integration"
  "Bad environment values (9 variables, one run each)|InitErrorsTest.MalformedEnvironmentVariablesAreNamed|unit"
  "Abort from a watchdog thread during a blocked call, then a new communicator|AbortTest.*"
)

shm_names() { ls /dev/shm 2>/dev/null | grep -c '^loom' || true; }

printf '| Fault | Runs | Right error within the bound | Wrong error or data | Hung | Names left in /dev/shm |\n'
printf '| --- | --- | --- | --- | --- | --- |\n'
for row in "${rows[@]}"; do
  IFS='|' read -r name filter kind <<<"$row"
  binary="build/tests/loom_${kind:-fault}_tests"
  if [ -n "${FAULT_ROWS:-}" ] && ! [[ "$name" =~ $FAULT_ROWS ]]; then continue; fi
  before=$(shm_names)
  log=$(mktemp)
  # One process per repetition, as ctest runs them: --gtest_repeat would
  # fork process-mode ranks from a parent whose earlier thread-mode run may
  # still have a rendezvous thread inside OpenSSL, whose locks a child then
  # inherits held. Each case bounds itself (the harness kills ranks after
  # 240 s); `timeout` catches a hang of the harness itself.
  hung=0
  for ((i = 0; i < repeat; ++i)); do
    timeout 1200 "$binary" --gtest_filter="$filter" >>"$log" 2>&1
    [ $? -eq 124 ] && hung=$((hung + 1))
  done
  ok=$(grep -c '^\[       OK \]' "$log" || true)
  failed=$(grep -c '^\[  FAILED  \] .*(' "$log" || true)
  killed=$(grep -c 'was still running after' "$log" || true)  # by the harness: also a FAILED line
  hung=$((hung + killed))
  left=$(( $(shm_names) - before ))
  runs=$((ok + failed + hung - killed))
  printf '| %s | %d | %d | %d | %d | %d |\n' "$name" "$runs" "$ok" "$((failed - killed))" "$hung" "$left"
  if [ "$failed" -gt 0 ]; then grep -B5 '^\[  FAILED  \] .*(' "$log" | head -40 >&2; fi
  rm -f "$log"
done
