#!/usr/bin/env bash
# The rendezvous's subnet picks the NIC, as NCCL_COMM_ID's does for NCCL:
# every fake host has a NIC that reaches no other host, mgmt0, before eth0
# in its interface order (loom-hosts.sh --decoy-nic), and LOOM_SOCKET_IFNAME
# unset. NCCL's default order alone takes mgmt0; the subnet of MASTER_ADDR
# (on host 0's eth0) takes eth0:
#   IPv4                        both ranks on eth0, and the INFO line says why;
#   IPv6 (--ipv6)               both on eth0's IPv6 address, though IPv4
#                               otherwise comes first: the families must match;
#   LOOM_SOCKET_IFNAME='^lo'    a list turns the step off: mgmt0, and the job
#                               fails (the decoy is real).
#
# Usage: socket_subnet_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf
set -euo pipefail

# shellcheck source=one_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/one_job.sh" "$@"
need_ipv6
export LOOM_TIMEOUT_MS=20000 LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=INIT
unset LOOM_SOCKET_FAMILY LOOM_SOCKET_IFNAME

# run [LOOM-HOSTS OPTIONS]: 2 hosts of 1 rank with the decoy NIC; sets status.
run() {
  status=0
  bash "$HOSTS" --loomrun "$LOOMRUN" --decoy-nic "$@" --hosts 2 -n 1 --timeout 30 -- \
    "$PERF" -b 8 -e 64K -f 8 -c 1 >"$WORK/out" 2>&1 || status=$?
}
HOSTS=$1 LOOMRUN=$2 PERF=$3

# expect_eth0 WHAT ADDRESS-REGEX MASTER-REGEX: a correct AllReduce, both
# ranks on eth0 at such an address, chosen for MASTER_ADDR's subnet.
expect_eth0() {
  local what=$1 address=$2 master=$3 using links
  [[ $status -eq 0 ]] || fail "$what: loom-hosts.sh exited $status"
  grep -q '^# Out of bounds values : 0 OK' "$WORK/out" || fail "$what: no correct AllReduce"
  using=$(grep -Ec "TCP: using eth0:$address<[0-9]+> \(same subnet as the rendezvous $master, LOOM_SOCKET_IFNAME unset\)" "$WORK/out" || true)
  [[ $using -eq 2 ]] || fail "$what: expected both ranks on eth0 for the rendezvous's subnet, found $using"
  links=$(grep -Ec 'LOOM INFO INIT [01]\[host[01]\] -> [01]\[host[01]\] \(pid [0-9]+\) via TCP/eth0 ' "$WORK/out" || true)
  [[ $links -eq 2 ]] || fail "$what: expected 2 INFO lines 'via TCP/eth0', found $links"
}

run
expect_eth0 IPv4 '198\.1[89]\.[0-9]+\.[12]' '198\.1[89]\.[0-9]+\.1'
echo "PASS: IPv4 MASTER_ADDR: eth0, on its subnet, not mgmt0 before it"

run --ipv6
expect_eth0 IPv6 '2001:2:[0-9a-f:]+' '2001:2:[0-9a-f:]+'
echo "PASS: IPv6 MASTER_ADDR: eth0's IPv6 address, on its subnet"

# Fails by design, at its TCP connections' timeout: a short one, though
# long enough for both hosts' ranks to meet at the rendezvous first.
LOOM_SOCKET_IFNAME='^lo' LOOM_TIMEOUT_MS=5000 run
[[ $status -ne 0 ]] || fail "'^lo': the job ran, though mgmt0 (first) reaches no other host"
grep -Eq "TCP: using mgmt0:198\.1[89]\.[0-9]+\.[12]<[0-9]+> \(LOOM_SOCKET_IFNAME='\^lo'\)" "$WORK/out" ||
  fail "'^lo': no rank said it uses mgmt0"
echo "PASS: with a list the step is off: mgmt0, which reaches nothing"
