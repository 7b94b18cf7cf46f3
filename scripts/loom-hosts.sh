#!/usr/bin/env bash
# loom-hosts.sh: K fake hosts on this machine, and one Loom job across them.
#
#   scripts/loom-hosts.sh --hosts K -n M [options] [--] CMD [ARGS...]
#   scripts/loom-hosts.sh --ranks M0,M1,... [options] [--] CMD [ARGS...]
#
# Each fake host is what a real one is to Loom: its own network stack (a
# network namespace whose eth0, a veth, plugs into a bridge that lives in a
# namespace of its own, so the machine's own network is never touched), its
# own hostname (UTS namespace), its own /dev/shm (a tmpfs in a mount
# namespace) and its own processes (a PID namespace: Loom's shared memory
# is memfds opened through /proc/<pid>/fd, and without it two "hosts" could
# still meet through shared memory). Host k runs loomrun as node k of the
# job (--nnodes K --node-rank k) with MASTER_ADDR on host 0; --rate slows
# every host's link with tc, so that links are slower than shared memory;
# --ipv6 gives every eth0 an IPv6 address too, and MASTER_ADDR is host 0's;
# --decoy-nic puts a NIC that reaches no other host before every eth0.
#
# --driver keeps the hosts up, idle, while CMD runs on the machine itself
# and drives them: it runs programs in host k with "loom-hosts.sh --on k",
# and a launcher that the hosts must reach (mpirun) from the bridge's
# namespace, which then has an address of its own (perf/compare-hosts).
#
# Needs root, ip and tc (iproute2), and unshare and setpriv (util-linux).
# Every namespace is named loomh<pid of this script>-<host> (and -br for the
# bridge): all are removed when the script ends, and those of a run that was
# killed (kill -9) are swept by the next run.
set -uo pipefail

readonly PREFIX=loomh
readonly RUN=$$
readonly MAX_HOSTS=64
readonly MAX_RANKS=1024
# The bridge's namespace; hosts are ${PREFIX}${RUN}-<k>.
readonly BRIDGE_NS=${PREFIX}${RUN}-br
# loomrun's own timeout stops the ranks first; this much later the script
# gives up on a host (setup, loomrun's 3 s grace before SIGKILL).
readonly SAFETY_SECONDS=15
# Between SIGTERM to the hosts' loomruns and SIGKILL of whole hosts.
readonly STOP_GRACE_SECONDS=5
# Port of rank 0's rendezvous: host 0's network is fresh, so it is free.
readonly MASTER_PORT=29500

usage() {
  cat <<'EOF'
Usage: loom-hosts.sh --hosts K -n M [options] [--] CMD [ARGS...]
       loom-hosts.sh --ranks M0,M1,... [options] [--] CMD [ARGS...]
       loom-hosts.sh --hosts K --driver [options] [--] CMD [ARGS...]
       loom-hosts.sh --on K [--] CMD [ARGS...]      (inside a --driver's CMD)

Make K fake hosts on this machine and run CMD across them as one job: host k
runs "loomrun -n M --nnodes K --node-rank k" with MASTER_ADDR on host 0.
Each host has its own network namespace (eth0 on a bridge, an address in
198.18.0.0/15), hostname (host<k>), /dev/shm and PID namespace, and gets
LOOM_HOST_ID=host<k>, LOOM_SOCKET_IFNAME=eth0 (unless it is set: the
caller's list then goes to every host; with --decoy-nic, none) and the
job's LOOM_SECRET.

Options (before CMD):
  --hosts K          number of fake hosts, 1 to 64
  -n M               ranks on every host, 1 to 1024
  --ranks M0,M1,...  ranks on each host, for uneven layouts (K is the count)
  --rate RATE        limit each host's link, both ways, with tc tbf: a whole
                     number and a unit as tc writes it (bit, kbit, mbit, gbit,
                     tbit: bits per second; bps, kbps, mbps, gbps: bytes),
                     1kbps to 1tbit
  --ipv6             also give each host's eth0 an IPv6 address in 2001:2::/48
                     (RFC 5180's benchmarking range), without duplicate address
                     detection, and put MASTER_ADDR on host 0's IPv6 address;
                     LOOM_SOCKET_FAMILY=AF_INET6 then keeps TCP on IPv6 too
  --decoy-nic        give each host, before eth0 in its interface order, a
                     NIC mgmt0 (a veth pair of the host's own, mgmt0 and
                     mgmt1, linked to nothing else) with an IPv4 address on
                     a /24 other than eth0's, which reaches no other host:
                     NCCL's default order alone would take it, the subnet of
                     MASTER_ADDR picks eth0; and leave LOOM_SOCKET_IFNAME
                     unset on the hosts unless it is set
  --timeout S        stop the job after S whole seconds, exit 124 (default 600)
  --tag-output       loomrun's: prefix every line with "[RANK] "
  --cpus-per-host N  give each host N CPUs of its own (host k the k-th N of
                     the CPUs this script may use; at most as many as there
                     are), its ranks pinned round them: hosts that share no
                     CPU, as separate machines share none, however many
                     ranks they run
  --keep-going       when a host fails, let the others run to their own end
                     instead of stopping them (to see what the survivors of a
                     fault report); the exit status is still the first failure's
  --loomrun PATH     the loomrun to use (default: $LOOMRUN, else this
                     checkout's build/tools/loomrun, else loomrun on PATH)
  --driver           run no job in the hosts: keep them up, idle, while CMD
                     runs on this machine (not in a host) and drives them,
                     within --timeout. CMD gets LOOM_HOSTS_ADDRESSES (host
                     k's address is word k+1), LOOM_HOSTS_BRIDGE (the
                     bridge's namespace, where br0 has the address .254 of
                     the hosts' subnet: run there, with "ip netns exec", what
                     the hosts must reach, such as mpirun), LOOM_SECRET, and
                     LOOM_HOSTS_NAMESPACES and LOOM_HOSTS_PIDS for --on
  --on K             run CMD in host K (0 to K-1) of the --driver run whose
                     CMD this is: in its network, UTS, mount and PID
                     namespaces, in this directory, with LOOM_HOST_ID=host<K>
                     and LOOM_SOCKET_IFNAME=eth0; exits with CMD's status
  -h, --help         print this help and exit

Ranks of different hosts are pinned to different CPUs while the CPUs go
round; with more ranks than CPUs, ranks are not pinned at all (unless
--cpus-per-host gives each host CPUs of its own).

Exit status: 0 if every host's loomrun exited 0; otherwise the status of the
first that failed; 124 on timeout; 128+S on signal S; 2 for bad usage; 1 if
the hosts could not be made. With --driver, CMD's status (124 on timeout).
EOF
}

say() { echo "loom-hosts: $*" >&2; }
usage_error() {
  say "$*."
  exit 2
}
setup_error() {
  say "$*."
  exit 1
}

# --- --on K: one command in a host of the enclosing --driver run --------------------

# on_host K [--] CMD...: enters host K's namespaces (its PID 1, named by the
# driver's LOOM_HOSTS_PIDS, must still be in host K's network namespace: a
# PID may have been reused) and execs CMD there. nsenter forks into the PID
# namespace and waits for CMD; CMD is in its process group, so whoever
# kills that group kills CMD, and the host's end kills whatever CMD leaves.
on_host() {
  local k=$1 pids=() namespaces=() ns
  shift
  [[ ${1:-} == -- ]] && shift
  (($# > 0)) || usage_error "--on $k needs a command to run in host $k"
  [[ -n ${LOOM_HOSTS_PIDS:-} && -n ${LOOM_HOSTS_NAMESPACES:-} ]] ||
    usage_error "--on runs a command in a host of a 'loom-hosts.sh --driver' run, from that run's command; LOOM_HOSTS_PIDS is not set here"
  read -r -a pids <<<"$LOOM_HOSTS_PIDS"
  read -r -a namespaces <<<"$LOOM_HOSTS_NAMESPACES"
  whole_number "$k" 0 $((${#pids[@]} - 1)) ||
    usage_error "--on needs a host number from 0 to $((${#pids[@]} - 1)), not '$k'"
  k=$((10#$k))
  [[ $(id -u) -eq 0 ]] || setup_error "--on needs root: it enters host $k's namespaces"
  command -v nsenter >/dev/null || setup_error "needs 'nsenter', which is not installed (Debian package util-linux)"
  ns=$(ip netns identify "${pids[k]}" 2>/dev/null)
  [[ -n $ns && $ns == "${namespaces[k]}" ]] ||
    setup_error "host $k (namespace ${namespaces[k]}) is gone: its PID 1, ${pids[k]}, is not in it"
  export LOOM_HOST_ID=host$k LOOM_SOCKET_IFNAME=eth0
  exec nsenter --target "${pids[k]}" --net --uts --mount --pid \
    --wd="$PWD" -- "$@"
}

# --- the command line ---------------------------------------------------------

# whole_number TEXT LOW HIGH: TEXT is a whole number from LOW to HIGH.
whole_number() {
  [[ $1 =~ ^[0-9]{1,9}$ ]] && ((10#$1 >= $2 && 10#$1 <= $3))
}

# --on is a mode of its own: it makes nothing.
if [[ ${1:-} == --on ]]; then
  (($# >= 2)) || usage_error "option --on needs a host number"
  on_host "${@:2}"
fi

hosts=""
per_host=""
ranks_list=""
rate=""
cpus_per_host=""
timeout_seconds=600
tag_output=0
keep_going=0
ipv6=0
decoy_nic=0
driver=0
loomrun=${LOOMRUN:-}

# need_value OPTION ARGC: the option's value must be the next word.
need_value() {
  (($2 >= 2)) || usage_error "option $1 needs a value"
}

# Every turn shifts at least one word: the loop ends.
while (($# > 0)); do
  case $1 in
    --hosts) need_value "$1" $#; hosts=$2; shift 2 ;;
    -n | --np) need_value "$1" $#; per_host=$2; shift 2 ;;
    --ranks) need_value "$1" $#; ranks_list=$2; shift 2 ;;
    --rate) need_value "$1" $#; rate=$2; shift 2 ;;
    --cpus-per-host) need_value "$1" $#; cpus_per_host=$2; shift 2 ;;
    --timeout) need_value "$1" $#; timeout_seconds=$2; shift 2 ;;
    --loomrun) need_value "$1" $#; loomrun=$2; shift 2 ;;
    --tag-output) tag_output=1; shift ;;
    --keep-going) keep_going=1; shift ;;
    --ipv6) ipv6=1; shift ;;
    --decoy-nic) decoy_nic=1; shift ;;
    --driver) driver=1; shift ;;
    --on) usage_error "--on K comes first, alone: loom-hosts.sh --on K -- CMD (from a --driver's command)" ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    -*) usage_error "unknown option '$1' (options go before the command; see loom-hosts.sh --help)" ;;
    *) break ;;
  esac
done
command=("$@")

# counts[k]: ranks on host k.
counts=()
if ((driver)); then
  # No job: one idle process per host. -n and --ranks would mean nothing.
  [[ -z $per_host && -z $ranks_list ]] ||
    usage_error "--driver runs no job in the hosts: give --hosts K, not -n or --ranks (the driver launches its own)"
  [[ -n $hosts ]] || usage_error "the number of hosts is missing; pass it as --hosts K"
  whole_number "$hosts" 1 $MAX_HOSTS || usage_error "--hosts needs a whole number from 1 to $MAX_HOSTS, not '$hosts'"
  for ((k = 0; k < 10#$hosts; k++)); do counts+=(1); done
elif [[ -n $per_host && -n $ranks_list ]]; then
  usage_error "give either -n (the same on every host) or --ranks (one count per host), not both"
elif [[ -n $ranks_list ]]; then
  IFS=, read -r -a counts <<<"$ranks_list"
  [[ $ranks_list != *, ]] || counts+=("")  # read drops a trailing empty item
  ((${#counts[@]} >= 1 && ${#counts[@]} <= MAX_HOSTS)) ||
    usage_error "--ranks needs 1 to $MAX_HOSTS counts, one per host, not '$ranks_list'"
  for count in "${counts[@]}"; do
    whole_number "$count" 1 $MAX_RANKS ||
      usage_error "--ranks $ranks_list: each host's number of ranks must be a whole number from 1 to $MAX_RANKS, not '$count'"
  done
  if [[ -n $hosts ]]; then
    if ! whole_number "$hosts" 1 $MAX_HOSTS || ((10#$hosts != ${#counts[@]})); then
      usage_error "--hosts $hosts does not match --ranks $ranks_list, which names ${#counts[@]} hosts"
    fi
  fi
elif [[ -n $per_host ]]; then
  [[ -n $hosts ]] || usage_error "the number of hosts is missing; pass it as --hosts K"
  whole_number "$hosts" 1 $MAX_HOSTS || usage_error "--hosts needs a whole number from 1 to $MAX_HOSTS, not '$hosts'"
  whole_number "$per_host" 1 $MAX_RANKS || usage_error "-n needs a whole number from 1 to $MAX_RANKS, not '$per_host'"
  for ((k = 0; k < 10#$hosts; k++)); do counts+=($((10#$per_host))); done
else
  usage_error "the ranks are missing; pass -n M (ranks on every host) or --ranks M0,M1,... (one count per host)"
fi
for k in "${!counts[@]}"; do counts[k]=$((10#${counts[k]})); done
readonly HOSTS=${#counts[@]}

whole_number "$timeout_seconds" 1 86400 ||
  usage_error "--timeout needs a whole number of seconds from 1 to 86400, not '$timeout_seconds'"
timeout_seconds=$((10#$timeout_seconds))
if [[ -n $cpus_per_host ]]; then
  ((driver)) && usage_error "--driver runs no job in the hosts, so --cpus-per-host has no ranks to pin; pin what the driver runs"
  whole_number "$cpus_per_host" 1 4096 ||
    usage_error "--cpus-per-host needs a whole number of CPUs from 1 to 4096, not '$cpus_per_host'"
  cpus_per_host=$((10#$cpus_per_host))
fi

# tbf's burst: what may pass at once. It must cover what the rate lets
# through between timer ticks (10 ms), and a large segment; too large, and
# short transfers outrun the rate.
burst_bytes=0
if [[ -n $rate ]]; then
  [[ $rate =~ ^([1-9][0-9]{0,11})(bit|kbit|mbit|gbit|tbit|bps|kbps|mbps|gbps|tbps)$ ]] ||
    usage_error "--rate needs a whole number and a unit as tc writes it (such as 100mbit or 2gbit), not '$rate'"
  number=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in # bits per second in one unit
    bit) unit=1 ;;
    kbit) unit=1000 ;;
    mbit) unit=1000000 ;;
    gbit) unit=1000000000 ;;
    tbit) unit=1000000000000 ;;
    bps) unit=8 ;;
    kbps) unit=8000 ;;
    mbps) unit=8000000 ;;
    gbps) unit=8000000000 ;;
    tbps) unit=8000000000000 ;;
  esac
  # Compared before multiplying: bash's integers would overflow.
  if ((number > 1000000000000 / unit || number * unit < 8000)); then
    usage_error "--rate $rate is outside what tbf shapes here (1kbps to 1tbit)"
  fi
  bits=$((number * unit))
  burst_bytes=$((bits / 8 / 100))
  ((burst_bytes >= 65536)) || burst_bytes=65536
  ((burst_bytes <= 67108864)) || burst_bytes=67108864 # veths are slower than that shapes anyway
fi

((${#command[@]} > 0)) || usage_error "no command given; put it after the options, as in loom-hosts.sh --hosts 2 -n 1 -- hostname"

# --- what the machine must have ---------------------------------------------------

[[ $(id -u) -eq 0 ]] || setup_error "needs root: it creates network, mount, UTS and PID namespaces (run it with sudo)"
for tool in ip:iproute2 tc:iproute2 unshare:util-linux setpriv:util-linux taskset:util-linux mount:mount; do
  command -v "${tool%%:*}" >/dev/null ||
    setup_error "needs '${tool%%:*}', which is not installed (Debian package ${tool#*:})"
done
((driver)) && { command -v nsenter >/dev/null || setup_error "needs 'nsenter', which is not installed (Debian package util-linux)"; }
if ((driver)); then
  : # the driver launches what it needs
elif [[ -z $loomrun ]]; then
  repo_loomrun=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/tools/loomrun
  if [[ -x $repo_loomrun ]]; then
    loomrun=$repo_loomrun
  else
    loomrun=$(command -v loomrun) || setup_error "cannot find loomrun: build it (bash scripts/build.sh), or pass --loomrun PATH"
  fi
fi
if ((!driver)); then
  [[ -x $loomrun && ! -d $loomrun ]] || setup_error "--loomrun '$loomrun' is not an executable file"
  # The hosts start elsewhere (their own mount namespace, CMD's directory):
  # absolute paths keep meaning the same file.
  loomrun=$(realpath "$loomrun")
fi

# --- addresses ------------------------------------------------------------------------

ip_to_int() {
  local IFS=. a b c d
  read -r a b c d <<<"$1"
  echo $(((a << 24) | (b << 16) | (c << 8) | d))
}

# The IPv4 prefixes this machine uses: its addresses and routes (not the
# default route, nor anything broader than /8: those are not a use of the
# range, and everything overlaps them).
used_prefixes() {
  ip -4 -o addr show | awk '{ print $4 }'
  ip -4 route show table all | awk '{ t = ($1 ~ /^[0-9]/) ? $1 : $2; if (t ~ /^[0-9.]+(\/[0-9]+)?$/) print t }'
}

# The first 198.18.X.0/24 or 198.19.X.0/24 that no address or route of the
# machine touches, other than SKIP if given. The hosts' addresses live in
# their own namespaces and could not clash; the check keeps them from
# looking like the machine's own.
pick_subnet() {
  local skip=${1:-} used=() prefix candidate base address length width mask
  mapfile -t used < <(used_prefixes)
  for candidate in 198.18.{0..255} 198.19.{0..255}; do
    [[ $candidate != "$skip" ]] || continue
    base=$(ip_to_int "$candidate.0")
    local clash=0
    for prefix in "${used[@]}"; do
      address=${prefix%/*}
      length=32
      [[ $prefix == */* ]] && length=${prefix#*/}
      ((length >= 8)) || continue
      width=$((length < 24 ? length : 24))
      mask=$(((0xffffffff << (32 - width)) & 0xffffffff))
      if (((base & mask) == ($(ip_to_int "$address") & mask))); then
        clash=1
        break
      fi
    done
    ((clash)) || { echo "$candidate"; return 0; }
  done
  return 1
}

# With --ipv6: the /64 of 2001:2::/48 (RFC 5180, the IPv6 benchmarking
# range, as 198.18.0.0/15 is IPv4's) that matches the IPv4 subnet:
# 198.18.X.0/24 -> 2001:2:0:X::/64, 198.19.X.0/24 -> 2001:2:0:1XX::/64;
# written as ip and Loom write addresses (2001:2::1 for 2001:2:0:0::1).
ipv6_subnet() {
  local second third
  IFS=. read -r _ second third <<<"$1"
  echo $(((second - 18) * 256 + third))
}
host_ipv6() {
  if ((subnet6 == 0)); then printf '2001:2::%x' $(($1 + 1)); else printf '2001:2:0:%x::%x' "$subnet6" $(($1 + 1)); fi
}

# Whether any address or route of this machine lies in 2001:2::/48 (as
# text: "2001:2:" starts every such address, and a few next to it).
machine_uses_ipv6_range() {
  { ip -6 -o addr show | awk '{ print $4 }'; ip -6 route show table all | awk '{ print ($1 ~ /:/) ? $1 : $2 }'; } |
    grep -q '^2001:2:'
}

# --- namespaces: making, sweeping, removing ---------------------------------------------

# Is PID a loom-hosts run that is still alive? (A pid may have been reused.)
is_live_run() {
  [[ -r /proc/$1/cmdline ]] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -q 'loom-hosts'
}

# Kills what still runs in namespace NS, then removes it; removing a host's
# namespace removes its veth, and the bridge's removes the bridge.
remove_namespace() {
  local ns=$1 pids attempt
  for ((attempt = 0; attempt < 50; attempt++)); do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [[ -z $pids ]] && break
    # shellcheck disable=SC2086
    kill -KILL $pids 2>/dev/null
    sleep 0.1
  done
  ip netns delete "$ns" 2>/dev/null || [[ ! -e /run/netns/$ns ]] || say "could not remove network namespace $ns"
}

# Namespaces left by runs that died without cleaning up (kill -9).
sweep_stale_namespaces() {
  local ns pid
  while read -r ns _; do
    [[ $ns =~ ^${PREFIX}([0-9]+)- ]] || continue
    pid=${BASH_REMATCH[1]}
    ((pid != RUN)) || continue
    is_live_run "$pid" && continue
    say "removing $ns, left by run $pid, which is gone"
    remove_namespace "$ns"
  done < <(ip netns list 2>/dev/null)
}

host_ns() { echo "${PREFIX}${RUN}-$1"; }

# add_shaping NS DEV: tbf on DEV's egress, the only direction tc shapes.
add_shaping() {
  tc -n "$1" qdisc add dev "$2" root tbf rate "$rate" burst "$burst_bytes" latency 50ms
}

make_bridge() {
  # Without multicast snooping the bridge floods IPv6 neighbour discovery to
  # every port, whether or not it heard the hosts join their groups yet.
  ip netns add "$BRIDGE_NS" &&
    ip -n "$BRIDGE_NS" link set lo up &&
    ip -n "$BRIDGE_NS" link add br0 type bridge mcast_snooping 0 &&
    ip -n "$BRIDGE_NS" link set br0 up
}

# make_host K: host K's namespace, its eth0 plugged into the bridge, its address.
make_host() {
  local k=$1 ns
  ns=$(host_ns "$k")
  ip netns add "$ns" || return 1
  if ((decoy_nic)); then
    # Made first, so that it comes first in the host's interface order.
    ip -n "$ns" link add mgmt0 type veth peer name mgmt1 &&
      ip -n "$ns" addr add "$decoy_subnet.$((k + 1))/24" dev mgmt0 &&
      ip -n "$ns" link set mgmt0 up && ip -n "$ns" link set mgmt1 up || return 1
  fi
  ip -n "$BRIDGE_NS" link add "h$k" type veth peer name eth0 netns "$ns" &&
    ip -n "$BRIDGE_NS" link set "h$k" master br0 up &&
    ip -n "$ns" link set lo up &&
    ip -n "$ns" addr add "$subnet.$((k + 1))/24" dev eth0 || return 1
  if ((ipv6)); then
    # nodad: usable at once, not after a second of duplicate detection.
    ip -n "$ns" addr add "$(host_ipv6 "$k")/64" dev eth0 nodad || return 1
  fi
  ip -n "$ns" link set eth0 up || return 1
  if [[ -n $rate ]]; then
    # Host k's eth0 shapes what it sends, the bridge's port what it receives.
    add_shaping "$ns" eth0 && add_shaping "$BRIDGE_NS" "h$k" || return 1
  fi
}

# Until every host's links are up and running: the kernel marks a link
# running (operstate UP) after its carrier, up to a second late when links
# change in a burst, and Loom's interface choice, as NCCL's, skips a link
# that is not running.
wait_until_running() {
  local k ns link attempt
  for ((k = 0; k < HOSTS; k++)); do
    ns=$(host_ns "$k")
    for link in eth0 $( ((decoy_nic)) && echo mgmt0); do
      for ((attempt = 0; ; attempt++)); do
        ip -n "$ns" -o link show dev "$link" | grep -q ' state UP ' && break
        ((attempt < 50)) || return 1
        sleep 0.1
      done
    done
  done
}

# --- the hosts' processes ----------------------------------------------------------------

# What runs first in a host, as PID 1 of its PID namespace: the host's own
# name and /dev/shm, then loomrun (exec: loomrun becomes PID 1, and the
# namespace, with every rank, ends when it does). Outside namespaces of its
# own, these lines would rename the machine and hide its /dev/shm: they
# check first.
# shellcheck disable=SC2016
readonly HOST_INIT='
  set -e
  for ns in uts mnt; do
    machine=MACHINE_NS_$ns
    if [ "$(readlink /proc/self/ns/$ns)" = "${!machine}" ]; then
      echo "loom-hosts: $LOOM_HOST_ID is not in a $ns namespace of its own; not changing the machine." >&2
      exit 1
    fi
  done
  unset MACHINE_NS_uts MACHINE_NS_mnt
  echo "$LOOM_HOST_ID" >/proc/sys/kernel/hostname
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
  exec "$@"
'

host_pids=()   # host k's unshare (which SIGKILLs the host's PID 1 when it dies)
host_status=() # set when host k has been reaped

# The CPUs this script may use, one per line.
usable_cpus() {
  local list range ranges
  list=$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)
  IFS=, read -r -a ranges <<<"$list"
  for range in "${ranges[@]}"; do
    if [[ $range == *-* ]]; then seq "${range%-*}" "${range#*-}"; else echo "$range"; fi
  done
}

# start_host K CPUS: host K's loomrun, in its namespaces. CPUS (a taskset
# list) or "" for unpinned ranks.
start_host() {
  local k=$1 cpus=$2 ns pin=() options=() run=()
  ns=$(host_ns "$k")
  options=(-n "$counts_text" --nnodes "$HOSTS" --node-rank "$k" --master-addr "$master_addr"
    --master-port "$MASTER_PORT" --timeout "$timeout_seconds")
  ((tag_output)) && options+=(--tag-output)
  if [[ -n $cpus ]]; then
    pin=(taskset -c "$cpus")
    options+=(--bind-to core)
  else
    options+=(--bind-to none)
  fi
  run=("$loomrun" "${options[@]}" -- "${command[@]}")
  # --driver: the host's PID 1 idles until the script ends it.
  ((driver)) && run=(sleep infinity)
  # setpriv: the host dies with this script, even by SIGKILL (the signal
  # survives the execs into ip and unshare). --kill-child: unshare's death
  # kills the host's PID 1, and with it the whole PID namespace.
  MACHINE_NS_uts=$(readlink /proc/self/ns/uts) MACHINE_NS_mnt=$(readlink /proc/self/ns/mnt) \
    LOOM_HOST_ID=host$k LOOM_SOCKET_IFNAME=$ifname LOOM_SECRET=$secret \
    setpriv --pdeathsig KILL -- \
    ip netns exec "$ns" \
    unshare --uts --mount --pid --fork --kill-child --mount-proc -- \
    "${pin[@]}" bash -c "$HOST_INIT" "host$k" "${run[@]}" &
  host_pids[k]=$!
}

# The host's loomrun: PID 1 of its namespace, unshare's only child.
host_loomrun_pid() {
  local pid=${host_pids[$1]}
  awk '{ print $1 }' "/proc/$pid/task/$pid/children" 2>/dev/null
}

running_hosts() {
  local k list=()
  for ((k = 0; k < HOSTS; k++)); do [[ -n ${host_status[k]:-} ]] || list+=("$k"); done
  local IFS=,
  echo "${list[*]}"
}

# signal_hosts SIGNAL: to each running host's loomrun, which passes it on
# to its ranks; a host whose loomrun has not started yet is killed.
signal_hosts() {
  local k pid
  for ((k = 0; k < HOSTS; k++)); do
    [[ -z ${host_status[k]:-} ]] || continue
    pid=$(host_loomrun_pid "$k")
    if [[ -n $pid ]]; then kill "-$1" "$pid" 2>/dev/null; else kill -KILL "${host_pids[k]}" 2>/dev/null; fi
  done
}

kill_hosts() {
  local k
  for ((k = 0; k < HOSTS; k++)); do
    [[ -n ${host_status[k]:-} || -z ${host_pids[k]:-} ]] || kill -KILL "${host_pids[k]}" 2>/dev/null
  done
}

# --- cleanup, whatever ends the script ---------------------------------------------------------

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  # What the driver left running on this machine goes with it.
  [[ -n ${driver_pid:-} ]] && kill -KILL -- "-$driver_pid" 2>/dev/null
  kill_hosts
  wait 2>/dev/null
  local ns
  while read -r ns _; do
    [[ $ns == "${PREFIX}${RUN}-"* ]] && remove_namespace "$ns"
  done < <(ip netns list 2>/dev/null)
  exit "$status"
}

stop_signal=""
# shellcheck disable=SC2317  # called by the signal traps
on_signal() {
  if [[ -z $stop_signal ]]; then stop_signal=$1; else stop_signal=again; fi
}

trap cleanup EXIT
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM
trap 'on_signal HUP' HUP

# --- --driver: CMD on this machine, the hosts idle --------------------------------------------

driver_pid=""

# run_driver: waits until every host is up, then runs CMD in a process
# group of its own (a session: setsid), passes signals on to that group,
# stops it at the timeout, and exits with its status.
run_driver() {
  local k pid tries addresses=() pids=() namespaces=()
  # A host is up once its PID 1 has named the host, mounted its /dev/shm
  # and become the idle "sleep"; 20 s at most.
  for ((k = 0; k < HOSTS; k++)); do
    pid=""
    for ((tries = 0; tries < 100; tries++)); do
      pid=$(host_loomrun_pid "$k")
      [[ -n $pid && $(cat "/proc/$pid/comm" 2>/dev/null) == sleep ]] && break
      pid=""
      kill -0 "${host_pids[k]}" 2>/dev/null || setup_error "host $k ended while it started (see the message above)"
      sleep 0.2
    done
    [[ -n $pid ]] || setup_error "host $k was not up within 20 s"
    pids+=("$pid")
    addresses+=("$subnet.$((k + 1))")
    namespaces+=("$(host_ns "$k")")
  done
  export LOOM_HOSTS_ADDRESSES="${addresses[*]}" LOOM_HOSTS_PIDS="${pids[*]}"
  export LOOM_HOSTS_NAMESPACES="${namespaces[*]}" LOOM_HOSTS_BRIDGE=$BRIDGE_NS LOOM_SECRET=$secret
  say "bridge $subnet.254 (namespace $BRIDGE_NS); running the driver on this machine"
  # A background child of this script does not lead its process group, so
  # setsid makes the session without forking: $! is CMD, and leads it.
  setsid -- "${command[@]}" &
  driver_pid=$!

  local exit_status="" deadline=$((SECONDS + timeout_seconds)) stop_deadline="" timed_out="" status=0
  while kill -0 "$driver_pid" 2>/dev/null; do
    if [[ $stop_signal == again ]]; then
      say "received a second signal; killing the driver"
      kill -KILL -- "-$driver_pid" 2>/dev/null
    elif [[ -n $stop_signal && $stop_signal != handled ]]; then
      say "received SIG$stop_signal; passing it on to the driver"
      [[ -n $exit_status ]] || exit_status=$((128 + $(kill -l "$stop_signal")))
      kill "-$stop_signal" -- "-$driver_pid" 2>/dev/null
      stop_deadline=$((SECONDS + STOP_GRACE_SECONDS))
      stop_signal=handled
    fi
    if [[ -z $timed_out ]] && ((SECONDS >= deadline)); then
      say "timed out after $timeout_seconds s with the driver still running; stopping it"
      [[ -n $exit_status ]] || exit_status=124
      kill -TERM -- "-$driver_pid" 2>/dev/null
      stop_deadline=$((SECONDS + STOP_GRACE_SECONDS))
      timed_out=1
    fi
    if [[ -n $stop_deadline ]] && ((SECONDS >= stop_deadline)); then
      say "the driver did not stop within $STOP_GRACE_SECONDS s; killing it"
      kill -KILL -- "-$driver_pid" 2>/dev/null
      stop_deadline=""
    fi
    sleep 0.2
  done
  wait "$driver_pid" || status=$?
  exit "${exit_status:-$status}"
}

# --- main ---------------------------------------------------------------------------------

sweep_stale_namespaces
subnet=$(pick_subnet) || setup_error "every 198.18.X.0/24 and 198.19.X.0/24 is used on this machine; loom-hosts needs one free"
master_addr=$subnet.1
# Loom reads an empty LOOM_SOCKET_IFNAME as unset.
ifname=${LOOM_SOCKET_IFNAME:-eth0}
decoy_subnet=""
if ((decoy_nic)); then
  ifname=${LOOM_SOCKET_IFNAME:-}
  decoy_subnet=$(pick_subnet "$subnet") || setup_error "--decoy-nic: no second 198.18.X.0/24 or 198.19.X.0/24 is free on this machine"
fi
subnet6=0
if ((ipv6)); then
  [[ -e /proc/net/if_inet6 ]] || setup_error "--ipv6 needs IPv6, which this kernel does not offer (booted with ipv6.disable=1?)"
  ! machine_uses_ipv6_range || setup_error "--ipv6: this machine has addresses or routes in 2001:2::/48, which loom-hosts takes for its hosts"
  subnet6=$(ipv6_subnet "$subnet")
  master_addr=$(host_ipv6 0)
fi
secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
[[ $secret =~ ^[0-9a-f]{32}$ ]] || setup_error "cannot read 16 random bytes for LOOM_SECRET from /dev/urandom"
counts_text=$(
  IFS=,
  echo "${counts[*]}"
)
# With one count for all, loomrun is told "-n M", as a user would write it.
uniform=1
for count in "${counts[@]}"; do ((count == counts[0])) || uniform=0; done
((uniform)) && counts_text=${counts[0]}

if [[ -n $cpus_per_host ]]; then
  mapfile -t cpus < <(usable_cpus)
  ((cpus_per_host * HOSTS <= ${#cpus[@]})) ||
    usage_error "--cpus-per-host $cpus_per_host for $HOSTS hosts needs $((cpus_per_host * HOSTS)) CPUs; this script may use ${#cpus[@]} ($(
      IFS=,
      echo "${cpus[*]}"
    ))"
fi
make_bridge || setup_error "cannot make the bridge's network namespace $BRIDGE_NS (see ip's message above)"
if ((driver)); then
  # Where the driver runs what the hosts must reach (mpirun): the bridge's
  # own address, after every host's.
  ip -n "$BRIDGE_NS" addr add "$subnet.254/24" dev br0 ||
    setup_error "cannot give the bridge the address $subnet.254 (see ip's message above)"
fi
for ((k = 0; k < HOSTS; k++)); do
  make_host "$k" || setup_error "cannot make host $k (namespace $(host_ns "$k"); see the message above)"
done
wait_until_running || setup_error "the hosts' links did not come up and running within 5 s"

mapfile -t cpus < <(usable_cpus)
total_ranks=0
for count in "${counts[@]}"; do total_ranks=$((total_ranks + count)); done
first_rank=0
first_cpu=0
for ((k = 0; k < HOSTS; k++)); do
  last_rank=$((first_rank + counts[k] - 1))
  # Each host's loomrun pins its ranks from the first CPU it may use; the
  # hosts must not all start at the same one.
  host_cpus=""
  if [[ -n $cpus_per_host ]]; then
    host_cpus=$(
      IFS=,
      echo "${cpus[*]:k*cpus_per_host:cpus_per_host}"
    )
  elif ((total_ranks <= ${#cpus[@]})); then
    host_cpus=$(
      IFS=,
      echo "${cpus[*]:first_cpu:counts[k]}"
    )
    first_cpu=$((first_cpu + counts[k]))
  fi
  line="host$k $subnet.$((k + 1))"
  ((ipv6)) && line+=" $(host_ipv6 "$k")"
  line+=" ranks $first_rank"
  ((last_rank > first_rank)) && line+="-$last_rank"
  line+=" cpus ${host_cpus:-unpinned} (namespace $(host_ns "$k")"
  if ((driver)); then
    host_cpus="" # the driver pins what it runs
    line="host$k $subnet.$((k + 1)) (namespace $(host_ns "$k")"
  fi
  [[ -n $rate ]] && line+=", link $rate"
  say "$line)"
  start_host "$k" "$host_cpus"
  first_rank=$((last_rank + 1))
done

((driver)) && run_driver # exits

# Reap hosts as they end. The first failure decides the status and stops
# the others (unless --keep-going); every turn sleeps 0.2 s, and the
# deadlines end the loop.
exit_status=""
deadline=$((SECONDS + timeout_seconds + SAFETY_SECONDS))
stop_deadline=""
remaining=$HOSTS
while ((remaining > 0)); do
  for ((k = 0; k < HOSTS; k++)); do
    [[ -z ${host_status[k]:-} ]] || continue
    kill -0 "${host_pids[k]}" 2>/dev/null && continue
    status=0
    wait "${host_pids[k]}" || status=$?
    host_status[k]=$status
    remaining=$((remaining - 1))
    if ((status != 0)) && [[ -z $exit_status ]]; then
      exit_status=$status
      others=$(running_hosts)
      why="failed with status $status"
      ((status == 124)) && why="timed out (loomrun's --timeout $timeout_seconds)"
      if ((keep_going)); then
        say "host$k $why${others:+; hosts $others keep going (--keep-going)}"
      else
        say "host$k $why${others:+; stopping hosts $others}"
        signal_hosts TERM
        stop_deadline=$((SECONDS + STOP_GRACE_SECONDS))
      fi
    fi
  done
  ((remaining > 0)) || break
  if [[ -n $stop_signal ]]; then
    if [[ $stop_signal == again ]]; then
      say "received a second signal; killing hosts $(running_hosts)"
      kill_hosts
    else
      say "received SIG$stop_signal; passing it on to hosts $(running_hosts)"
      [[ -n $exit_status ]] || exit_status=$((128 + $(kill -l "$stop_signal")))
      signal_hosts "$stop_signal"
      stop_deadline=$((SECONDS + STOP_GRACE_SECONDS))
      stop_signal=handled
    fi
  fi
  if [[ -n $stop_deadline ]] && ((SECONDS >= stop_deadline)); then
    say "hosts $(running_hosts) did not stop within $STOP_GRACE_SECONDS s; killing them"
    kill_hosts
    stop_deadline=""
  fi
  if ((SECONDS >= deadline)); then
    if [[ -n ${timed_out:-} ]]; then
      say "hosts $(running_hosts) outlived SIGKILL; giving up on them"
      break
    fi
    say "timed out after $timeout_seconds s with hosts $(running_hosts) still running; killing them"
    [[ -n $exit_status ]] || exit_status=124
    kill_hosts
    timed_out=1
    deadline=$((SECONDS + STOP_GRACE_SECONDS))
  fi
  sleep 0.2
done
exit "${exit_status:-0}"
