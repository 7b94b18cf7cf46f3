"""Runs on the two fake hosts of hosts_selfcheck_test.sh: host 1 sends
BYTES to host 0, which prints the rate it received them at, from the first
byte to the last, as "received N bytes at R Mbit/s"."""
import os
import socket
import sys
import time

PORT = 7001
size = int(sys.argv[1])
master = os.environ["MASTER_ADDR"]
if os.environ["GROUP_RANK"] == "0":
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((master, PORT))
    server.listen(1)
    server.settimeout(20)
    peer, _ = server.accept()
    peer.settimeout(20)
    received, start = 0, None
    while received < size:
        chunk = peer.recv(1 << 20)
        if not chunk:
            break
        if start is None:
            start = time.monotonic()
        received += len(chunk)
    seconds = time.monotonic() - start
    print(f"received {received} bytes at {received * 8 / seconds / 1e6:.1f} Mbit/s", flush=True)
else:
    for _ in range(100):  # host 0 may not listen yet: 10 s at most
        try:
            peer = socket.create_connection((master, PORT), timeout=20)
            break
        except OSError:
            time.sleep(0.1)
    else:
        sys.exit("host1 could not connect to host0")
    peer.sendall(b"x" * size)
    peer.close()
