#!/usr/bin/env bash
# redis-benchmark against ember --shards 1, ember with all shards and
# redis-server, one after another, servers on core 1 and the benchmark on
# core 0. Prints requests/s and the server's CPU time per request (from
# /proc/<pid>/stat, user+system, over the whole run).
#
# Usage: [TESTS=set,get] [PIPELINES="16 1"] benches/redis_benchmark.sh [requests]
#   (default 1000000 requests per test; TESTS as redis-benchmark -t takes them,
#   e.g. TESTS=lpush,lpop,sadd,hset,zadd,lrange_100 PIPELINES=16)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
tests=${TESTS:-set,get}
pipelines=${PIPELINES:-16 1}
command -v redis-benchmark >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
cargo build --release --workspace --locked -q
cores=$(nproc)
# With more than 2 cores the sharded server gets every core but the client's;
# on 2 cores it runs 2 shards over both, sharing core 0 with the client.
server_cores="1-$((cores - 1))"
all_shards=$((cores > 2 ? cores - 1 : 2))
[ "$cores" -le 2 ] && server_cores="0-1"
tick=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

run_one() { # label port pid
  local label=$1 port=$2 pid=$3
  for p in $pipelines; do
    local before after lines rps
    redis-cli -p "$port" flushall >/dev/null
    before=$(cpu_ticks "$pid")
    # One line per test run ("LRANGE_100 (first 100 elements): 123.4 requests per second";
    # LRANGE runs an LPUSH first, which is counted too).
    lines=$(taskset -c 0 redis-benchmark -p "$port" -t "$tests" -n "$n" -P "$p" -q 2>/dev/null \
      | tr '\r' '\n' | grep -E '^[A-Za-z_0-9 ()]+: [0-9.]+ requests per second')
    after=$(cpu_ticks "$pid")
    rps=$(echo "$lines" | awk -F': ' '{ split($1, w, " "); split($2, v, " ");
      if ($1 ~ /needed/) w[1] = "prefill"; printf "%s=%s ", w[1], v[1] }')
    awk -v l="$label" -v p="$p" -v r="$rps" -v c="$((after - before))" -v t="$tick" -v n="$n" \
      -v k="$(echo "$lines" | wc -l)" \
      'BEGIN { printf "%-16s -P %-2s %s cpu_us_per_request=%.3f\n", l, p, r, c / t * 1e6 / (k * n) }'
  done
}

serve() { # port cmd...
  local port=$1; shift
  "$@" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "$pid"
}

pid=$(serve 7201 taskset -c 1 target/release/ember --port 7201 --shards 1)
run_one "ember-1shard" 7201 "$pid"; kill "$pid"
pid=$(serve 7202 taskset -c "$server_cores" target/release/ember --port 7202 --shards "$all_shards")
run_one "ember-${all_shards}shards" 7202 "$pid"; kill "$pid"
pid=$(serve 7203 taskset -c 1 redis-server --port 7203 --save '' --appendonly no)
run_one "redis" 7203 "$pid"; kill "$pid"
