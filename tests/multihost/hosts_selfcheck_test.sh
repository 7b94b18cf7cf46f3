#!/usr/bin/env bash
# Self-checks of scripts/loom-hosts.sh, the fake-host harness (not of Loom):
# each host sees only its own address, /dev/shm, hostname and processes;
# host 0 and host 1 talk over the bridge; --rate really limits the link;
# the first failure decides the status; --timeout bounds a job; every
# namespace goes away after a normal end and, swept by the next run, after
# the script was killed with SIGKILL; --driver keeps the hosts up while
# a command outside them enters them with --on; and --cpus-per-host gives
# each host CPUs no other host runs on.
#
# Usage: hosts_selfcheck_test.sh /path/to/loom-hosts.sh /path/to/loomrun
set -euo pipefail

if [[ $# -ne 2 || ! -f $1 || ! -x $2 ]]; then
  echo "usage: $0 /path/to/loom-hosts.sh /path/to/loomrun" >&2
  exit 2
fi
HOSTS_SCRIPT=$1
LOOMRUN=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR
source "$HERE/prerequisites.sh"

WORK=$(mktemp -d)
started=() # pids of the harness runs this test started
# Whatever ends the test, no run of ours and none of its namespaces stays.
cleanup() {
  local pid ns
  for pid in "${started[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${started[@]}"; do
    for ns in $(ip netns list | awk -v p="loomh$pid-" 'index($1, p) == 1 { print $1 }'); do
      ip netns pids "$ns" | xargs -r kill -KILL 2>/dev/null || true
      ip netns delete "$ns" 2>/dev/null || true
    done
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/out "$WORK"/err; do
    [[ -f $f ]] && { echo "--- ${f##*/}:" >&2; cat "$f" >&2; }
  done
  exit 1
}
pass() { echo "PASS: $*"; }

# hosts ARGS...: one harness run, in the background as the kill test needs
# it; sets PID. wait_hosts then sets STATUS.
hosts() {
  bash "$HOSTS_SCRIPT" --loomrun "$LOOMRUN" "$@" >"$WORK/out" 2>"$WORK/err" &
  PID=$!
  started+=("$PID")
}
wait_hosts() {
  STATUS=0
  wait "$PID" || STATUS=$?
}
namespaces_of() { ip netns list | awk -v p="loomh$1-" 'index($1, p) == 1 { print $1 }'; }
# line PATTERN: the one stdout line matching PATTERN (an ERE), without it.
value() { grep -E "^$1" "$WORK/out" | head -1 | sed -E "s/^$1//"; }

# --- 1. isolation and connectivity --------------------------------------------------
links_before=$(ip -br link | awk '{ print $1 }')
hosts --hosts 2 -n 1 --timeout 40 -- "$HERE/host_probe.sh"
wait_hosts
[[ $STATUS -eq 0 ]] || fail "isolation run: exited $STATUS"
subnet=$(sed -nE 's/^loom-hosts: host0 ([0-9.]+)\.1 .*/\1/p' "$WORK/err")
[[ $subnet =~ ^198\.1[89]\.[0-9]+$ ]] || fail "no host0 line with an address in 198.18.0.0/15 on stderr"
root_shm=$(stat -c %d /dev/shm)
secrets=()
for k in 0 1; do
  h=host$k
  [[ $(value "$h hostname: ") == "$h" ]] || fail "$h: hostname is not $h"
  read -r host_id ifname secret master rank <<<"$(value "$h env: ")"
  [[ $host_id == "$h" && $ifname == eth0 && $master == "$subnet.1:29500" && $rank == "$k/2" ]] ||
    fail "$h: LOOM_HOST_ID, LOOM_SOCKET_IFNAME, MASTER_ADDR:MASTER_PORT or RANK/WORLD_SIZE wrong"
  secrets+=("$secret")
  [[ $(value "$h addresses: ") == "lo=127.0.0.1/8 eth0=$subnet.$((k + 1))/24 " ]] ||
    fail "$h: sees addresses other than its own: $(value "$h addresses: ")"
  shm=$(value "$h shm device: ")
  [[ -n $shm && $shm != "$root_shm" ]] || fail "$h: /dev/shm is the machine's own"
  eval "shm_$k=$shm"
  [[ $(value "$h shm files: ") == "loom-hosts-mark-$h" ]] ||
    fail "$h: /dev/shm holds another host's mark: $(value "$h shm files: ")"
  [[ $(value "$h pid 1: ") == loomrun ]] || fail "$h: PID 1 is not loomrun: no PID namespace of its own"
  (($(value "$h processes: ") < 10)) || fail "$h: sees $(value "$h processes: ") processes: not only its own"
done
# shellcheck disable=SC2154  # shm_0 and shm_1 are set by eval
[[ $shm_0 != "$shm_1" ]] || fail "host0 and host1 share /dev/shm"
[[ ${secrets[0]} =~ ^[0-9a-f]{32}$ && ${secrets[0]} == "${secrets[1]}" ]] || fail "the hosts do not share one fresh LOOM_SECRET"
[[ $(value "host0 heard: ") == "hello from host1 from $subnet.2" ]] || fail "host0 did not hear host1 over the bridge"
[[ $(value "host1 heard: ") == "hello from host0" ]] || fail "host1 did not hear host0 over the bridge"
pass "isolation (address, /dev/shm, hostname, processes) and connectivity over the bridge"

# --- 2. cleanup after a normal end ---------------------------------------------------
[[ -z $(namespaces_of "$PID") ]] || fail "namespaces left after a normal end: $(namespaces_of "$PID")"
[[ $(ip -br link | awk '{ print $1 }') == "$links_before" ]] || fail "the machine's own links changed"
pass "cleanup after a normal end"

# --- 3. --rate limits the link ---------------------------------------------------------------
# 4 MB at 100 Mbit/s take a third of a second; the bound is loose (2x): a
# self-check of the harness, not a measurement of anything.
hosts --hosts 2 -n 1 --rate 100mbit --timeout 40 -- python3 "$HERE/rate_probe.py" 4000000
wait_hosts
[[ $STATUS -eq 0 ]] || fail "rate run: exited $STATUS"
mbits=$(sed -nE 's/^received 4000000 bytes at ([0-9.]+) Mbit\/s$/\1/p' "$WORK/out")
[[ -n $mbits ]] || fail "rate run: host0 did not receive the 4000000 bytes"
python3 -c "import sys; sys.exit(0 if float('$mbits') < 200 else 1)" ||
  fail "--rate 100mbit: host1 sent at $mbits Mbit/s"
pass "--rate 100mbit limits the link ($mbits Mbit/s measured)"

# --- 4. the first failure decides the status, and stops the other hosts -------------------------
# shellcheck disable=SC2016  # expanded by each host's shell
hosts --hosts 2 -n 1 --timeout 40 -- sh -c 'if [ "$GROUP_RANK" = 1 ]; then exit 7; fi; sleep 30'
start=$SECONDS
wait_hosts
[[ $STATUS -eq 7 ]] || fail "failing host: expected status 7, got $STATUS"
((SECONDS - start < 15)) || fail "failing host: the other host was not stopped"
grep -q '^loom-hosts: host1 failed with status 7; stopping hosts 0$' "$WORK/err" ||
  fail "failing host: no sentence naming host1"
[[ -z $(namespaces_of "$PID") ]] || fail "namespaces left after a failure"
pass "a failing host stops the job with its status"

# --- 5. --timeout --------------------------------------------------------------------------------
hosts --hosts 2 -n 1 --timeout 2 -- sleep 30
wait_hosts
[[ $STATUS -eq 124 ]] || fail "timeout: expected status 124, got $STATUS"
[[ -z $(namespaces_of "$PID") ]] || fail "namespaces left after a timeout"
pass "--timeout stops the job with status 124"

# --- 6. SIGKILL of the script: the hosts die with it, the next run sweeps its namespaces ----------
hosts --hosts 2 -n 1 --timeout 40 -- sleep 30
killed=$PID
for _ in $(seq 100); do # 10 s at most for both hosts to run
  running=0
  for ns in $(namespaces_of "$killed"); do [[ -n $(ip netns pids "$ns") ]] && running=$((running + 1)); done
  ((running == 2)) && break
  sleep 0.1
done
((running == 2)) || fail "SIGKILL: the hosts did not start"
kill -KILL "$killed"
wait "$killed" 2>/dev/null || true
for _ in $(seq 50); do # 5 s at most for the hosts' processes to die
  alive=0
  for ns in $(namespaces_of "$killed"); do [[ -n $(ip netns pids "$ns") ]] && alive=1; done
  ((alive == 0)) && break
  sleep 0.1
done
((alive == 0)) || fail "SIGKILL: processes of the hosts outlived the script"
[[ -n $(namespaces_of "$killed") ]] || fail "SIGKILL: expected the killed run's namespaces to be left to sweep"
hosts --hosts 1 -n 1 --timeout 40 -- true
wait_hosts
[[ $STATUS -eq 0 ]] || fail "sweeping run: exited $STATUS"
[[ -z $(namespaces_of "$killed") ]] || fail "the next run did not sweep $(namespaces_of "$killed")"
pass "after SIGKILL the hosts die, and the next run sweeps the namespaces"

# --- 7. --driver: the hosts idle while a command outside drives them through --on ---------------
# The driver runs host_probe.sh in each host, as a loomrun would, and
# exits 5: the isolation holds as in 1, the status is the driver's.
# shellcheck disable=SC2016  # expanded by the driver's shell
hosts --hosts 2 --driver --timeout 40 -- bash -c '
  read -r -a addresses <<<"$LOOM_HOSTS_ADDRESSES"
  for k in 0 1; do
    GROUP_RANK=$k RANK=$k WORLD_SIZE=2 MASTER_ADDR=${addresses[0]} MASTER_PORT=29500 \
      bash "$0" --on $k -- "$1" &
  done
  wait
  echo "outside: $(readlink /proc/self/ns/net) $(ip netns identify $$)"
  exit 5' "$HOSTS_SCRIPT" "$HERE/host_probe.sh"
wait_hosts
[[ $STATUS -eq 5 ]] || fail "driver: expected the driver's status 5, got $STATUS"
subnet=$(sed -nE 's/^loom-hosts: host0 ([0-9.]+)\.1 .*/\1/p' "$WORK/err")
[[ $subnet =~ ^198\.1[89]\.[0-9]+$ ]] || fail "driver: no host0 line with an address in 198.18.0.0/15 on stderr"
grep -q "^loom-hosts: bridge $subnet.254 " "$WORK/err" || fail "driver: the bridge's address is not $subnet.254"
[[ $(value "outside: ") == "$(readlink /proc/self/ns/net) " ]] || fail "driver: did not run in the machine's network namespace"
for k in 0 1; do
  h=host$k
  [[ $(value "$h hostname: ") == "$h" ]] || fail "driver: --on $k: hostname is not $h"
  read -r host_id ifname secret _ <<<"$(value "$h env: ")"
  [[ $host_id == "$h" && $ifname == eth0 && $secret =~ ^[0-9a-f]{32}$ ]] ||
    fail "driver: --on $k: LOOM_HOST_ID, LOOM_SOCKET_IFNAME or LOOM_SECRET wrong"
  [[ $(value "$h addresses: ") == "lo=127.0.0.1/8 eth0=$subnet.$((k + 1))/24 " ]] ||
    fail "driver: --on $k: sees addresses other than its host's: $(value "$h addresses: ")"
  [[ $(value "$h shm files: ") == "loom-hosts-mark-$h" ]] || fail "driver: --on $k: /dev/shm is not the host's own"
  [[ $(value "$h pid 1: ") == sleep ]] || fail "driver: --on $k: not in the host's PID namespace"
done
[[ $(value "host0 heard: ") == "hello from host1 from $subnet.2" ]] || fail "driver: host0 did not hear host1"
[[ -z $(namespaces_of "$PID") ]] || fail "namespaces left after a driver run"
pass "--driver keeps the hosts up, --on enters them, the driver's status is the script's"

# --- 8. --cpus-per-host: each host's ranks on CPUs no other host has --------------------------------
mapfile -t usable < <(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status | tr , '\n' |
  awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
if ((${#usable[@]} >= 2)); then
  hosts --hosts 2 -n 3 --cpus-per-host 1 --timeout 40 -- \
    sh -c 'echo "$(hostname) $(awk "/^Cpus_allowed_list:/ { print \$2 }" /proc/self/status)"'
  wait_hosts
  [[ $STATUS -eq 0 ]] || fail "--cpus-per-host 1: exited $STATUS"
  for k in 0 1; do
    [[ $(grep -c "^host$k ${usable[k]}\$" "$WORK/out") -eq 3 ]] ||
      fail "--cpus-per-host 1: host$k's 3 ranks are not all on CPU ${usable[k]} alone"
  done
  pass "--cpus-per-host 1: each host's 3 ranks on a CPU of its own"
else
  echo "note: one usable CPU: --cpus-per-host is checked only for its refusal"
fi
hosts --hosts 2 -n 1 --cpus-per-host $((${#usable[@]} / 2 + 1)) -- true
wait_hosts
[[ $STATUS -eq 2 ]] && grep -qE "^loom-hosts: --cpus-per-host [0-9]+ for 2 hosts needs [0-9]+ CPUs; this script may use ${#usable[@]} " "$WORK/err" ||
  fail "--cpus-per-host beyond the CPUs: expected status 2 and a sentence, got $STATUS"
pass "--cpus-per-host beyond the usable CPUs is refused with a sentence"

# --- 9. bad input: one sentence, status 2 ------------------------------------------------------------
for args in "--hosts 0 -n 1 true" "--hosts 2 true" "--hosts 2 -n 1 --rate fast true" "--ranks 1,,2 true" \
  "--hosts 3 --ranks 1,2 true" "--hosts 2 -n 1 --timeout 0 true" "--hosts 2 -n 1" "--hosts 2 -n 1 --frobnicate true" \
  "--hosts 2 -n 1 --driver true" "--on 0 true" "--hosts 2 -n 1 --on 0 true" "--hosts 2 -n 1 --cpus-per-host 0 true" \
  "--hosts 2 --driver --cpus-per-host 1 true"; do
  # shellcheck disable=SC2086
  hosts $args
  wait_hosts
  if [[ $STATUS -ne 2 || $(wc -l <"$WORK/err") -ne 1 ]] || ! grep -qE '^loom-hosts: .+\.$' "$WORK/err"; then
    fail "bad input '$args': expected status 2 and one sentence, got $STATUS: $(cat "$WORK/err")"
  fi
done
pass "bad input gets one sentence and status 2"

echo "All loom-hosts self-checks passed."
