#!/usr/bin/env bash
# The flight recorder, as a user sees it: LOOM_DUMP_ON_SIGNAL=USR1 prints
# each rank's last operations on the signal while the job runs on, and a
# failure prints them after its sentence.
#   flight_recorder_test.sh LOOMRUN PROGRAM
set -euo pipefail
loomrun="$1" program="$2"
log=$(mktemp)
trap 'rm -f "$log"' EXIT

fail() { echo "FAIL: $*"; echo "--- output:"; cat "$log"; exit 1; }
expect() { grep -q -- "$1" "$log" || fail "no line matching: $1"; }

LOOM_DUMP_ON_SIGNAL=USR1 "$loomrun" -n 2 --timeout 60 "$program" >"$log" 2>&1 || fail "the program failed"

for rank in 0 1; do
  # The dump thread runs when the scheduler lets it: on a busy machine,
  # after the next AllReduce has been posted too.
  expect "\[$rank\] LOOM WARN COLL flight recorder on SIGUSR1: the last \([34]\) of \1 operations of rank $rank, oldest first"
  expect "\[$rank\] LOOM WARN COLL   #3 Recv of 10 int32 peer .: done, posted [0-9]* ms ago"
  expect "\[$rank\] LOOM WARN COLL flight recorder after the failure above: the last 5 of 5 operations of rank $rank"
  expect "\[$rank\] LOOM WARN COLL   #5 AllReduce of [56] float32 (sum) \[allpairs\]: failed (invalid usage)"
  # Two Barriers after the failure, both refused: one WARN, the other at INFO.
  refusals=$(grep -c "\[$rank\] LOOM WARN COLL Barrier #[67] (collective #[45]) on rank $rank cannot run: this communicator failed earlier" "$log" || true)
  [ "$refusals" = 1 ] || fail "rank $rank logged $refusals refused calls at WARN, not 1"
  expect "\[$rank\] LOOM WARN COLL Barrier #6 .*(later calls refused alike are logged at INFO)"
done
expect "#1 AllReduce of 1000 float32 (sum) \[allpairs\]: done, posted [0-9]* ms ago, started after [0-9]* ms, took [0-9]* ms"
expect "#2 Send of 10 int32 peer .: done"
expect "#4 AllReduce of 1000 float32 (sum) \[allpairs\]: done"

# A bad value is refused at init, naming the variable.
if LOOM_DUMP_ON_SIGNAL=TERM "$loomrun" -n 1 --timeout 60 "$program" >"$log" 2>&1; then fail "LOOM_DUMP_ON_SIGNAL=TERM was accepted"; fi
expect "LOOM_DUMP_ON_SIGNAL='TERM' is not a signal Loom can take for dumps: use USR1 or USR2"
echo "flight recorder: ok"
