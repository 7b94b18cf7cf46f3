# Sourced, with their three arguments, by the multihost tests that run jobs
# of all_reduce_perf across fake hosts: checks the arguments
# (loom-hosts.sh, loomrun, all_reduce_perf), skips where fake hosts cannot
# be made (prerequisites.sh), makes $WORK (gone at exit) and defines fail,
# which shows the last job's output ($WORK/out) before the reason, and
# need_ipv6, which skips where the kernel has no IPv6.
# shellcheck shell=bash

if [[ $# -ne 3 || ! -f $1 || ! -x $2 || ! -x $3 ]]; then
  echo "usage: $0 /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf" >&2
  exit 2
fi
# shellcheck source=prerequisites.sh
source "$(dirname "${BASH_SOURCE[0]}")/prerequisites.sh"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
  [[ -f $WORK/out ]] && cat "$WORK/out" >&2
  echo "FAIL: $*" >&2
  exit 1
}

need_ipv6() {
  [[ -e /proc/net/if_inet6 ]] || skip "this kernel has no IPv6 (booted with ipv6.disable=1?)"
  [[ $(cat /proc/sys/net/ipv6/conf/default/disable_ipv6) == 0 ]] ||
    skip "IPv6 is disabled (net.ipv6.conf.default.disable_ipv6)"
}
