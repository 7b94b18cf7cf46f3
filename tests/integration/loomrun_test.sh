#!/usr/bin/env bash
# Integration test for tools/loomrun: environment, several nodes, the
# master's free port, --tag-output, failure handling, bad usage, --timeout and signal forwarding.
#
# Usage: loomrun_test.sh /path/to/loomrun
set -euo pipefail

if [[ $# -ne 1 || ! -x $1 ]]; then
  echo "usage: $0 /path/to/loomrun" >&2
  exit 2
fi
LOOMRUN=$1

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
# A rank killed by SIGSEGV must not leave core files behind.
ulimit -c 0

fail() {
  echo "FAIL: $*" >&2
  for f in "$WORK"/stdout "$WORK"/stderr; do
    if [[ -f $f ]]; then
      echo "--- ${f##*/}:" >&2
      cat "$f" >&2
    fi
  done
  exit 1
}
pass() { echo "PASS: $*"; }

now_ms() {
  local t=$EPOCHREALTIME
  t=${t//[.,]/}
  echo $((10#$t / 1000))
}

# Runs loomrun with the given arguments, capturing stdout/stderr into files,
# and sets STATUS and ELAPSED_MS. A 20 s safety net keeps a broken loomrun
# from hanging the test suite.
run_loomrun() {
  local start
  start=$(now_ms)
  STATUS=0
  timeout -s KILL 20 "$LOOMRUN" "$@" >"$WORK/stdout" 2>"$WORK/stderr" || STATUS=$?
  ELAPSED_MS=$(($(now_ms) - start))
}

expect_status() {
  local want=$1 what=$2
  [[ $STATUS -eq $want ]] || fail "$what: expected exit status $want, got $STATUS"
}

expect_faster_than() {
  local limit_ms=$1 what=$2
  [[ $ELAPSED_MS -lt $limit_ms ]] || fail "$what: took ${ELAPSED_MS} ms, expected under ${limit_ms} ms"
}

expect_stderr_line() {
  local pattern=$1 what=$2
  grep -Eq -- "$pattern" "$WORK/stderr" || fail "$what: no stderr line matching /$pattern/"
}

# --- 1. torchrun environment ---------------------------------------------------
export LOOMRUN_TEST_INHERITED=kept
run_loomrun -n 3 -- sh -c 'echo $RANK/$WORLD_SIZE/$LOCAL_RANK $MASTER_ADDR $MASTER_PORT $LOOM_SECRET $LOCAL_WORLD_SIZE $GROUP_RANK $LOOMRUN_TEST_INHERITED'
expect_status 0 "environment"
got=$(cut -d' ' -f1,2 "$WORK/stdout" | sort)
want=$'0/3/0 127.0.0.1\n1/3/1 127.0.0.1\n2/3/2 127.0.0.1'
[[ $got == "$want" ]] || fail "environment: expected ranks 0/3/0..2/3/2 on 127.0.0.1, got: $got"
ports=$(cut -d' ' -f3 "$WORK/stdout" | sort -u)
[[ $(wc -l <<<"$ports") -eq 1 ]] || fail "environment: ranks saw different MASTER_PORTs: $ports"
[[ $ports =~ ^[0-9]+$ && $ports -ge 1 && $ports -le 65535 ]] || fail "environment: bad MASTER_PORT '$ports'"
secrets=$(cut -d' ' -f4 "$WORK/stdout" | sort -u)
[[ $(wc -l <<<"$secrets") -eq 1 ]] || fail "environment: ranks saw different LOOM_SECRETs: $secrets"
[[ $secrets =~ ^[0-9a-f]{32}$ ]] || fail "environment: LOOM_SECRET '$secrets' is not 32 hex characters"
[[ $(cut -d' ' -f5- "$WORK/stdout" | sort -u) == "3 0 kept" ]] ||
  fail "environment: expected LOCAL_WORLD_SIZE=3 GROUP_RANK=0 and the inherited variable"
first_secret=$secrets
run_loomrun -n 1 -- sh -c 'echo $LOOM_SECRET'
[[ $(cat "$WORK/stdout") != "$first_secret" ]] || fail "environment: two jobs got the same LOOM_SECRET"
pass "environment"

# --- 1b. several nodes (torchrun's static rendezvous) --------------------------------
# Node 1 of 3 with 2 ranks each holds RANK 2 and 3; without LOOM_SECRET in
# loomrun's environment the ranks get none (Loom derives it from the address).
show='echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $GROUP_RANK $GROUP_WORLD_SIZE $ROLE_RANK $ROLE_WORLD_SIZE $MASTER_ADDR $MASTER_PORT ${LOOM_SECRET-none}'
LOOM_SECRET=inherited run_loomrun -n 2 -- sh -c 'echo $LOOM_SECRET'
[[ $(sort -u "$WORK/stdout") =~ ^[0-9a-f]{32}$ ]] || fail "one node: the inherited LOOM_SECRET was not replaced by a fresh one"
(unset LOOM_SECRET; run_loomrun -n 2 --nnodes 3 --node-rank 1 -- sh -c "$show"; echo $STATUS >"$WORK/status")
STATUS=$(cat "$WORK/status")
expect_status 0 "nodes"
want=$'2 6 0 2 1 3 2 6 127.0.0.1 29500 none\n3 6 1 2 1 3 3 6 127.0.0.1 29500 none'
[[ $(sort "$WORK/stdout") == "$want" ]] || fail "nodes: expected node 1's ranks 2 and 3 of 6 on 127.0.0.1:29500, got: $(cat "$WORK/stdout")"
LOOM_SECRET=shared run_loomrun -n 1 --nnodes 2 --node-rank 1 --master-addr 198.18.0.1 --master-port 1234 -- sh -c "$show"
[[ $(cat "$WORK/stdout") == "1 2 0 1 1 2 1 2 198.18.0.1 1234 shared" ]] ||
  fail "nodes: expected rank 1 of 2 at 198.18.0.1:1234 with the inherited secret, got: $(cat "$WORK/stdout")"
run_loomrun -n 1 --master-addr 127.0.0.1 --master-port 1234 -- sh -c "$show"
[[ $(cut -d' ' -f1-10 "$WORK/stdout") == "0 1 0 1 0 1 0 1 127.0.0.1 1234" ]] || fail "one node: --master-port was not used"
# Nodes of unequal sizes: every node is given the same list.
run_loomrun -n 1,3,2 --nnodes 3 --node-rank 1 -- sh -c 'echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE'
[[ $(sort "$WORK/stdout") == $'1 6 0 3\n2 6 1 3\n3 6 2 3' ]] || fail "uneven nodes: expected ranks 1-3 of 6 on node 1, got: $(cat "$WORK/stdout")"
# Messages and --tag-output name the job-wide rank; --bind-to counts local ones.
run_loomrun -n 2 --nnodes 2 --node-rank 1 --tag-output -- sh -c 'echo out $RANK'
[[ $(sort "$WORK/stdout") == $'[2] out 2\n[3] out 3' ]] || fail "nodes: --tag-output should prefix RANK: $(cat "$WORK/stdout")"
run_loomrun -n 2 --nnodes 2 --node-rank 1 -- sh -c 'if [ $LOCAL_RANK = 1 ]; then exit 5; fi; sleep 30'
expect_status 5 "nodes: failing rank"
expect_stderr_line '^loomrun: rank 3 \(pid [0-9]+\) exited with status 5$' "nodes: failing rank"
expect_stderr_line '^loomrun: stopped ranks 2 after rank 3 failed$' "nodes: failing rank"
node_cpus=($(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | while IFS=- read -r lo hi; do seq "$lo" "${hi:-$lo}"; done))
run_loomrun -n 2 --nnodes 2 --node-rank 1 --bind-to core -- sh -c 'echo "$LOCAL_RANK $(taskset -pc $$ | sed "s/.*: //")"'
for r in 0 1; do
  grep -qx "$r ${node_cpus[$((r % ${#node_cpus[@]}))]}" "$WORK/stdout" || fail "nodes: local rank $r is bound elsewhere: $(cat "$WORK/stdout")"
done
pass "several nodes"

# --- 1c. the free port is probed where rank 0 will listen ------------------------------
# One node picks MASTER_PORT free on MASTER_ADDR's own address and family:
# with an IPv6 master, on ::1, not on 127.0.0.1. In a network namespace
# whose loopback has ::1 and no 127.0.0.1 (an IPv6-only host), a probe of
# 127.0.0.1 cannot even bind.
if [[ -e /proc/net/if_inet6 && $(cat /proc/sys/net/ipv6/conf/default/disable_ipv6) == 0 ]]; then
  run_loomrun -n 2 --master-addr ::1 -- sh -c 'echo $MASTER_ADDR $MASTER_PORT'
  expect_status 0 "IPv6 master"
  [[ $(sort -u "$WORK/stdout") =~ ^::1\ [0-9]+$ ]] || fail "IPv6 master: expected one '::1 PORT', got: $(cat "$WORK/stdout")"
  if command -v ip >/dev/null && unshare -n true 2>/dev/null; then
    STATUS=0
    # shellcheck disable=SC2016  # expanded by the inner shells
    timeout -s KILL 20 unshare -n sh -c 'ip link set lo up && ip addr del 127.0.0.1/8 dev lo && exec "$@"' sh \
      "$LOOMRUN" -n 2 --master-addr '[::1]' -- sh -c 'echo $MASTER_ADDR $MASTER_PORT' >"$WORK/stdout" 2>"$WORK/stderr" ||
      STATUS=$?
    expect_status 0 "IPv6 master on a host without IPv4 loopback"
    [[ $(sort -u "$WORK/stdout") =~ ^\[::1\]\ [0-9]+$ ]] ||
      fail "IPv6 master on a host without IPv4 loopback: expected one '[::1] PORT', got: $(cat "$WORK/stdout")"
  else
    echo "SKIP: IPv6 master without IPv4 loopback: needs ip and a network namespace (unshare -n)"
  fi
  pass "free port probed on the master's family"
else
  echo "SKIP: free port probed on the master's family: IPv6 is off here"
fi

# --- 2. --tag-output -------------------------------------------------------------
# The "slow" line arrives in two writes and must still come out whole; the
# last line has no newline and must still be printed.
run_loomrun -n 2 --tag-output -- sh -c \
  'echo out $RANK; echo err $RANK >&2; printf "slow "; sleep 0.2; echo line $RANK; printf partial$RANK'
expect_status 0 "tag-output"
for r in 0 1; do
  for line in "[$r] out $r" "[$r] slow line $r" "[$r] partial$r"; do
    grep -qxF -- "$line" "$WORK/stdout" || fail "tag-output: stdout lacks the line '$line'"
  done
  grep -qxF -- "[$r] err $r" "$WORK/stderr" || fail "tag-output: stderr lacks the line '[$r] err $r'"
done
[[ $(wc -l <"$WORK/stdout") -eq 6 ]] || fail "tag-output: expected 6 stdout lines"
[[ $(wc -l <"$WORK/stderr") -eq 2 ]] || fail "tag-output: expected 2 stderr lines"
# Every line carries the prefix of the rank that wrote it (lines end in it).
if grep -Ev '^\[([0-9])\] .*\1$' "$WORK/stdout" "$WORK/stderr" >/dev/null; then
  fail "tag-output: a line lacks its rank's '[R] ' prefix"
fi
pass "tag-output"

# Without --tag-output nothing is prefixed.
run_loomrun -n 1 -- sh -c 'echo plain'
[[ $(cat "$WORK/stdout") == plain ]] || fail "untagged: expected 'plain' unprefixed"
pass "untagged output"

# --- 3. a failing rank stops the others --------------------------------------------
run_loomrun -n 4 -- sh -c 'if [ $RANK = 2 ]; then exit 7; fi; sleep 30'
expect_status 7 "failing rank"
expect_faster_than 10000 "failing rank"
expect_stderr_line '^loomrun: rank 2 \(pid [0-9]+\) exited with status 7$' "failing rank"
expect_stderr_line '^loomrun: stopped ranks 0,1,3 after rank 2 failed$' "failing rank"
pass "failing rank"

# --- 4. a rank killed by a signal ----------------------------------------------------
run_loomrun -n 3 -- sh -c 'if [ $RANK = 1 ]; then kill -SEGV $$; fi; sleep 30'
expect_status 139 "crashing rank"
expect_faster_than 10000 "crashing rank"
expect_stderr_line '^loomrun: rank 1 \(pid [0-9]+\) was killed by signal SIGSEGV \(Segmentation fault\)' "crashing rank"
expect_stderr_line '^loomrun: stopped ranks 0,2 after rank 1 failed$' "crashing rank"
pass "crashing rank"

# --- 5. bad input ------------------------------------------------------------------------
expect_usage_error() {
  local what=$1
  shift
  run_loomrun "$@"
  expect_status 2 "$what"
  [[ $(wc -l <"$WORK/stderr") -eq 1 ]] || fail "$what: expected exactly one line on stderr"
  expect_stderr_line '^loomrun: .+\.$' "$what"
  [[ ! -s $WORK/stdout ]] || fail "$what: expected nothing on stdout"
}
expect_usage_error "-n 0" -n 0 -- true
expect_usage_error "-n abc" -n abc -- true
expect_usage_error "-n 1025" -n 1025 -- true
expect_usage_error "-n without a value" -n
expect_usage_error "missing -n" -- true
expect_usage_error "no command" -n 2
expect_usage_error "no command after --" -n 2 --
expect_usage_error "unknown option" -n 2 --frobnicate -- true
expect_usage_error "bad timeout" -n 2 --timeout soon -- true
expect_usage_error "--nnodes 0" -n 2 --nnodes 0 -- true
expect_usage_error "elastic --nnodes" -n 2 --nnodes 1:4 -- true
expect_usage_error "--node-rank out of range" -n 2 --nnodes 2 --node-rank 2 -- true
expect_usage_error "--node-rank without --nnodes" -n 2 --node-rank 1 -- true
expect_usage_error "--master-port 0" -n 2 --master-port 0 -- true
expect_usage_error "--master-port 65536" -n 2 --master-port 65536 -- true
expect_usage_error "empty --master-addr" -n 2 --master-addr '' -- true
expect_usage_error "too many ranks" -n 1024 --nnodes 20000 -- true
expect_usage_error "a count per node, but not for every node" -n 1,2 --nnodes 3 -- true
expect_usage_error "an empty count in the list" -n 1,,2 --nnodes 3 -- true
run_loomrun -n 2 --node-rank 3 --nnodes 2 -- true
expect_stderr_line "^loomrun: --node-rank 3 is out of range: with --nnodes 2 the node ranks are 0 to 1\.$" "--node-rank out of range"
pass "usage errors"

run_loomrun --help
expect_status 0 "--help"
grep -q '^Usage: loomrun -n N' "$WORK/stdout" || fail "--help: no usage text"
pass "--help"

run_loomrun -n 2 -- ./no-such-program-for-loomrun
[[ $STATUS -ne 0 ]] || fail "missing command: expected a non-zero exit status"
expect_status 127 "missing command"
expect_stderr_line "^loomrun: rank [01]: cannot run '\./no-such-program-for-loomrun': No such file or directory$" "missing command"
pass "missing command"

# --- 6. --timeout ------------------------------------------------------------------------
run_loomrun --timeout 1 -n 3 -- sleep 30
expect_status 124 "timeout"
expect_faster_than 10000 "timeout"
expect_stderr_line '^loomrun: timed out after 1 s with ranks 0,1,2 still running$' "timeout"
pass "timeout"

# --- 7. SIGTERM to loomrun is forwarded, and reaches the ranks' children -------------------
# Each rank starts a background sleep; it must die with its rank.
rm -f "$WORK"/sleep.*
"$LOOMRUN" -n 2 -- sh -c 'sleep 30 & echo $! > sleep.$RANK; wait' >"$WORK/stdout" 2>"$WORK/stderr" &
launcher=$!
for _ in $(seq 100); do
  [[ -s $WORK/sleep.0 && -s $WORK/sleep.1 ]] && break
  sleep 0.05
done
[[ -s $WORK/sleep.0 && -s $WORK/sleep.1 ]] || fail "SIGTERM: ranks did not start"
start=$(now_ms)
kill -TERM "$launcher"
STATUS=0
wait "$launcher" || STATUS=$?
ELAPSED_MS=$(($(now_ms) - start))
expect_status 143 "SIGTERM"
expect_faster_than 10000 "SIGTERM"
expect_stderr_line '^loomrun: received SIGTERM .*; forwarding it to ranks 0,1$' "SIGTERM"
expect_stderr_line '^loomrun: stopped ranks 0,1 after receiving SIGTERM' "SIGTERM"
for r in 0 1; do
  pid=$(cat "$WORK/sleep.$r")
  for _ in $(seq 40); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    fail "SIGTERM: rank $r's child (pid $pid) outlived the job"
  fi
done
pass "SIGTERM forwarding"

# --bind-to core: rank i runs on the i-th usable CPU, round robin.
cpus=($(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' | while IFS=- read -r lo hi; do seq "$lo" "${hi:-$lo}"; done))
"$LOOMRUN" -n 3 --bind-to core -- sh -c 'echo "$RANK $(taskset -pc $$ | sed "s/.*: //")"' >"$WORK/stdout" 2>"$WORK/stderr" \
  || fail "--bind-to core: loomrun failed"
for r in 0 1 2; do
  expected=${cpus[$((r % ${#cpus[@]}))]}
  grep -qx "$r $expected" "$WORK/stdout" || fail "--bind-to core: rank $r is not bound to CPU $expected: $(cat "$WORK/stdout")"
done
STATUS=0
"$LOOMRUN" -n 2 --bind-to socket true >"$WORK/stdout" 2>"$WORK/stderr" || STATUS=$?
expect_status 2 "--bind-to socket"
pass "--bind-to core"

echo "All loomrun tests passed."
