#!/usr/bin/env bash
# The cost model's network follows the links' rate, as each host's kernel
# gives it (bootstrap/link_rate.h): on 2 fake hosts of 2 ranks whose links
# tbf shapes to 1 Gbit/s, every rank's TCP line names its link's rate, rank
# 0 says the slowest and what the model's network then moves (TCP's share,
# 110 bytes/us, as the built-in 1100 are of 10 Gbit/s),
# and the estimates of the TUNING line are those `loom-topo --plan` gives
# with a tuning file of that bandwidth; unshaped, the veths' speed; a
# tuning file's bandwidth stays; a NIC's speed is the one sysfs gives
# (where NCCL's socket transport reads it); and a link whose kernel gives
# no rate (loopback) leaves the built-in one, saying so.
#
# Usage: network_rate_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf /path/to/loom-topo
set -euo pipefail

TOPO=${4:-}
[[ -x $TOPO ]] || { echo "usage: $0 /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf /path/to/loom-topo" >&2; exit 2; }
# shellcheck source=one_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/one_job.sh" "$1" "$2" "$3"
HOSTS_SCRIPT=$1
LOOMRUN=$2
PERF=$3
export LOOM_TIMEOUT_MS=20000
export LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=INIT,TUNING

# job ARGS...: one AllReduce of 1 MiB checked (-c 1) on 2 hosts of 2 ranks.
job() {
  local status=0
  bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" --hosts 2 -n 2 --timeout 90 "$@" -- "$PERF" -b 1M -e 1M -n 2 -w 1 -c 1 \
    >"$WORK/out" 2>&1 || status=$?
  [[ $status -eq 0 ]] || fail "loom-hosts.sh $* exited $status"
  grep -q '^# Out of bounds values : 0 OK' "$WORK/out" || fail "$*: the AllReduce was not correct"
}
expect() { grep -Eq -- "$1" "$WORK/out" || fail "no line matches /$1/"; }
# estimates FILE: "ring 12629.4 tree ..." from the first AllReduce line of 1 MiB (TUNING or --plan).
estimates() {
  grep -m1 -E 'TUNING AllReduce of 1048576 bytes|^  1 MiB ' "$1" | grep -oE '(ring|tree|halvingdoubling|hierarchical) [0-9.]+' |
    tr '\n' ' '
}

# --- shaped to 1 Gbit/s -----------------------------------------------------------
job --rate 1gbit
[[ $(grep -cE "LOOM INFO INIT TCP: using eth0:[0-9.]+<[0-9]+> \(.*\), link tbf 1000 Mbit/s \((speed [0-9]+ Mb/s|no speed)\)$" "$WORK/out") -eq 4 ]] ||
  fail "not every rank named its link's tbf rate"
expect "\[0\] LOOM INFO INIT network: the slowest link is rank [0-3]'s, 1000 Mbit/s; the cost model's network moves 110 bytes/us \(TCP's share of that rate\)$"
cp "$WORK/out" "$WORK/shaped"
printf 'network bytes_per_us 110\n' >"$WORK/110.tuning"
LOOM_DEBUG= LOOM_TUNING_FILE="$WORK/110.tuning" "$TOPO" --plan --hosts 2,2 >"$WORK/out" 2>&1 || fail "--plan exited $?"
runtime=$(estimates "$WORK/shaped")
planned=$(estimates "$WORK/out")
[[ -n $runtime ]] || fail "no TUNING line for the 1 MiB AllReduce"
# --plan prints 4 or 5 significant digits, the TUNING line one decimal: within 0.1%.
paste <(tr ' ' '\n' <<<"$runtime" | awk 'NR % 2 == 0') <(tr ' ' '\n' <<<"$planned" | awk 'NR % 2 == 0') |
  awk 'NF == 2 { n++; if ($1 / $2 > 1.001 || $1 / $2 < 0.999) bad = 1 } END { exit !(n == 4 && !bad) }' ||
  fail "the 1 MiB estimates ($runtime) are not --plan's with network bytes_per_us 110 ($planned)"
echo "PASS: shaped to 1 Gbit/s: every rank names its link's rate, and the model's network moves 110 bytes/us"

# --- unshaped: the veths' speed ---------------------------------------------------
job
expect "LOOM INFO INIT TCP: using eth0:.*, link (speed [0-9]+ Mb/s|no speed \(the kernel gives none for eth0\))$"
if speed=$(grep -m1 -oE 'link speed [0-9]+ Mb/s$' "$WORK/out"); then
  mbps=$(grep -oE '[0-9]+' <<<"$speed")
  expect "network: the slowest link is rank [0-3]'s, $mbps Mbit/s; the cost model's network moves $(awk -v m="$mbps" 'BEGIN { printf "%g", m / 8 * 1100 / 1250 }') bytes/us \(TCP's share of that rate\)$"
fi
echo "PASS: unshaped: the veths' ${speed:-rate, none given}"

# --- a tuning file's bandwidth stays ------------------------------------------------
printf 'network bytes_per_us 77\n' >"$WORK/77.tuning"
LOOM_TUNING_FILE="$WORK/77.tuning" job --rate 1gbit
expect "\[0\] LOOM INFO INIT network: the slowest link is rank [0-3]'s, 1000 Mbit/s; the cost model's network moves 77 bytes/us \(LOOM_TUNING_FILE's\)$"
echo "PASS: LOOM_TUNING_FILE's network bandwidth stays"

# --- the speed NCCL's socket transport reads: /sys/class/net/<if>/speed -------------------
# A namespace of its own with a veth pair, whose sysfs `ip netns exec`
# mounts for it: the speed Loom's TCP line names is the one sysfs gives.
ns=loomrate$$
trap 'ip netns delete "$ns" 2>/dev/null || true; rm -rf "$WORK"' EXIT
ip netns add "$ns" && ip -n "$ns" link set lo up && ip -n "$ns" link add rate0 type veth peer name rate1 &&
  ip -n "$ns" addr add 198.18.250.1/24 dev rate0 && ip -n "$ns" link set rate0 up && ip -n "$ns" link set rate1 up ||
  fail "cannot make the namespace $ns with a veth pair"
for _ in $(seq 50); do # until rate0 is running (carrier), 5 s at most
  [[ $(ip netns exec "$ns" cat /sys/class/net/rate0/operstate) == up ]] && break
  sleep 0.1
done
sysfs_speed=$(ip netns exec "$ns" cat /sys/class/net/rate0/speed)
[[ $sysfs_speed =~ ^[1-9][0-9]*$ ]] || fail "sysfs gives no speed for a veth ('$sysfs_speed')"
ip netns exec "$ns" env LOOM_TRANSPORTS=tcp LOOM_SOCKET_IFNAME==rate0 "$LOOMRUN" -n 2 --timeout 60 "$PERF" -b 8 -e 8 -n 2 -w 1 -c 1 \
  >"$WORK/out" 2>&1 || fail "TCP over a veth exited $?"
expect "LOOM INFO INIT TCP: using rate0:198\.18\.250\.1<[0-9]+> .*, link speed $sysfs_speed Mb/s$"
ip netns delete "$ns"
echo "PASS: the veth's speed is sysfs's, $sysfs_speed Mb/s, as NCCL reads it"

# --- a link without a rate: TCP over loopback on one host -----------------------------
LOOM_TRANSPORTS=tcp LOOM_SOCKET_IFNAME=lo "$LOOMRUN" -n 2 --timeout 60 "$PERF" -b 8 -e 8 -n 2 -w 1 -c 1 >"$WORK/out" 2>&1 ||
  fail "TCP over loopback exited $?"
expect "LOOM INFO INIT TCP: using lo:.*, link no speed \(the kernel gives none for lo\)$"
expect "\[0\] LOOM INFO INIT network: rank 0's interface gives no rate; the cost model's network moves 1100 bytes/us \(built in\)$"
echo "PASS: loopback gives no rate: the built-in network stays"
