#!/usr/bin/env bash
# Runs one perf binary the way operators do, at small sizes with checking on,
# on 1 to 4 ranks, and asserts zero wrong values; for all_reduce_perf also
# checks the output line by line against the nccl-tests layout, that -T
# names a rank held back on purpose, and that bad flags get a sentence.
# Usage: perf_suite_test.sh BUILD_DIR PERF_NAME (e.g. all_reduce_perf)
set -euo pipefail
build=$1
name=$2
loomrun=$build/tools/loomrun
perf=$build/perf/$name
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; exit 1; }

reduces=0
case $name in all_reduce_perf|reduce_scatter_perf|reduce_perf) reduces=1 ;; esac
extra=(-d all)
[ $reduces = 1 ] && extra+=(-o all)
[ "$name" = broadcast_perf ] || [ "$name" = reduce_perf ] && extra+=(-r -1)

for n in 1 2 3 4; do
  timeout -s KILL 120 "$loomrun" -n "$n" "$perf" -b 8 -e 96K -f 6 -c 1 -w 1 -n 2 "${extra[@]}" > "$out" 2>&1 \
    || fail "$name on $n ranks exited with status $?"
  rows=$(grep -cE '^ +[0-9]+ +[0-9]+ ' "$out" || true)
  [ "$rows" -gt 0 ] || fail "$name on $n ranks printed no result rows"
  # Columns 9 and 13 are #wrong for out-of-place and in-place.
  bad=$(awk '/^ +[0-9]+ +[0-9]+ / && ($9 != 0 || $13 != 0)' "$out")
  [ -z "$bad" ] || fail "$name on $n ranks reported wrong values: $bad"
  grep -q '^# Out of bounds values : 0 OK$' "$out" || fail "$name on $n ranks: out-of-bounds line missing or not OK"
  echo "ok: $name on $n ranks, $rows rows, zero wrong"
done

# -R 1: buffers from loomMemAlloc, registered; the single-copy path taken
# from the smallest size (LOOM_DIRECT_MIN_BYTES=0) up to several slots.
case $name in all_reduce_perf|all_gather_perf|reduce_scatter_perf)
  for n in 2 3; do
    LOOM_DIRECT_MIN_BYTES=0 timeout -s KILL 120 "$loomrun" -n "$n" "$perf" -b 8 -e 1M -f 8 -c 1 -w 1 -n 2 -R 1 \
      "${extra[@]}" > "$out" 2>&1 || fail "$name -R 1 on $n ranks exited with status $?"
    grep -q 'device  0 \[host\] host registered memory' "$out" || fail "$name -R 1 does not say registered memory"
    bad=$(awk '/^ +[0-9]+ +[0-9]+ / && ($9 != 0 || $13 != 0)' "$out")
    [ -z "$bad" ] || fail "$name -R 1 on $n ranks reported wrong values: $bad"
    grep -q '^# Out of bounds values : 0 OK$' "$out" || fail "$name -R 1 on $n ranks: out-of-bounds line missing or not OK"
    echo "ok: $name -R 1 on $n ranks, zero wrong"
  done ;;
esac

[ "$name" = all_reduce_perf ] || exit 0

# The nccl-tests layout, line by line (more flag sets: perf_compat_test.sh).
timeout -s KILL 60 "$loomrun" -n 2 "$perf" -b 8 -e 1K -f 4 -c 1 -w 1 -n 2 > "$out" 2>&1 || fail "layout run failed"
patterns=(
  '^# nccl-tests version 2\.19\.6 nccl-headers=[0-9]+ nccl-library=[0-9]+$'
  '^# Collective test starting: all_reduce_perf$'
  '^# nThread 1 nGpus 1 minBytes 8 maxBytes 1024 step: 4\(factor\) warmup iters: 1 iters: 2 agg iters: 1 validation: 1 graph: 0 unalign: 0$'
  '^# Loom [0-9]+\.[0-9]+\.[0-9]+, launched by '
  '^# Buffers: cache-cold: iterations rotate through [0-9]+ MiB per buffer \(last-level cache [0-9]+ MiB\)$'
  '^#$'
  '^# Using devices$'
  '^#  Rank  0 Group  0 Pid +[0-9]+ on +[^ ]+ device  0 \[host\] '
  '^#  Rank  1 Group  0 Pid +[0-9]+ on +[^ ]+ device  1 \[host\] '
  '^#$'
  '^#                                                              out-of-place                       in-place          $'
  '^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong $'
  '^#        \(B\)    \(elements\)                               \(us\)  \(GB/s\)  \(GB/s\)             \(us\)  \(GB/s\)  \(GB/s\)         $'
)
row='^ +[0-9]+ +[0-9]+ +float +sum +-1( +[0-9.e+]+ +[0-9.e+]+ +[0-9.e+]+ +[0-9]+){2}$'
mapfile -t lines < "$out"
i=0
for p in "${patterns[@]}"; do
  [[ ${lines[$i]} =~ $p ]] || fail "line $((i + 1)) is '${lines[$i]}', expected /$p/"
  i=$((i + 1))
done
for size in 8 32 128 512; do
  [[ ${lines[$i]} =~ $row ]] || fail "line $((i + 1)) is '${lines[$i]}', not a result row"
  read -r s c _ <<< "${lines[$i]}"
  [ "$s" = $size ] && [ "$c" = $((size / 4)) ] || fail "line $((i + 1)): size $s count $c, expected $size $((size / 4))"
  i=$((i + 1))
done
footer=('^# Out of bounds values : 0 OK$' '^# Avg bus bandwidth    : [0-9.e+-]+ $' '^#$'
        '^# Collective test concluded: all_reduce_perf$' '^#$' '^$')
for p in "${footer[@]}"; do
  [[ ${lines[$i]} =~ $p ]] || fail "line $((i + 1)) is '${lines[$i]}', expected /$p/"
  i=$((i + 1))
done
[ "${#lines[@]}" = $i ] || fail "${#lines[@]} lines, expected $i"
echo "ok: output matches the nccl-tests layout line by line"

# -T: rank 2 is held back 12 s; the others must time out after 3 s naming
# it (a busy machine may hold another rank back for a while too).
set +e
timeout -s KILL 60 "$loomrun" -n 3 "$perf" -b 8 -e 8 -T 3 --stall 2:12000 > "$out" 2>&1
status=$?
set -e
[ $status -ne 0 ] || fail "-T 3 with rank 2 stalled for 12 s still succeeded"
grep -q 'timed out after 3000 ms' "$out" || fail "-T did not report a timeout"
grep -Eq 'ranks that have not started collective [0-9]* of this communicator: ([01] \([^)]*\), )?2 \(has started' "$out" \
  || fail "-T did not name rank 2 as the late rank"
echo "ok: -T fired and named rank 2"

# Bad values: a sentence and nccl-tests' status (255, its `return -1`).
set +e
"$perf" -b 1X > "$out" 2>&1; s1=$?
"$perf" -n abc > "$out.2" 2>&1; s2=$?
set -e
[ $s1 = 255 ] && grep -q "invalid size specified for 'minbytes'" "$out" || fail "-b 1X: status $s1"
[ $s2 = 255 ] && grep -q "invalid value 'abc' for -n" "$out.2" || { cat "$out.2"; fail "-n abc: status $s2"; }
rm -f "$out.2"
echo "ok: bad values are refused with a sentence"
