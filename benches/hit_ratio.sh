#!/usr/bin/env bash
# Cache hit ratio at equal maxmemory: ember's policies next to
# redis-server's, under loadgen's cache-aside mode (a GET that misses is
# followed by a SET of its key, as an application filling its cache).
#
# The setup of the eviction issue: KEYS keys (default 1M) of 100-byte
# values, Zipfian reads (exponent ZIPF, default 0.99), and a maxmemory
# equal to redis-server's used_memory holding a fifth of the keys; REQS
# GETs measured (default 2M, after as many to warm up) from 50
# connections, each its own seed, 4 in flight each. Two
# workloads: the Zipfian reads alone, and the same with SCAN (default 10%)
# of the GETs walking cold keys in order (scan pollution). Also printed:
# the ideal, the share of requests that go to the fifth most popular keys
# (what a cache holding exactly those would hit once warm; the measured
# run also pays the first request of keys the warm-up never asked for).
#
# The server runs on core 0, loadgen on core 1 (taskset); every run starts
# a fresh server with `--save ''`.
#
# Usage: benches/hit_ratio.sh            (about 10 minutes)
#        KEYS=200000 REQS=400000 ROWS="ember:allkeys-lru ember:allkeys-tinylfu" benches/hit_ratio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/serve.sh
keys=${KEYS:-1000000}
reqs=${REQS:-2000000}
zipf=${ZIPF:-0.99}
scan=${SCAN:-0.1}
port=${PORT:-7431}
conns=50
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || cargo build --release --locked -q --bin ember -p loadgen

pin() { # core cmd... (exec: in `serve`'s background job the pid is the server's)
  if [ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null; then exec taskset -c "$1" "${@:2}"; else exec "${@:2}"; fi
}

used_memory() {
  redis-cli -p "$port" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'
}

# redis-server's used_memory holding a fifth of the keys (loadgen's names
# and value size) is the limit every run gets.
pid=$(serve "$port" redis-server --port "$port" --save '' --appendonly no)
python3 - "$((keys / 5))" <<'EOF' | redis-cli -p "$port" --pipe >/dev/null
import sys
out = sys.stdout.buffer
val = b"x" * 100
for i in range(int(sys.argv[1])):
    k = b"memtier-%d" % i
    out.write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$100\r\n%s\r\n" % (len(k), k, val))
EOF
limit=$(used_memory)
stop "$pid"

ideal=$(python3 - "$keys" "$zipf" <<'EOF'
import sys
n, s = int(sys.argv[1]), float(sys.argv[2])
w = [i ** -s for i in range(1, n + 1)]
print(f"{sum(w[: n // 5]) / sum(w):.3f}")
EOF
)

# Prints the hit ratio of one run: a warm-up of REQS GETs (so compulsory
# misses of keys never asked for before do not count), then REQS GETs with
# other seeds, measured.
run() { # scan_share server-cmd...
  local share=$1; shift
  local pid out seed
  pid=$(serve "$port" pin 0 "$@")
  for seed in 1 2; do
    out=$( (pin 1 target/release/loadgen -s 127.0.0.1 -p "$port" -t 1 -c "$conns" \
        --pipeline 4 --ratio 0:1 --key-pattern Z:Z --key-minimum 0 \
        --key-maximum "$((keys - 1))" --key-zipf-exp "$zipf" -d 100 -n "$((reqs / conns))" \
        --cache-aside --distinct-client-seed --seed "$seed" --scan-ratio "$share" \
        --hide-histogram -q) 2>&1)
  done
  stop "$pid"
  awk '/^Hit ratio:/ { print $3 }' <<<"$out"
}

echo "keys=$keys reqs=$reqs zipf=$zipf maxmemory=$limit (redis-server's used_memory with $((keys / 5)) keys); ideal $ideal"
echo "| server | policy | Zipfian | Zipfian + ${scan} scan |"
echo "|---|---|---:|---:|"
row() { # name policy server-cmd...
  local name=$1 policy=$2; shift 2
  local a b
  a=$(run 0 "$@" --maxmemory "$limit" --maxmemory-policy "$policy")
  b=$(run "$scan" "$@" --maxmemory "$limit" --maxmemory-policy "$policy")
  echo "| $name | $policy | $a | $b |"
}
# EXTRA: more flags for every server (e.g. EXTRA="--maxmemory-samples 10").
EXTRA=${EXTRA:-}
# ROWS picks rows, e.g. ROWS="ember:allkeys-tinylfu redis-server:allkeys-lru".
rows=${ROWS:-"redis-server:allkeys-lru ember:allkeys-lru redis-server:allkeys-lfu ember:allkeys-lfu ember:allkeys-tinylfu"}
for r in $rows; do
  case ${r%%:*} in
    redis-server) row redis-server "${r#*:}" redis-server --port "$port" --save '' --appendonly no $EXTRA ;;
    ember) row ember "${r#*:}" target/release/ember --port "$port" --save '' $EXTRA ;;
  esac
done
