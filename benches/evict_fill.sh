#!/usr/bin/env bash
# A write flood past maxmemory, ember next to redis-server: does the limit
# hold, in used_memory and in RSS, and do other clients' reads stall while
# keys are evicted?
#
# Each server starts empty with `--maxmemory LIMIT` (default 64mb) and
# allkeys-lru. Then, at once:
# - a flood: 50 connections SET random keys of 100-byte values, 4 x LIMIT
#   of values in all, RATE SETs/s each (default 600: 30k/s in all, below
#   what either server serves on one core, so that what the readers see
#   is eviction's stalls and not a saturated server's queue);
# - readers: 4 connections of open-loop GETs, 250/s each, whose
#   latencies (from the intended send time) give p99.9 and max; the flood
#   runs at nice 19 beside them, so that the readers' own process is not
#   starved of its core (its latency would then be loadgen's);
# - a sampler: used_memory (INFO) and the server's RSS (/proc) every
#   50 ms, the peaks kept.
# Printed per server: peak used_memory / LIMIT, peak RSS over the empty
# server's RSS / LIMIT, evicted keys, the readers' p99.9 and max.
#
# Server on core 0; the flood, readers and sampler on core 1 (taskset).
#
# Usage: benches/evict_fill.sh [limit_mb]   (default 64; 4 x 64 MB at 30k SETs/s is
#        about 90 s a server; 32 halves it)
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/serve.sh
mb=${1:-64}
limit=$((mb * 1024 * 1024))
port=${PORT:-7441}
rate=${RATE:-600}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || cargo build --release --locked -q --bin ember -p loadgen

pin() { # core cmd... (exec: in `serve`'s background job the pid is the server's)
  if [ "$(nproc)" -gt 1 ] && command -v taskset >/dev/null; then exec taskset -c "$1" "${@:2}"; else exec "${@:2}"; fi
}

info() { # field
  redis-cli -p "$port" info | tr -d '\r' | awk -F: -v f="$1" '$1 == f { print $2 }'
}

rss() { # pid -> bytes
  awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$1/status"
}

measure() { # name server-cmd...
  local name=$1; shift
  local pid rss0 sets
  pid=$(serve "$port" pin 0 "$@" --maxmemory "$limit" --maxmemory-policy allkeys-lru)
  sleep 1
  rss0=$(rss "$pid")
  # 4 x LIMIT of 100-byte values, spread over the flood's connections.
  sets=$((4 * limit / 100 / 50))
  (pin 1 nice -n 19 target/release/loadgen -s 127.0.0.1 -p "$port" -t 1 -c 50 \
      --rate-limiting "$rate" --ratio 1:0 --key-pattern R:R --key-maximum 100000000 -d 100 -n "$sets" \
      --distinct-client-seed --hide-histogram -q >"$out/flood.txt" 2>&1) &
  local flood=$!
  (pin 1 target/release/loadgen -s 127.0.0.1 -p "$port" -t 1 -c 4 --ratio 0:1 \
      --key-pattern R:R --key-maximum 100000000 --rate-limiting 250 --test-time 600 \
      --distinct-client-seed --json-out-file "$out/read.json" --hide-histogram -q \
      >/dev/null 2>&1) &
  local reader=$!
  local peak_used=0 peak_rss=0 u r
  while kill -0 "$flood" 2>/dev/null; do
    u=$(info used_memory); r=$(rss "$pid")
    [ "${u:-0}" -gt "$peak_used" ] && peak_used=$u
    [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
    sleep 0.05
  done
  # The readers stop with SIGINT and write their report.
  kill -INT "$reader" 2>/dev/null || true
  wait "$reader" 2>/dev/null || true
  local evicted
  evicted=$(info evicted_keys)
  stop "$pid"
  python3 - "$name" "$limit" "$peak_used" "$peak_rss" "$rss0" "$evicted" "$out/read.json" <<'EOF'
import json, sys
name, limit, used, rss, rss0, evicted, path = sys.argv[1:]
limit, used, rss, rss0 = int(limit), int(used), int(rss), int(rss0)
gets = json.load(open(path))["ALL STATS"]["Gets"]
p999 = gets["Percentile Latencies"]["p99.900"]
print(f"| {name} | {used / limit:.3f} | {(rss - rss0) / limit:.3f} | {evicted} | {p999:.2f} | {gets['Max Latency']:.2f} |")
EOF
}

echo "maxmemory ${mb} MB, allkeys-lru; flood of 4x that in 100-byte SETs from 50 connections at $((rate * 50))/s; $(uptime | sed 's/.*load/load/')"
echo "| server | peak used_memory / maxmemory | peak RSS over empty / maxmemory | evicted | reads p99.9 ms | reads max ms |"
echo "|---|---:|---:|---:|---:|---:|"
measure "ember --shards 1" target/release/ember --port "$port" --save '' --shards 1
measure "ember" target/release/ember --port "$port" --save ''
measure redis-server redis-server --port "$port" --save '' --appendonly no
