#!/usr/bin/env bash
# Scripts side by side with redis-server: EVALSHA of a rate limiter (INCR,
# and EXPIRE on the first hit, over 100k keys) at -P 16 and -P 1; then the
# cost of a script whose two keys live on two shards against the same
# script with both keys on one shard, and of one whose second key is
# undeclared (it runs over every shard).
#
# Each row: requests per second, and the server's CPU time per request
# (user + system, from /proc; steadier than throughput on a noisy VM).
#
# Usage: benches/script_bench.sh [requests per run]   (default 300000)
# Pinning: the single-threaded servers on core 0, redis-benchmark on core
# 1. ember with 2 shards gets cores 0-1 (it shares core 1 with the bench).
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-300000}
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
cargo build --release --locked -q
cores=$(nproc)
wide="0-$((cores - 1))"

# serve, stop, cpu_ticks
. "$(dirname "$0")/serve.sh"

bench() { # label port pid pipeline args...
  local label=$1 port=$2 pid=$3 pipeline=$4; shift 4
  local before after rps
  before=$(cpu_ticks "$pid")
  rps=$(taskset -c 1 redis-benchmark -p "$port" -n "$requests" -c 50 -P "$pipeline" -r 100000 \
    --csv "$@" 2>/dev/null | tail -1 | cut -d, -f2 | tr -d '"')
  after=$(cpu_ticks "$pid")
  awk -v l="$label" -v p="$pipeline" -v r="$rps" -v t=$((after - before)) -v n="$requests" \
    -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%-26s -P %-3s %10.0f req/s %7.2f us CPU/req\n", l, p, r, t * 1e6 / hz / n }'
}

limiter='local n = redis.call("INCR", KEYS[1]) if n == 1 then redis.call("EXPIRE", KEYS[1], 60) end return n'
pair='redis.call("INCR", KEYS[1]) return redis.call("INCR", KEYS[2])'
# Its second key undeclared (ARGV): Redis allows it outside cluster mode;
# ember runs the script over every shard (scripting::widen).
undeclared='redis.call("INCR", ARGV[1]) return redis.call("INCR", KEYS[1])'

echo "rate limiter: EVALSHA sha 1 rl:<rand>"
for server in ember-1shard redis; do
  if [ "$server" = redis ]; then
    pid=$(serve 7311 taskset -c 0 redis-server --port 7311 --save '' --appendonly no)
  else
    pid=$(serve 7311 taskset -c 0 target/release/ember --port 7311 --save '' --shards 1)
  fi
  sha=$(redis-cli -p 7311 script load "$limiter")
  for pipeline in 16 1; do
    bench "$server" 7311 "$pid" "$pipeline" evalsha "$sha" 1 'rl:__rand_int__'
  done
  stop "$pid"
done

# {a}, {c} hash to shard 1 of 2, {b} to shard 0.
echo "two keys: EVALSHA sha 2 k1 k2, ember --shards 2"
requests=$((requests / 10)) # the cross-shard rows run at a few thousand per second
pid=$(serve 7312 taskset -c "$wide" target/release/ember --port 7312 --save '' --shards 2)
sha=$(redis-cli -p 7312 script load "$pair")
sha_wide=$(redis-cli -p 7312 script load "$undeclared")
for pipeline in 16 1; do
  bench "one shard {a} {c}" 7312 "$pid" "$pipeline" evalsha "$sha" 2 '{a}__rand_int__' '{c}__rand_int__'
  bench "two shards {a} {b}" 7312 "$pid" "$pipeline" evalsha "$sha" 2 '{a}__rand_int__' '{b}__rand_int__'
  bench "{b} undeclared, wide" 7312 "$pid" "$pipeline" evalsha "$sha_wide" 1 '{a}__rand_int__' '{b}__rand_int__'
done
stop "$pid"
