#!/usr/bin/env bash
# The "Bootstrap" rows of docs/RELIABILITY.md's fault table. Runs each fault
# case RUNS times (default 20), each run its own process under a hard limit,
# and counts how it ended:
#   right   the test passed: the real ranks met within their 5 s timeout,
#           the wrong-secret rank (and every garbage stranger) was told why,
#           and the rendezvous left no socket open on its port;
#   wrong   the test failed some other way (its first lines are printed);
#   hung    killed at the limit (LIMIT seconds, default 120);
#   left    the rendezvous kept a socket open on its port, or a stranger's
#           connection was never closed.
# A wrong run's whole output is kept under FAILURES (default
# /tmp/loom-bootstrap-faults), named after the case and run.
# Prints a Markdown table, and the times the StrangersTest cases measured
# (from the first stranger to every rank's init returning: not asserted).
#
#   bash tests/fault/bootstrap_fault_runs.sh [BUILD_DIR] [RUNS]
set -uo pipefail
build="${1:-build}"
runs="${2:-20}"
limit="${LIMIT:-120}"
failures="${FAILURES:-/tmp/loom-bootstrap-faults}"  # where a failed run's output is kept
binary="$build/tests/loom_integration_tests"
[ -x "$binary" ] || { echo "no $binary: build loom_integration_tests first" >&2; exit 2; }

floods='Floods/StrangersTest.RealRanksMeetAndAWrongSecretIsToldWhy'
cases=(
  "$floods/NoStrangers" "$floods/Idle1" "$floods/Idle4" "$floods/Idle64"
  "$floods/Garbage1" "$floods/Garbage4" "$floods/Garbage64" "$floods/Idle200"
  BootstrapTest.PeerWithTheWrongSecretIsRefused
  AdmissionTest.HelloOfAnotherVersionIsToldWhyAndLogged
  AdmissionTest.PeerTooSlowWithItsHelloIsDroppedAndToldToTryAgain
  AdmissionTest.OldestWaitingConnectionMakesRoomForANewcomer
  AdmissionTest.RanksDroppedForRoomConnectAgainUntilAllAreIn
  AdmissionTest.ProvenHelloWithTooManyRanksIsRefused
  AdmissionTest.RankToldWhenTheAddressIsNotALoomRendezvous
  AdmissionTest.RankToldWhenTheRendezvousSpeaksAnotherVersion
  ListenAddressTest.UniqueIdRendezvousListensOnItsInterfaceOnly
  ListenAddressTest.RankZeroListensOnMasterAddrOnly
  ListenAddressTest.MasterAddrOfAnotherHostIsRefusedWithWhatToSet
)

# min / median / max of the numbers on stdin, or "-" when there are none.
spread() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit }
    printf "%d / %d / %d", v[1], v[int((NR + 1) / 2)], v[NR] }'
}

echo "| Case | Runs | Right | Wrong | Hung | Left behind | Init returned after (ms, min / median / max) |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for case in "${cases[@]}"; do
  right=0 wrong=0 hung=0 left=0 times=""
  for ((i = 1; i <= runs; i++)); do
    out=$(timeout -k 5 "$limit" "$binary" --gtest_filter="$case" 2>&1)
    rc=$?
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      hung=$((hung + 1))
    elif grep -qE "left sockets open|connection is still open|kept a silent connection open" <<<"$out"; then
      left=$((left + 1))
    elif [ "$rc" -eq 0 ] && grep -q "\[  PASSED  \] 1 test" <<<"$out"; then
      right=$((right + 1))
    else
      wrong=$((wrong + 1))
      mkdir -p "$failures"
      saved="$failures/$(tr '/.' '__' <<<"$case")-run$i-rc$rc.txt"
      printf '%s\n' "$out" >"$saved"
      echo "run $i of $case failed (exit $rc); its output: $saved" >&2
    fi
    times+="$(sed -n 's/.*init returned after \([0-9]*\) ms.*/\1/p' <<<"$out")"$'\n'
  done
  measured=$(grep -v '^$' <<<"$times" | spread)
  echo "| \`${case#Floods/}\` | $runs | $right | $wrong | $hung | $left | $measured |"
done
