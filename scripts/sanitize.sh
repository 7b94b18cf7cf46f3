#!/usr/bin/env bash
# The library and the tests that drive the engine, transports, bootstrap and
# topology readers, built twice more: with AddressSanitizer + UndefinedBehavior-
# Sanitizer (build-asan/) and with ThreadSanitizer (build-tsan/), both g++
# -O1 -g1, then the subsets below run under them. Any report fails the test
# that produced it (-fno-sanitize-recover, LSan at exit), so this script
# exits non-zero on any finding. docs/RELIABILITY.md says why these subsets.
#
#   bash scripts/sanitize.sh           # both (CI)
#   bash scripts/sanitize.sh asan      # one of them
#   SANITIZE_FULL=1 bash scripts/sanitize.sh   # every test case (long: ~30+ min)
set -euo pipefail
cd "$(dirname "$0")/.."
which="${1:-all}"
root="$PWD"

# -g1: line tables, all a sanitizer's stack trace needs, for a quarter less
# compile time than -g (no variable locations). Unity batches of 16 files:
# the ASan tests compile in 147 s instead of 225-291 s here; the plain build
# (scripts/build.sh) still compiles file by file, so a missing include shows.
configure() {  # dir, sanitizers
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" -DLOOM_SANITIZE="$2" -DLOOM_WITH_MPI=OFF \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
}

# Collective correctness at 3 ranks (odd, not a power of two: every ring,
# tree, chain and all-pairs schedule has a remainder step), as processes;
# every other integration and fault test at its own rank counts.
# (ctest's regular expressions hold at most 10 groups: test names of
# parameterised cases end in "  # GetParam() = ...", so a trailing space
# ends a name here instead of a group.)
asan_skip='CollectivesTest\..*/(Threads|Processes)[12458] '
# The point-to-point and group suites at 3 ranks: every rank has two
# peers, and patterns that wait on several at once; 2, 5 and 8 add no other
# code path, only minutes (the plain suite runs them all).
asan_skip+='|^Ranks/(PointToPointTest|GroupTest)\..*/(Threads|Processes)[258] '
# Over TCP the data path is the same whatever the collective: AllGather,
# AllToAll and the point-to-point suite cover it.
asan_skip+='|^tcp/Ranks/CollectivesTest\.(Chain|Tree|Reduce|Broadcast|AllReduce/)'
# Hierarchical AllReduce and ReduceScatter: their block arithmetic at 2 x 2
# (odd counts, empty blocks); 3 x 3 and 2 x 2 x 2 add sizes, not code.
asan_skip+='|^Hosts/HierarchicalTest\.(AllReduce|ReduceScatter).*/Hosts(3x3|2x2x2) '
# Ranks as threads run the same schedules, FIFOs and engine as ranks as
# processes; TSan runs the thread modes below. Under ASan the collective,
# point-to-point and group suites run as processes only.
asan_skip+='|^(Ranks|tcp/Ranks|hosts2\+3/Ranks)/(CollectivesTest|PointToPointTest|GroupTest)\..*/Threads[0-9]+ '
asan_skip+='|^Transports/TwoRanksTest\..*/Threads_'
# Mismatched calls are caught the same way at 5 ranks as at 8.
asan_skip+='|^Calls/MismatchTest\..*_8ranks_'
# The logarithmic schedules at 24, 32 and 64 ranks, and every algorithm
# on one host of 64 and 100: the counts up to 17 take every path (powers
# of two, folded ranks, short last steps).
asan_skip+='|^Ranks/[A-Za-z]+AlgorithmsTest\..*[A-Za-z](24|32|64) '
asan_skip+='|^Ranks/OneHostTest\..*/64$|^Ranks/OneHostTest\..*/100$'
# GoogleTest cases only (their names have a '.'; script tests drive tools and
# installs, not the library), and not the NVML stub tests (a library loaded
# into the process that is not Loom's) or binaries not built here.
not_here='^NvmlProbe|_NOT_BUILT$'
# A process left without a file descriptor on purpose: UBSan's vptr check
# probes memory through a pipe it then cannot open, and calls every object
# bad. The test runs in the plain build.
not_here+='|^AcceptTest\.NoFileDescriptorsLeft'

failed=0
run_asan() {
  local start=$(date +%s)
  configure build-asan address,undefined
  cmake --build build-asan --target loom_unit_tests loom_integration_tests loom_fault_tests
  local built=$(date +%s)
  local skip="$not_here|$asan_skip"
  [ "${SANITIZE_FULL:-0}" = 1 ] && skip="$not_here"
  if ! (cd build-asan && ASAN_OPTIONS="detect_leaks=1:abort_on_error=1" \
        LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        ctest -R '\.' -E "$skip" \
          -j 2 --timeout 300 --output-on-failure --no-tests=error); then
    failed=1
  fi
  echo "sanitize: ASan+UBSan: build $(( built - start )) s, tests $(( $(date +%s) - built )) s"
}

# Ranks as threads of one process, so TSan sees the engine, requests,
# progress thread, rendezvous and registries from every rank at once (it
# cannot follow cross-process futexes and shared memory). Every test that
# has a thread mode, except the long collective sweeps (40-170 s each under
# TSan): of those, the schedules with the most cross-thread hand-offs per
# byte run at 3 and 8 ranks.
tsan_subset='^Modes/.*/Threads( |$)|^BootstrapTest|^AdmissionTest|^Floods/StrangersTest.*/Garbage4 |^MemAlloc|^InitFromEnvErrorsTest|^GroupUsageTest|^TransportSelectionErrors'
# The TCP transport's progress thread against the engine: a few suites over
# LOOM_TRANSPORTS=tcp (the tcp/ entries of tests/CMakeLists.txt).
tsan_subset+='|^tcp/Ranks/(CollectivesTest\.(AllReduceRingOnSmallCounts|SendRecvAroundTheRing)/Threads4|PointToPointTest\..*/Threads2)( |$)'
tsan_subset+='|CollectivesTest\.(AllReduceRingOnSmallCounts|AllReduceAllPairsUpToOneSlot|BarrierHoldsEveryRankUntilAllArrive)/Threads[38] '
# (At 3 ranks only: at 8 these two took 80 s of TSan's 115.)
tsan_subset+='|CollectivesTest\.(SendRecvAroundTheRing|RegisteredOnSomeRanksFallsBackAlike)/Threads3 '
# The engine's own concurrency: operations of many lanes in flight, groups,
# the waiting thread and the background thread taking turns to drive.
tsan_subset+='|^Ranks/(PointToPointTest|GroupTest)\..*/Threads3( |$)'
# Two ranks through full FIFOs over TCP: the engine's sends from the
# user's buffer race the progress thread's sends from the slots.
tsan_subset+='|^Transports/TwoRanksTest\..*/Threads_tcp '
# The engine alone over the in-memory transport: lanes, groups, the
# background thread, failures and aborts from other threads.
tsan_subset+='|^Engine'

run_tsan() {
  local start=$(date +%s)
  configure build-tsan thread
  cmake --build build-tsan --target loom_integration_tests loom_unit_tests
  local built=$(date +%s)
  local filter=(-R "$tsan_subset")
  [ "${SANITIZE_FULL:-0}" = 1 ] && filter=(-R '/Threads|^BootstrapTest|^MemAlloc|^InitFromEnvErrorsTest')
  if ! (cd build-tsan && TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/sanitizers/tsan.supp" \
        ctest "${filter[@]}" -j 2 --timeout 300 --output-on-failure --no-tests=error); then
    failed=1
  fi
  echo "sanitize: TSan: build $(( built - start )) s, tests $(( $(date +%s) - built )) s"
}

case "$which" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all) run_asan; run_tsan ;;
  *) echo "usage: $0 [asan|tsan|all]" >&2; exit 2 ;;
esac
exit $failed
