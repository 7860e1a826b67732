#!/usr/bin/env bash
# Memory per key: ember --shards 1 next to redis-server, for N string keys
# of ~11-byte names ("key:0000001") and 10 B / 32 B / 1 KB values, each
# without and with a TTL (SET ... EX, far in the future so none expires
# during the run). Each row starts a fresh server, loads the keys with
# redis-cli --pipe and prints the growth of INFO's used_memory and of
# used_memory_rss, divided by the key count, and the ratio ember/redis.
#
# Servers run on core 1 and the loader on core 0 where the machine has
# two cores (taskset), so the loader does not share the server's core.
#
# Usage: benches/memory_per_key.sh [keys]   (default 1000000)
#        SIZES="10 32" benches/memory_per_key.sh 200000
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
sizes=${SIZES:-"10 32 1024"}
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
cargo build --release --locked -q --bin ember
port=${PORT:-7411}

pin() { # core cmd...: pin where there is more than one core (exec: $! is the server)
  local core=$1; shift
  if [ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null; then exec taskset -c "$core" "$@"; else exec "$@"; fi
}

# RESP for n SETs of values of `size` bytes, with `EX 1000000` when ttl=1.
gen() { # n size ttl
  python3 - "$1" "$2" "$3" <<'EOF'
import sys
n, size, ttl = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
val = b"v" * size
tail = b"$2\r\nEX\r\n$7\r\n1000000\r\n" if ttl else b""
head = b"*5\r\n" if ttl else b"*3\r\n"
out = sys.stdout.buffer
chunk = []
for i in range(n):
    key = b"key:%07d" % i
    chunk.append(b"%s$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n%s" % (head, len(key), key, size, val, tail))
    if len(chunk) == 10000:
        out.write(b"".join(chunk))
        chunk = []
out.write(b"".join(chunk))
EOF
}

field() { # port name
  redis-cli -p "$1" info memory | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'
}

# Prints "used_per_key rss_per_key" for one server, one value size, ttl or not.
measure() { # size ttl cmd...
  local size=$1 ttl=$2; shift 2
  (pin 1 "$@") >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  local used0 rss0 used1 rss1 keys
  used0=$(field "$port" used_memory)
  rss0=$(field "$port" used_memory_rss)
  gen "$n" "$size" "$ttl" | (pin 0 redis-cli -p "$port" --pipe) >/dev/null
  sleep 2 # ember's used_memory comes from a 100 ms sampler; let RSS settle too
  used1=$(field "$port" used_memory)
  rss1=$(field "$port" used_memory_rss)
  keys=$(redis-cli -p "$port" dbsize)
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  [ "$keys" -eq "$n" ] || { echo "expected $n keys, got $keys" >&2; exit 1; }
  echo "$(( (used1 - used0) / keys )) $(( (rss1 - rss0) / keys ))"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }

echo "memory per key, $n keys of 11-byte names (used_memory growth / keys; RSS growth / keys)"
echo
echo "| value | TTL | ember used | redis used | ember/redis | ember RSS | redis RSS | ember/redis RSS |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for size in $sizes; do
  for ttl in 0 1; do
    read -r eu er < <(measure "$size" "$ttl" target/release/ember --port "$port" --shards 1 --save '')
    read -r ru rr < <(measure "$size" "$ttl" redis-server --port "$port" --save '' --appendonly no)
    label=$([ "$ttl" = 1 ] && echo yes || echo no)
    echo "| $size B | $label | $eu B | $ru B | $(ratio "$eu" "$ru") | $er B | $rr B | $(ratio "$er" "$rr") |"
  done
done
