#!/usr/bin/env python3
# Time from a shared PXAT deadline to each `expired` event: loads N keys that
# all expire at one instant, subscribes to __keyevent@0__:expired and prints
# p50/p99/max of (arrival - deadline). Usage: expired_event_lag.py PORT N
import socket, sys, time, subprocess
port, n = int(sys.argv[1]), int(sys.argv[2])
def cmd(c):
    s = socket.create_connection(("127.0.0.1", port)); s.sendall(c); time.sleep(0.05); s.recv(1000); s.close()
cmd(b"CONFIG SET notify-keyspace-events Ex\r\n")
sub = socket.create_connection(("127.0.0.1", port)); sub.sendall(b"SUBSCRIBE __keyevent@0__:expired\r\n"); time.sleep(0.1); sub.recv(1000)
deadline = int(time.time() * 1000) + 12000
lines = "".join(f"*5\r\n$3\r\nSET\r\n${len('ev:%d' % i)}\r\nev:{i}\r\n$1\r\nv\r\n$4\r\nPXAT\r\n${len(str(deadline))}\r\n{deadline}\r\n" for i in range(n))
subprocess.run(["redis-cli", "-p", str(port), "--pipe"], input=lines.encode(), stdout=subprocess.DEVNULL, check=True)
marks = []
got = 0
sub.settimeout(1.0)
end = deadline / 1000 + 30
buf = b""
while got < n and time.time() < end:
    try:
        data = sub.recv(1 << 20)
    except socket.timeout:
        continue
    now = time.time() * 1000
    c = data.count(b"$7\r\nmessage\r\n")
    got += c
    marks.append((now - deadline, c))
lags = []
for lag, c in marks:
    lags.extend([lag] * c)
lags.sort()
q = lambda p: lags[min(len(lags) - 1, int(p * len(lags)))]
print(f"events={len(lags)} p50={q(0.5):.0f}ms p99={q(0.99):.0f}ms max={lags[-1]:.0f}ms")
