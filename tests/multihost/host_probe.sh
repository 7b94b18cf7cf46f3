#!/usr/bin/env bash
# Runs on each fake host of hosts_selfcheck_test.sh (one rank per host) and
# prints what the host looks like from inside, one "host<k> what: value"
# line each. Host 1 connects to host 0 over the bridge; both write a mark
# into their /dev/shm first, so that after the exchange each would see the
# other's mark if /dev/shm were shared.
set -euo pipefail
me=host$GROUP_RANK
say() { echo "$me $*"; }

touch "/dev/shm/loom-hosts-mark-$me"
say "hostname: $(cat /proc/sys/kernel/hostname)"
say "env: $LOOM_HOST_ID $LOOM_SOCKET_IFNAME $LOOM_SECRET $MASTER_ADDR:$MASTER_PORT $RANK/$WORLD_SIZE"
say "addresses: $(ip -4 -o addr show | awk '{ printf "%s=%s ", $2, $4 }')"
say "shm device: $(stat -c %d /dev/shm)"
say "pid 1: $(cat /proc/1/comm)"
say "processes: $(find /proc -maxdepth 1 -name '[0-9]*' | wc -l)"
python3 - "$GROUP_RANK" "$MASTER_ADDR" <<'PY'
import socket, sys, time
rank, master = int(sys.argv[1]), sys.argv[2]
if rank == 0:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((master, 7000))
    server.listen(1)
    server.settimeout(20)
    peer, (address, _) = server.accept()
    peer.settimeout(20)
    print(f"host0 heard: {peer.recv(100).decode()} from {address}", flush=True)
    peer.sendall(b"hello from host0")
    peer.close()
else:
    for _ in range(100):  # host 0 may not listen yet: 10 s at most
        try:
            peer = socket.create_connection((master, 7000), timeout=20)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("host1 could not connect to host0")
    peer.sendall(b"hello from host1")
    print(f"host1 heard: {peer.recv(100).decode()}", flush=True)
PY
say "shm files: $(cd /dev/shm && echo loom-hosts-mark-*)"
rm -f "/dev/shm/loom-hosts-mark-$me"
