# Sourced by the multihost tests: skip (exit 77, ctest's SKIP_RETURN_CODE)
# saying why, where fake hosts cannot be made: without root, without the
# tools, or where the kernel or a container refuses network namespaces.
# shellcheck shell=bash

skip() {
  echo "SKIP: $*" >&2
  exit 77
}

[[ $(id -u) -eq 0 ]] || skip "fake hosts need root (network, mount, UTS and PID namespaces)"
for tool in ip:iproute2 tc:iproute2 unshare:util-linux setpriv:util-linux taskset:util-linux python3:python3; do
  command -v "${tool%%:*}" >/dev/null || skip "'${tool%%:*}' is not installed (Debian package ${tool#*:})"
done
# Not loomh<pid>-...: loom-hosts.sh's sweep of dead runs must never take it.
probe_ns=loomh-probe-$$
if ! probe_error=$(ip netns add "$probe_ns" 2>&1); then
  skip "cannot make a network namespace here: $probe_error"
fi
ip netns delete "$probe_ns"
if ! probe_error=$(unshare --uts --mount --pid --fork --mount-proc true 2>&1); then
  skip "cannot make UTS, mount and PID namespaces here: $probe_error"
fi
unset probe_ns probe_error
