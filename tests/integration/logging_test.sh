#!/usr/bin/env bash
# The log as a user of NCCL_DEBUG expects it, from a real 3-rank job:
# LOOM_DEBUG_FILE with %h and %p (one file per process), the banner as the
# first line, LOOM_* variables echoed (the secret's value hidden), line
# prefixes with timestamp and host:pid:tid [rank], TUNING lines, subsystem
# exclusion with ^, and LOOM_DEBUG=VERSION printing the banner alone.
# Usage: logging_test.sh LOOMRUN C_API_PROGRAM VERSION
set -euo pipefail
loomrun=$1
program=$2
version=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
host=$(hostname)

LOOM_DEBUG=info LOOM_DEBUG_FILE="$dir/loom.%h.%p.log" LOOM_TIMEOUT_MS=120000 \
  "$loomrun" -n 3 --timeout 120 "$program" > "$dir/stdout" 2> "$dir/stderr" || fail "the job failed: $(cat "$dir/stderr")"
files=("$dir"/loom."$host".*.log)
[ "${#files[@]}" -eq 3 ] || fail "expected one log file per rank named loom.$host.PID.log, found: $(ls "$dir")"
[ ! -s "$dir/stderr" ] || fail "with LOOM_DEBUG_FILE nothing should reach stderr, got: $(head -3 "$dir/stderr")"

prefix='^\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\] [^:]+:[0-9]+:[0-9]+ \[([0-9]+|-)\] LOOM (WARN|INFO|TRACE) [A-Z]+ '
for f in "${files[@]}"; do
  pid=${f%.log}; pid=${pid##*.}
  head -n 1 "$f" | grep -qE "${prefix}Loom version $version \(.*hwloc [0-9]" || fail "$f: first line is not the banner: $(head -n 1 "$f")"
  bad=$(grep -vE "$prefix" "$f" || true)
  [ -z "$bad" ] || fail "$f: lines without the timestamp/host:pid:tid [rank] prefix: $bad"
  grep -qE "^\[[^]]*\] $host:$pid:[0-9]+ " "$f" || fail "$f: lines do not carry this process's pid $pid"
  grep -q "LOOM INFO ENV LOOM_DEBUG set by environment to info" "$f" || fail "$f: LOOM_DEBUG not echoed"
  grep -q "LOOM INFO ENV LOOM_DEBUG_FILE set by environment to $dir/loom.%h.%p.log" "$f" || fail "$f: LOOM_DEBUG_FILE not echoed"
  grep -q "LOOM INFO ENV LOOM_SECRET set by environment to (set, value not shown)" "$f" || fail "$f: LOOM_SECRET not echoed masked"
  grep -q "LOOM_SECRET=" "$f" && fail "$f: the secret's value leaked"
  grep -qE "LOOM INFO TUNING AllReduce of [0-9]+ bytes on 3 ranks: allpairs" "$f" || fail "$f: no TUNING line for AllReduce"
  [ "$(grep -c "TUNING AllReduce .*: allpairs" "$f")" -eq 1 ] || fail "$f: the AllReduce choice is logged more than once"
  grep -q "LOOM INFO INIT .*communicator ready" "$f" || fail "$f: no INIT line"
done
echo "ok: LOOM_DEBUG_FILE, banner, ENV echo, prefixes, TUNING"

# ^INIT drops INIT lines (the banner stays: it is what a report needs first).
LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS='^init' "$loomrun" -n 2 --timeout 120 "$program" > /dev/null 2> "$dir/excluded" ||
  fail "the ^init job failed"
grep -q "LOOM INFO TUNING" "$dir/excluded" || fail "^init dropped TUNING lines too"
[ "$(grep -c "LOOM INFO INIT" "$dir/excluded")" -eq 2 ] ||
  fail "^init should leave only the two banners as INIT lines: $(grep "LOOM INFO INIT" "$dir/excluded")"
echo "ok: LOOM_DEBUG_SUBSYS=^init"

# LOOM_ALGO in NCCL_ALGO's syntax: each collective takes what its entry
# allows, and the TUNING line says why; what nothing allowed can run takes
# the ring, saying so. The results are checked by the program itself.
LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=TUNING LOOM_ALGO='^ring,bruck,halvingdoubling;allreduce:halvingdoubling;broadcast:tree' \
  "$loomrun" -n 3 --timeout 120 "$program" > /dev/null 2> "$dir/algo" || fail "the LOOM_ALGO job failed: $(cat "$dir/algo")"
grep -qE "TUNING AllReduce of [0-9]+ bytes on 3 ranks: halvingdoubling \(the only one LOOM_ALGO allows\)" "$dir/algo" ||
  fail "no halvingdoubling AllReduce: $(cat "$dir/algo")"
grep -qE "TUNING Broadcast of [0-9]+ bytes on 3 ranks: tree \(the only one LOOM_ALGO allows\)" "$dir/algo" ||
  fail "no tree Broadcast: $(cat "$dir/algo")"
grep -qE "TUNING AllGather of [0-9]+ bytes on 3 ranks: ring \(LOOM_ALGO allows nothing that can run this call, so the ring runs it\)" "$dir/algo" ||
  fail "AllGather's fallback to the ring is not explained: $(cat "$dir/algo")"
! grep -qE "TUNING AllReduce .*: (ring|allpairs) " "$dir/algo" || fail "AllReduce took what LOOM_ALGO excluded: $(cat "$dir/algo")"
LOOM_ALGO='allgather:tree' "$loomrun" -n 2 --timeout 120 "$program" > /dev/null 2> "$dir/badalgo" && fail "LOOM_ALGO='allgather:tree' was accepted"
grep -q "LOOM_ALGO='allgather:tree': AllGather would have no algorithm left; AllGather runs with ring, halvingdoubling, bruck, direct, registered, hierarchical, hostleaders" "$dir/badalgo" ||
  fail "no sentence for LOOM_ALGO='allgather:tree': $(cat "$dir/badalgo")"
echo "ok: LOOM_ALGO per collective"

# VERSION: the banner, once per process, and nothing else.
LOOM_DEBUG=version "$loomrun" -n 2 --timeout 120 "$program" > /dev/null 2> "$dir/version" || fail "the VERSION job failed"
[ "$(grep -c "^Loom version $version (" "$dir/version")" -eq 2 ] || fail "VERSION printed: $(cat "$dir/version")"
[ "$(wc -l < "$dir/version")" -eq 2 ] || fail "VERSION printed more than the banners: $(cat "$dir/version")"
echo "ok: LOOM_DEBUG=VERSION"

# Bad values: a sentence on stderr, the job still runs.
LOOM_DEBUG=loud LOOM_DEBUG_SUBSYS=INIT,NETWORK "$loomrun" -n 2 --timeout 120 "$program" > /dev/null 2> "$dir/bad" ||
  fail "a bad LOOM_DEBUG stopped the job"
grep -q "LOOM_DEBUG='loud' is not one of NONE, VERSION, WARN, INFO, TRACE; using WARN" "$dir/bad" || fail "no sentence for LOOM_DEBUG=loud: $(cat "$dir/bad")"
echo "ok: bad values are named"

# An unwritable LOOM_DEBUG_FILE falls back to stderr, saying so.
LOOM_DEBUG=info LOOM_DEBUG_FILE=/nonexistent/dir/loom.log "$loomrun" -n 2 --timeout 120 "$program" > /dev/null 2> "$dir/nofile" ||
  fail "an unwritable LOOM_DEBUG_FILE stopped the job"
grep -q "LOOM_DEBUG_FILE: cannot open '/nonexistent/dir/loom.log' for writing" "$dir/nofile" || fail "no sentence for the unwritable file"
grep -q "LOOM INFO INIT Loom version" "$dir/nofile" || fail "lines did not fall back to stderr"
echo "PASS"
