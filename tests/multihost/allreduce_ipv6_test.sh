#!/usr/bin/env bash
# AllReduce across 2 fake hosts of 2 ranks over IPv6: loom-hosts.sh --ipv6
# gives every eth0 an address in 2001:2::/48 and puts MASTER_ADDR on host 0's,
# and LOOM_SOCKET_FAMILY=AF_INET6 keeps the TCP connections between hosts
# on IPv6 too. The INFO lines must name the interface of every connection
# (via TCP/eth0) and the IPv6 address each rank listens on.
#
# Usage: allreduce_ipv6_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf
set -euo pipefail

# shellcheck source=one_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/one_job.sh" "$@"
need_ipv6
# A rank that cannot reach another fails within seconds, not 10 minutes.
export LOOM_TIMEOUT_MS=20000
export LOOM_SOCKET_FAMILY=AF_INET6 LOOM_SOCKET_IFNAME='=eth0' LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=INIT

status=0
bash "$1" --loomrun "$2" --ipv6 --hosts 2 -n 2 --timeout 90 -- "$3" -b 8 -e 1M -f 4 -c 1 >"$WORK/out" 2>&1 || status=$?
[[ $status -eq 0 ]] || fail "loom-hosts.sh exited $status"
grep -q '^# Out of bounds values : 0 OK' "$WORK/out" || fail "no correct AllReduce across the hosts"
grep -Eq '^loom-hosts: host0 198\.1[89]\.[0-9]+\.1 2001:2:[0-9a-f:]+ ranks 0-1 ' "$WORK/out" ||
  fail "host0 has no address in 2001:2::/48"
# Every rank has 2 peers on the other host: 8 TCP links, each named by its interface.
links=$(grep -Ec 'LOOM INFO INIT [0-3]\[host[01]\] -> [0-3]\[host[01]\] \(pid [0-9]+\) via TCP/eth0 \(1 socket\)' "$WORK/out" || true)
[[ $links -eq 8 ]] || fail "expected 8 INFO lines 'via TCP/eth0 (1 socket)', found $links"
! grep -E 'via TCP/' "$WORK/out" | grep -vq 'via TCP/eth0 ' || fail "a TCP link names another interface"
# Each rank says where it listens, as NCCL's "NET/Socket : Using eth0:addr<port>".
using=$(grep -Ec "TCP: using eth0:2001:2:[0-9a-f:]+<[0-9]+> \(LOOM_SOCKET_IFNAME='=eth0', LOOM_SOCKET_FAMILY=AF_INET6\)" "$WORK/out" || true)
[[ $using -eq 4 ]] || fail "expected 4 ranks to listen on eth0's IPv6 address, found $using"
! grep -q 'TCP: using eth0:198\.' "$WORK/out" || fail "a rank listens on IPv4 despite LOOM_SOCKET_FAMILY=AF_INET6"
echo "PASS: AllReduce over IPv6 between 2 fake hosts of 2 ranks each, every link named TCP/eth0"
