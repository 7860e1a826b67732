"""RESP input for redis-cli --pipe: N hashes of 5 fields (4-byte names,
10-byte values); with 'ttl', also HPEXPIRE on every field (1 hour)."""
import sys
n = int(sys.argv[1]); ttl = len(sys.argv) > 2 and sys.argv[2] == "ttl"
def cmd(*a):
    out = [b"*%d\r\n" % len(a)]
    for x in a:
        out.append(b"$%d\r\n%s\r\n" % (len(x), x))
    return b"".join(out)
w = sys.stdout.buffer
fields = [b"fld%d" % i for i in range(5)]
for i in range(n):
    key = b"hash:%07d" % i
    args = [b"HSET", key]
    for f in fields:
        args += [f, b"value%05d" % (i % 100000)]
    w.write(cmd(*args))
    if ttl:
        w.write(cmd(b"HPEXPIRE", key, b"3600000", b"FIELDS", b"5", *fields))
