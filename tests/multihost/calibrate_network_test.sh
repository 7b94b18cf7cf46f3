#!/usr/bin/env bash
# loom-topo --calibrate-network across fake hosts (scripts/loom-hosts.sh):
# on hosts of 2 and 1 ranks whose link is shaped to 1 Gbit/s, the first rank
# of each host measures the ring; the file it writes holds a network
# bandwidth near the shaped rate, keeps the shared-memory constants the
# file had and the built-in cost per message (two hosts cannot measure it);
# --plan loads it. Three hosts measure the cost per message too. A file
# that is no tuning file, and a job on one host, are refused with a
# sentence.
#
# Usage: calibrate_network_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/loom-topo
set -euo pipefail

if [[ $# -ne 3 || ! -f $1 || ! -x $2 || ! -x $3 ]]; then
  echo "usage: $0 /path/to/loom-hosts.sh /path/to/loomrun /path/to/loom-topo" >&2
  exit 2
fi
HOSTS_SCRIPT=$1
LOOMRUN=$2
TOPO=$3
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$HERE/prerequisites.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() {
  echo "FAIL: $*" >&2
  sed 's/^/  | /' "$WORK/out" >&2 || true
  exit 1
}

printf '# seeded\nshm latency_us 1.25\n' >"$WORK/cal.tuning"
timeout -s KILL 240 bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" --ranks 2,1 --rate 1gbit --timeout 200 -- \
  "$TOPO" --no-versions --calibrate-network "$WORK/cal.tuning" >"$WORK/out" 2>&1 || fail "--calibrate-network exited $?"
[[ $(grep -c '^== Network calibration' "$WORK/out") -eq 1 ]] || fail "not exactly one rank reported"
grep -Eq '^measured between 2 hosts' "$WORK/out" || fail "no measurement line"
grep -q '^shm latency_us 1.25$' "$WORK/cal.tuning" || fail "the file's shared-memory latency was not kept"
rate=$(awk '$1 == "network" && $2 == "bytes_per_us" {print $3}' "$WORK/cal.tuning")
latency=$(awk '$1 == "network" && $2 == "latency_us" {print $3}' "$WORK/cal.tuning")
# 1 Gbit/s is 125 bytes per microsecond on the wire; TCP's headers take
# some, tbf's burst lets the first bytes of a run through faster, and a
# busy machine stretches the times either way. An unshaped veth moves
# thousands.
awk -v r="$rate" 'BEGIN { exit !(r >= 40 && r <= 250) }' || fail "network bytes_per_us $rate is not near 1 Gbit/s (125)"
awk -v l="$latency" 'BEGIN { exit !(l > 0 && l < 10000) }' || fail "network latency_us $latency is not a latency"
grep -q '^network message_us 5$' "$WORK/cal.tuning" || fail "two hosts changed the cost per message"
echo "ok: 1 Gbit/s measured as $rate bytes/us, latency $latency us; shm kept"
LOOM_TUNING_FILE="$WORK/cal.tuning" "$TOPO" --plan --hosts 4,4 >"$WORK/out" 2>&1 || fail "--plan with the file exited $?"
grep -q "constants from LOOM_TUNING_FILE=$WORK/cal.tuning" "$WORK/out" || fail "--plan did not name the file"

# Three hosts: all-pairs among them gives the cost of a further message
# (the shaped link keeps the bandwidth's fit clear of the latency's noise).
timeout -s KILL 240 bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" --ranks 1,2,1 --rate 1gbit --timeout 200 -- \
  "$TOPO" --no-versions --calibrate-network "$WORK/three.tuning" >"$WORK/out" 2>&1 || fail "--calibrate-network on 3 hosts exited $?"
grep -Eq '^measured between 3 hosts' "$WORK/out" || fail "3 hosts: no measurement line"
grep -Eq '^all-pairs AllReduce of 8 B: [0-9.e+]+ microseconds per call$' "$WORK/out" || fail "3 hosts: no all-pairs line"
message=$(awk '$1 == "network" && $2 == "message_us" {print $3}' "$WORK/three.tuning")
[[ -n $message && $message != 5 ]] || fail "3 hosts: the cost per message ($message) was not measured"
echo "ok: 3 hosts: $message us per further message"

# A file that is no tuning file: refused before anyone measures.
printf 'not a tuning file\n' >"$WORK/bad.tuning"
rc=0
timeout -s KILL 120 bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" --ranks 1,1 --timeout 60 -- \
  "$TOPO" --no-versions --calibrate-network "$WORK/bad.tuning" >"$WORK/out" 2>&1 || rc=$?
((rc != 0)) || fail "--calibrate-network took a file that is no tuning file"
grep -q "is not a tuning file to update: remove it or name another file" "$WORK/out" || fail "no sentence for the bad file"
grep -qx 'not a tuning file' "$WORK/bad.tuning" || fail "the bad file was changed"

# Every rank on one host: nothing to measure between hosts.
rc=0
timeout -s KILL 120 "$LOOMRUN" -n 2 "$TOPO" --no-versions --calibrate-network "$WORK/one.tuning" >"$WORK/out" 2>&1 || rc=$?
((rc != 0)) || fail "--calibrate-network on one host exited 0"
grep -q "found every rank on one host" "$WORK/out" || fail "no sentence for one host"
[[ ! -e $WORK/one.tuning ]] || fail "a file was written from one host"
echo "PASS: --calibrate-network across fake hosts; bad file and one host refused"
