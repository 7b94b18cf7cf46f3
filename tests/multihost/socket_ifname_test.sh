#!/usr/bin/env bash
# LOOM_SOCKET_IFNAME's lists across fake hosts (loom-hosts.sh passes the
# caller's list to every host), with IPv4 and IPv6 on every eth0 and
# LOOM_SOCKET_FAMILY unset:
#   '^lo,docker'  selects eth0, and its IPv4 address, which comes first;
#   '=eth'        selects nothing (names are exact), and init fails with a
#                 sentence naming the variable, its value and what is up.
#
# Usage: socket_ifname_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf
set -euo pipefail

# shellcheck source=one_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/one_job.sh" "$@"
need_ipv6
export LOOM_TIMEOUT_MS=20000 LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=INIT
unset LOOM_SOCKET_FAMILY

# run LIST: 2 hosts of 1 rank, with LOOM_SOCKET_IFNAME=LIST; sets status.
run() {
  status=0
  LOOM_SOCKET_IFNAME=$1 bash "$HOSTS" --loomrun "$LOOMRUN" --ipv6 --hosts 2 -n 1 --timeout 60 -- \
    "$PERF" -b 8 -e 64K -f 8 -c 1 >"$WORK/out" 2>&1 || status=$?
}
HOSTS=$1 LOOMRUN=$2 PERF=$3

run '^lo,docker'
[[ $status -eq 0 ]] || fail "'^lo,docker': loom-hosts.sh exited $status"
grep -q '^# Out of bounds values : 0 OK' "$WORK/out" || fail "'^lo,docker': no correct AllReduce"
links=$(grep -Ec 'LOOM INFO INIT [01]\[host[01]\] -> [01]\[host[01]\] \(pid [0-9]+\) via TCP/eth0 \(1 socket\)' "$WORK/out" || true)
[[ $links -eq 2 ]] || fail "'^lo,docker': expected 2 INFO lines 'via TCP/eth0 (1 socket)', found $links"
using=$(grep -Ec "TCP: using eth0:198\.1[89]\.[0-9]+\.[12]<[0-9]+> \(LOOM_SOCKET_IFNAME='\^lo,docker'\)" "$WORK/out" || true)
[[ $using -eq 2 ]] || fail "'^lo,docker': expected both ranks on eth0's IPv4 address (IPv4 first), found $using"
echo "PASS: LOOM_SOCKET_IFNAME='^lo,docker' runs over eth0, IPv4 first"

run '=eth'
[[ $status -ne 0 ]] || fail "'=eth': the job ran, though no interface is named exactly eth"
grep -Fq "LOOM_SOCKET_IFNAME='=eth' selects no interface that is up and running with an IPv4 or IPv6 address; interfaces up: lo (127.0.0.1, ::1), eth0 (198.1" "$WORK/out" ||
  fail "'=eth': no sentence naming the variable, its value and the interfaces that are up"
echo "PASS: LOOM_SOCKET_IFNAME='=eth' fails init naming the list and what is up"
