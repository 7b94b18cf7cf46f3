#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan into
# build-fuzz/, replays every regression input and seed, then fuzzes each
# target for SECONDS (default 20), as many targets at once as there are
# cores. Exits non-zero on any crash, leak, UB or timeout, saying where the
# input that caused it was saved.
#
#   bash scripts/fuzz.sh            # CI: 20 s per target
#   bash scripts/fuzz.sh 600        # on demand: ten minutes each
#   FUZZ_TARGETS="env bootstrap" bash scripts/fuzz.sh 60
#   FUZZ_TARGETS=hwloc_xml bash scripts/fuzz.sh 300
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
targets=(${FUZZ_TARGETS:-nccl_xml hwloc_xml bootstrap env})
build=build-fuzz
jobs="${FUZZ_JOBS:-$(nproc)}"

start=$(date +%s)
# Unity batches, as the sanitizer trees (scripts/sanitize.sh).
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" -DCMAKE_C_FLAGS_DEBUG="-O1 -g1" \
  -DLOOM_SANITIZE=address,undefined -DLOOM_BUILD_FUZZERS=ON -DLOOM_BUILD_TESTS=OFF -DLOOM_WITH_MPI=OFF \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
cmake --build "$build" --target $(printf '%s_fuzzer ' "${targets[@]}")
echo "fuzz: built in $(( $(date +%s) - start )) s"

# Inputs: XML files are a few KiB (the seeds are trimmed to stay under);
# bootstrap and env inputs are small by nature.
max_len() {
  case "$1" in
    nccl_xml | hwloc_xml) echo 16384 ;;
    *) echo 4096 ;;
  esac
}
# Each target's dictionary: tokens of its format (XML names, variables).
dict() {
  echo "-dict=tests/fuzz/$1.dict"
}

# Leak reports that are hwloc's own are suppressed (tests/sanitizers/lsan.supp says
# why); matching them needs full unwinding through libhwloc, which costs
# speed, so only the hwloc target pays for it.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
asan_options() {
  local o="detect_leaks=1:abort_on_error=1"
  [ "$1" = hwloc_xml ] && o="$o:fast_unwind_on_malloc=0"
  echo "$o"
}
logs="$build/logs"
mkdir -p "$logs"

# 1. Replays: regressions (every crash ever found) and seeds run clean.
failed=()
for t in "${targets[@]}"; do
  mkdir -p "tests/fuzz/regressions/$t"
  mkdir -p "$build/artifacts/$t"
  if ! ASAN_OPTIONS="$(asan_options "$t")" "$build/tests/fuzz/${t}_fuzzer" -runs=0 -artifact_prefix="$build/artifacts/$t/" "$(dict "$t")" "tests/fuzz/regressions/$t" "tests/fuzz/corpus/$t" \
      >"$logs/$t.replay.log" 2>&1; then
    echo "fuzz: $t: a regression or seed input fails again; see $logs/$t.replay.log" >&2
    tail -40 "$logs/$t.replay.log" >&2
    failed+=("$t (replay)")
  fi
done

# 2. Fuzzing. New inputs that add coverage go to build-fuzz/corpus/<t>
# (kept between runs on this machine), never into the source tree; crashes
# go to build-fuzz/artifacts/<t>/.
run_one() {
  local t="$1"
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
  ASAN_OPTIONS="$(asan_options "$t")" "$build/tests/fuzz/${t}_fuzzer" -max_total_time="$seconds" -max_len="$(max_len "$t")" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t/" "$(dict "$t")" \
    "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$logs/$t.log" 2>&1
}
pids=()
names=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
  run_one "$t" &
  pids+=($!)
  names+=("$t")
done
for i in "${!pids[@]}"; do
  t="${names[$i]}"
  if wait "${pids[$i]}"; then status=ok; else status=FAILED; failed+=("$t"); fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$t.log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$logs/$t.log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$logs/$t.log" | tail -1 || true)
  echo "fuzz: $t: $status, ${seconds} s, ${execs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}"
  if [ "$status" = FAILED ]; then
    grep -E 'ERROR: |runtime error|SUMMARY|Test unit written|deadly signal|==[0-9]+==' "$logs/$t.log" | head -20 >&2 || true
    echo "fuzz: $t: full log $logs/$t.log; copy the input above into tests/fuzz/regressions/$t/ with the fix" >&2
  fi
done

echo "fuzz: total $(( $(date +%s) - start )) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
