#!/usr/bin/env bash
# TCP's socket buffers: unset, LOOM_SOCKET_BUFFER_BYTES leaves them to the
# kernel's autotuning and INFO says so; set, every data socket gets that
# size and INFO says so; set above what the kernel allows, every rank warns
# naming the sysctl. With small buffers the sockets fill, so frames go out
# partly straight from the user's buffer and partly from the slot: results
# must stay exact, and a Send's buffer refilled at once must not show.
# The runs narrow INFO to INIT: the TCP warning must show all the same.
# Usage: socket_buffers_test.sh BUILD_DIR
set -euo pipefail
build=$1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; echo "--- output:"; cat "$out"; exit 1; }

run() {  # env... -- runs 2 ranks over TCP
  env LOOM_TRANSPORTS=tcp LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=INIT "$@" timeout -s KILL 120 \
    "$build/tools/loomrun" -n 2 -- "$build/perf/all_gather_perf" -b 8 -e 8M -f 8 -c 1 -w 1 -n 3 > "$out" 2>&1
}

run || fail "2 ranks over TCP with the kernel's buffers failed"
[ "$(grep -c 'TCP: socket buffers sized by the kernel as traffic grows.*; LOOM_SOCKET_BUFFER_BYTES unset' "$out")" = 2 ] ||
  fail "every rank should say the kernel sizes its socket buffers"
grep -q '^# Out of bounds values : 0 OK$' "$out" || fail "results were not exact"
echo "ok: unset, the kernel sizes the buffers"

run LOOM_SOCKET_BUFFER_BYTES=65536 || fail "2 ranks over TCP with 64 KiB socket buffers failed"
[ "$(grep -c 'TCP: socket buffers of 64 KiB each way (LOOM_SOCKET_BUFFER_BYTES)' "$out")" = 2 ] ||
  fail "every rank should say its socket buffers are 64 KiB"
grep -q '^# Out of bounds values : 0 OK$' "$out" || fail "results were not exact with 64 KiB socket buffers"
LOOM_TRANSPORTS=tcp LOOM_SOCKET_BUFFER_BYTES=65536 timeout -s KILL 300 "$build/tests/loom_integration_tests" \
  --gtest_filter='Ranks/PointToPointTest.SendBufferIsFreeOnceTheSendReturns/*:Ranks/PointToPointTest.BlockingCallsWaitForALatePeer/Processes3:Ranks/CollectivesTest.AllGather*/Processes3' \
  > "$out" 2>&1 || fail "the point-to-point and AllGather tests failed over TCP with 64 KiB socket buffers"
echo "ok: 64 KiB buffers, exact results, Send buffers free at once"

cap=$(cat /proc/sys/net/core/wmem_max 2>/dev/null || echo 0)
if [ "$cap" -gt 0 ] && [ "$cap" -lt $((1 << 29)) ]; then
  run LOOM_SOCKET_BUFFER_BYTES=$((1 << 30)) || fail "2 ranks over TCP asking for 1 GiB socket buffers failed"
  [ "$(grep -c 'LOOM WARN TCP.*LOOM_SOCKET_BUFFER_BYTES=1073741824 asks for TCP socket buffers of 1048576 KiB, but the kernel gave .* net.core.wmem_max and net.core.rmem_max cap' "$out")" = 2 ] ||
    fail "every rank should warn that the kernel capped its socket buffers"
  grep -q '^# Out of bounds values : 0 OK$' "$out" || fail "results were not exact with capped socket buffers"
  echo "ok: a size above net.core.wmem_max ($cap) is warned about"
else
  echo "note: net.core.wmem_max is $cap here, so the capped case is not tried"
fi
