#!/usr/bin/env bash
# Transactions side by side: a 2-key MULTI/EXEC whose keys hash to any shard,
# the same with one {hash tag} (one shard), and redis-server; plus the cost
# of one hop between shards (GET on a key of the connection's own shard vs
# one of the other shard, one connection, no pipelining).
#
# Usage: benches/tx_bench.sh [seconds per run]   (default 10)
# Pinning: single-threaded servers on core 1, loadgen on core 0. ember with 2
# shards gets cores 0-1 on a 2-core machine (it shares core 0 with loadgen).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
cargo build --release --locked -q --workspace
cores=$(nproc)
wide="0-$((cores - 1))"

serve() { # port cmd...
  local port=$1; shift
  "$@" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "$pid"
}

tx() { # label port template
  local out
  out=$(taskset -c 0 target/release/loadgen -s 127.0.0.1 -p "$2" -t 1 -c 50 --test-time "$secs" \
    --key-maximum 100000 --hide-histogram -q --command "$3" 2>&1 | grep -E '^(Txs|Totals)' | head -1)
  printf '%-22s %-44s %s\n' "$1" "$3" "$out"
}

cross="MULTI ; INCR __key__ ; INCR __key2__ ; EXEC"
tagged="MULTI ; INCR {__key__}a ; INCR {__key__}b ; EXEC"
echo "columns: server, template, loadgen row (ops/s, hits, misses, avg latency ms, p50, p99, p99.9 ...)"
pid=$(serve 7301 taskset -c "$wide" target/release/ember --port 7301 --save '' --shards 2)
tx "ember-2shards" 7301 "$cross"
tx "ember-2shards" 7301 "$tagged"
# Hop cost: keys a and b live on different shards of 2; the connection is on one of them.
for key in a b; do
  redis-cli -p 7301 set "$key" v >/dev/null
  printf 'ember-2shards GET %s (one connection): ' "$key"
  taskset -c 0 redis-benchmark -p 7301 -c 1 -n 100000 -q GET "$key" | tr '\r' '\n' | grep 'requests per second' | tail -1
done
kill "$pid"
pid=$(serve 7302 taskset -c 1 target/release/ember --port 7302 --save '' --shards 1)
tx "ember-1shard" 7302 "$cross"
tx "ember-1shard" 7302 "$tagged"
kill "$pid"
pid=$(serve 7303 taskset -c 1 redis-server --port 7303 --save '' --appendonly no)
tx "redis" 7303 "$cross"
tx "redis" 7303 "$tagged"
kill "$pid"
