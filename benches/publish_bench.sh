#!/usr/bin/env bash
# PUBLISH throughput with N subscribers (server pinned by the caller, client
# on core 0). Usage: publish_bench.sh PORT SUBSCRIBERS
port=$1; subs=$2
python3 - "$port" "$subs" <<'PY' &
import socket, sys, time, select
port, n = int(sys.argv[1]), int(sys.argv[2])
conns = []
for _ in range(n):
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(b"SUBSCRIBE ch\r\n"); conns.append(s)
for s in conns: s.setblocking(False)
end = time.time() + 40
while time.time() < end:
    r, _, _ = select.select(conns, [], [], 0.5)
    for s in r:
        try:
            if not s.recv(1 << 20): conns.remove(s)
        except BlockingIOError: pass
PY
sleep 1.5
taskset -c 0 redis-benchmark -p "$port" -n 200000 -c 50 -P 16 -q PUBLISH ch hello 2>/dev/null | tr '\r' '\n' | grep -E "^PUBLISH" | tail -1
kill %1 2>/dev/null
