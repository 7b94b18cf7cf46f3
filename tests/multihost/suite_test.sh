#!/usr/bin/env bash
# Every collective of the perf suite, checked (-c 1: nccl-tests' exact
# check, in place and out of place), across fake hosts (scripts/loom-hosts.sh):
# shared memory inside a host, TCP between hosts, and rings that cross the
# bridge once per host. Every dtype and every op for the reducing
# collectives, sizes from 8 B to many laps of small FIFOs.
#
# Usage: suite_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/perf-dir RANKS_PER_HOST
#   RANKS_PER_HOST: as loom-hosts.sh --ranks, e.g. 2,2,2 or 1,2,3
set -euo pipefail

if [[ $# -ne 4 || ! -f $1 || ! -x $2 || ! -d $3 || ! $4 =~ ^[1-9](,[1-9])*$ ]]; then
  echo "usage: $0 /path/to/loom-hosts.sh /path/to/loomrun /path/to/perf-dir RANKS_PER_HOST (like 2,2,2)" >&2
  exit 2
fi
HOSTS_SCRIPT=$1
LOOMRUN=$2
PERF_DIR=$(cd "$3" && pwd)
LAYOUT=$4
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$HERE/prerequisites.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export LOOM_TIMEOUT_MS=30000
# Small FIFOs (4 slots of 4 KiB), so that the larger sizes below take many
# laps of every FIFO and TCP's stripes: the same paths as large messages at
# a fraction of the time. On two hosts an AllReduce in steps then goes in
# segments of 8 KiB (half a TCP FIFO), overlapped, from 16 KiB per lane.
export LOOM_SHM_SLOT_BYTES=4096 LOOM_SHM_SLOTS=4 LOOM_SOCKET_SLOT_BYTES=4096 LOOM_SOCKET_SLOTS=4

# One communicator per program, one program after another on every rank.
# Each writes its own report; a failed check ends the rank's loop.
SIZES="-b 8 -e 32K -f 16 -w 1 -n 1 -c 1"
script='
set -e
out=$1
shift
for program in all_reduce reduce_scatter reduce; do
  "$PERF_DIR/${program}_perf" $SIZES -d all -o all >"$out/$program.$RANK" 2>&1
done
for program in all_gather broadcast alltoall sendrecv; do
  "$PERF_DIR/${program}_perf" $SIZES -d all >"$out/$program.$RANK" 2>&1
done
'
status=0
export PERF_DIR SIZES
timeout -s KILL 600 \
  bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" --ranks "$LAYOUT" --timeout 500 -- \
  bash -c "$script" suite "$WORK" >"$WORK/log" 2>&1 || status=$?

ranks=$(($(tr ',' '+' <<<"$LAYOUT")))
failures=0
for program in all_reduce reduce_scatter reduce all_gather broadcast alltoall sendrecv; do
  report=$WORK/$program.0
  if [[ ! -f $report ]]; then
    echo "FAIL: $program did not run (an earlier program failed)" >&2
    failures=$((failures + 1))
    continue
  fi
  if ! grep -q '^# Out of bounds values : 0 OK' "$report"; then
    echo "FAIL: $program across hosts $LAYOUT:" >&2
    sed 's/^/  | /' "$report" | tail -n 30 >&2
    failures=$((failures + 1))
    continue
  fi
  grep -Eq "^#  Rank +$((ranks - 1)) Group" "$report" || { echo "FAIL: $program did not list rank $((ranks - 1))" >&2; failures=$((failures + 1)); }
  echo "ok: $program: $(grep -c '^ *[0-9]' "$report") size/type/op rows checked, in and out of place"
done
if ((status != 0 || failures != 0)); then
  echo "--- loom-hosts.sh exited $status:" >&2
  tail -n 40 "$WORK/log" >&2
  exit 1
fi
echo "PASS: every collective exact across fake hosts $LAYOUT"
