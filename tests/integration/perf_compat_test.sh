#!/usr/bin/env bash
# The perf suite as a drop-in for nccl-tests: a table of flag sets, each with
# the exit status and the header/row/footer lines nccl-tests would print;
# wrong results forced through the test-only hook LOOM_PERF_TEST_CORRUPT
# (print FAILED, exit 7); nccl-tests' JSON schema under -J.
# Usage: perf_compat_test.sh BUILD_DIR
set -uo pipefail
build=$1
loomrun=$build/tools/loomrun
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
failures=0

# expect RANKS STATUS "BINARY FLAGS..." REGEX...: every REGEX matches a line.
# A REGEX starting with '!' must match no line. RANKS 0: run without loomrun.
expect() {
  local ranks=$1 status=$2 cmd=$3
  shift 3
  local rc
  if [ "$ranks" = 0 ]; then
    # shellcheck disable=SC2086
    timeout -s KILL 60 $cmd > "$out" 2>&1
  else
    # shellcheck disable=SC2086
    timeout -s KILL 60 "$loomrun" -n "$ranks" $cmd > "$out" 2>&1
  fi
  rc=$?
  local bad=""
  [ "$rc" = "$status" ] || bad="exit status $rc, expected $status"
  for re in "$@"; do
    if [[ $re == !* ]]; then
      grep -qE -- "${re:1}" "$out" && bad="$bad; a line matches /${re:1}/"
    else
      grep -qE -- "$re" "$out" || bad="$bad; no line matches /$re/"
    fi
  done
  if [ -n "$bad" ]; then
    echo "FAIL: [$ranks ranks] $cmd: $bad"
    sed 's/^/    | /' "$out" | head -40
    failures=$((failures + 1))
  else
    echo "ok: [$ranks ranks] $cmd"
  fi
}

P=$build/perf
num='[0-9.e+]+'
# One result row: size count type redop root, then time algbw busbw #wrong twice.
row() { echo "^ +$1 +$2 +$3 +$4 +$5( +$num +$num +$num +$6){2}$"; }

# Defaults: -w 1, -n 20, and -i 1M stepping when -f is absent.
expect 2 0 "$P/all_reduce_perf -b 8 -e 2M" \
  'step: 1048576\(bytes\) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0$' \
  "$(row 8 2 float sum -1 0)" "$(row 1048584 262146 float sum -1 0)" '!^ +2097160 '
expect 2 0 "$P/all_reduce_perf -b 1K -e 3K -i 1K -n 2" "$(row 1024 256 float sum -1 0)" \
  "$(row 2048 512 float sum -1 0)" "$(row 3072 768 float sum -1 0)"
# Size strings: fractions and a trailing B.
expect 2 0 "$P/all_reduce_perf -b 1.5K -e 3KB -f 2 -n 2" 'minBytes 1536 maxBytes 3072 step: 2\(factor\)' \
  "$(row 1536 384 float sum -1 0)" "$(row 3072 768 float sum -1 0)"
# Per-rank counts, sizes rounded down to 16-byte blocks per rank (getCollByteCount).
expect 4 0 "$P/all_gather_perf -b 1000 -e 1000 -n 2 -d int8" "$(row 960 240 int8 none -1 0)"
expect 4 0 "$P/all_gather_perf -b 1000 -e 1000 -n 2 -d double -o max -r 1" "$(row 960 30 double none -1 0)"
expect 3 0 "$P/reduce_scatter_perf -b 1000 -e 1000 -n 2 -o max" "$(row 960 80 float max -1 0)"
expect 3 0 "$P/alltoall_perf -b 1000 -e 1000 -n 2 -d int32" "$(row 960 80 int32 none -1 0)"
expect 3 0 "$P/broadcast_perf -b 64 -e 64 -n 2 -r 2 -o prod" "$(row 64 16 float none 2 0)"
expect 3 0 "$P/reduce_perf -b 64 -e 64 -n 2 -r -1 -o min" "$(row 64 16 float min 0 0)" "$(row 64 16 float min 2 0)"
# SendRecv names -o's op, as nccl-tests does.
expect 2 0 "$P/sendrecv_perf -b 64 -e 64 -n 2 -o all" "$(row 64 16 float sum -1 0)" "$(row 64 16 float avg -1 0)"
# -c 0: #wrong reads N/A; -c 3 checks three times.
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -c 0" 'validation: 0' "$(row 64 16 float sum -1 N/A)" \
  '^ +64 +16 +float +sum +-1 +[^ ]+ +[^ ]+ +[^ ]+    N/A +[^ ]+ +[^ ]+ +[^ ]+    N/A$'
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -c 3" 'validation: 3' "$(row 64 16 float sum -1 0)"
# Blocking modes, aggregation, cycles, unalignment, averaging, registration.
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -z 1" '^# Blocking Enabled: wait and barrier after each inner iteration \(-m\) $'
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -z 2" '^# Blocking Enabled: wait after each inner iteration \(-m\), no barrier $'
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -z 3 -m 3" 'agg iters: 3 ' \
  '^# Blocking Enabled: wait and barrier after each outer iteration \(-n\); time excludes barrier $' "$(row 64 16 float sum -1 0)"
expect 2 0 "$P/all_reduce_perf -b 64 -e 128 -f 2 -n 2 -N 2 -a 3" "$(row 128 32 float sum -1 0)"
[ "$(grep -cE '^ +(64|128) ' "$out")" = 4 ] || { echo "FAIL: -N 2 printed $(grep -cE '^ +(64|128) ' "$out") rows, not 4"; failures=$((failures + 1)); }
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -u 3 -d all -a 0" 'unalign: 3$' "$(row 64 8 double sum -1 0)" \
  "$(row 64 64 int8 sum -1 0)"
expect 3 0 "$P/all_gather_perf -b 8K -e 64K -f 8 -n 3 -R 1" 'host registered memory' "$(row 65520 5460 float none -1 0)"
# -C 1: the cputime header; -S 1: a timestamp column.
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -C 1" '^#       size +count +type +redop +root +cputime +algbw +busbw +#wrong +cputime '
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -S 1" ' #wrong           timestamp$' \
  '^ +64 +16 .* [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$'
# Cache-cold by default; cache-hot on request, and said so.
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 --cache_hot 1" '^# Buffers: cache-hot \(--cache_hot 1\)' '!cache-cold'
# GPU-only and thread flags: accepted, one line each says so.
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -t 2 -g 2 -p 1 -y 1 -G 5 -M 1 -x 1 -D 1 -V 16 -I 1 -K 1" \
  '^# Option -t 2 ignored: one rank per process' '^# Option -g 2 ignored: GPU-only' '^# Option -G 5 ignored: GPU-only' \
  '^# Option -y 1 ignored' '^# Option -x 1 ignored' '^# Option -D 1 ignored' '^# Option -V 16 ignored' \
  '^# Option -M 1 ignored' '^# Option -I 1 ignored' '^# Option -p 1 ignored' "$(row 64 16 float sum -1 0)"
expect 2 0 "$P/all_reduce_perf --minbytes 64 --maxbytes 64 --iters 2 --warmup_iters 0 --check 1 --op max --datatype int32 --blocking 0 --average 2 --run_cycles 1 --agg_iters 1 --unalign 0 --local_register 0 --report_cputime 0 --report_timestamps 0 --cudagraph 0 --stream_null 0 --nthreads 1 --ngpus 1 --parallel_init 0 --memory 0 --stepfactor 2 --stepbytes 1M --timeout 30 --root 0" \
  "$(row 64 16 int32 max -1 0)"
# nccl-tests' notices for unknown types and ops (Loom has no mulsum), then float/sum.
expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2 -d complex -o mulsum" '^invalid type complex, defaulting to float \.\. $' \
  '^invalid op mulsum, defaulting to sum \.\. $' "$(row 64 16 float sum -1 0)"
# Bad values: a sentence, status 255; unknown options: usage, status 0 (as nccl-tests).
expect 0 255 "$P/all_reduce_perf -b 1X" "invalid size specified for 'minbytes'"
expect 0 255 "$P/all_reduce_perf -b 2K -e 1K" "invalid sizes for 'minbytes' and 'maxbytes': 2048 > 1024"
expect 0 255 "$P/all_reduce_perf -z 7" "invalid value '7' for -z"
expect 0 255 "$P/all_reduce_perf -b 0 -e 1K -f 2" 'would never grow'
expect 0 0 "$P/all_reduce_perf --bogus" "unrecognized option '--bogus'" "^invalid option '\?'$" '^USAGE: all_reduce_perf'
expect 0 0 "$P/all_reduce_perf -h" '^USAGE: all_reduce_perf' 'per_iter_timing'
# A root the communicator lacks: the library refuses, status 3 (a failed call).
expect 2 3 "$P/broadcast_perf -b 64 -e 64 -r 5" 'only 2 ranks'

# Wrong results: every check that finds wrong data counts, status 7.
export LOOM_PERF_TEST_CORRUPT=1
expect 2 7 "$P/all_reduce_perf -b 8 -e 1K -f 4 -n 2 -c 2" "$(row 8 2 float sum -1 1)" "$(row 512 128 float sum -1 1)" \
  '^# Out of bounds values : 8 FAILED$'
expect 3 7 "$P/all_gather_perf -b 1K -e 1K -n 2" '^# Out of bounds values : 2 FAILED$'
unset LOOM_PERF_TEST_CORRUPT
# nccl-tests' bandwidth gate.
NCCL_TESTS_MIN_BW=1000000 expect 2 7 "$P/all_reduce_perf -b 64 -e 64 -n 2" '^# Avg bus bandwidth    : [0-9.e+-]+ FAILED$'
NCCL_TESTS_MIN_BW=0 expect 2 0 "$P/all_reduce_perf -b 64 -e 64 -n 2" '^# Avg bus bandwidth    : [0-9.e+-]+ OK$'

# -J: nccl-tests' JSON (version 3); never over an existing file; only *.json.
json=$tmp/r.json
expect 2 0 "$P/reduce_scatter_perf -b 1K -e 2K -f 2 -n 2 -c 0 -J $json" "^# Writing JSON output to $json\$"
expect 2 0 "$P/reduce_scatter_perf -b 1K -e 1K -n 2 -J $json" "^# Writing JSON output to $json.0\$"
expect 2 0 "$P/reduce_scatter_perf -b 1K -e 1K -n 2 -J $tmp/r.txt" '!Writing JSON'
[ ! -e "$tmp/r.txt" ] || { echo "FAIL: -J r.txt wrote a file"; failures=$((failures + 1)); }
if python3 - "$json" "$json.0" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = ["version", "start_time", "args", "env", "nccl_version", "config", "results", "out_of_bounds",
        "average_bus_bandwidth", "errors", "end_time"]
assert list(d) == keys, list(d)
assert d["version"] == 3
c = d["config"]
assert list(c)[:5] == ["nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "step_factor"], list(c)
assert c["validation"] == 0 and c["blocking_collectives"] == "false" and len(c["devices"]) == 2
assert set(c["devices"][0]) == {"rank", "group", "pid", "hostname", "device", "device_hex", "device_info"}
r = d["results"]
assert [x["size"] for x in r] == [1024, 2048] and [x["count"] for x in r] == [128, 256], r
assert r[0]["type"] == "float" and r[0]["redop"] == "sum" and r[0]["root"] == "    -1"
assert list(r[0]) == ["size", "count", "type", "redop", "root", "out_of_place", "in_place", "actual_iterations",
                      "experiment_name"]
assert list(r[0]["out_of_place"]) == ["time", "alg_bw", "bus_bw", "nwrong"] and r[0]["in_place"]["nwrong"] is None
assert d["out_of_bounds"] == {"count": 0, "okay": "true"}
assert d["average_bus_bandwidth"]["okay"] == "unchecked"
assert json.load(open(sys.argv[2]))["results"][0]["out_of_place"]["nwrong"] == 0.0
PY
then echo "ok: -J writes nccl-tests' JSON schema"; else echo "FAIL: JSON schema"; failures=$((failures + 1)); fi

# -N 0 runs until stopped: stopped once it has printed 3 rows (30 s at most:
# a busy machine may take seconds over its start).
"$P/all_reduce_perf" -b 64 -e 64 -n 2 -N 0 > "$out" 2>&1 &
endless=$!
rows=0
for _ in $(seq 300); do
  rows=$(grep -cE '^ +64 +16 ' "$out" || true)
  [ "$rows" -gt 2 ] && break
  sleep 0.1
done
kill -TERM "$endless" 2>/dev/null || true
wait "$endless" 2>/dev/null || true
[ "$rows" -gt 2 ] && echo "ok: -N 0 repeated $rows times until stopped" || { echo "FAIL: -N 0: $rows rows"; failures=$((failures + 1)); }

[ $failures = 0 ] || { echo "$failures failures"; exit 1; }
echo "all ok"
