#!/usr/bin/env bash
# Expiry-storm comparison: ember --shards 1 (the single-threaded design),
# ember with all shards, and redis-server 7, each pinned to its own core(s),
# with loadgen pinned to core 0. Writes JSON, a markdown table and charts
# under benches/storm/out/<scenario>/.
#
# Usage: benches/storm/run.sh [storm|mixed|big] [keys]
#   storm  KEYS volatile keys expire at one instant (default 2,000,000)
#   mixed  the same, while as many other keys carry long TTLs
#   big    10,000,000 volatile keys
# Env: RATE background requests/s (40000); PRE seconds of background traffic
# before the instant (6: long enough that the table can show the p99.9 of
# quiet stretches as long as a storm, the machine's noise without one).
set -euo pipefail
cd "$(dirname "$0")/../.."

scenario=${1:-storm}
keys=${2:-2000000}
[ "$scenario" = big ] && keys=${2:-10000000}
out=benches/storm/out/$scenario
mkdir -p "$out"

if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
  echo "redis-server and redis-cli are needed: apt-get install -y redis-server" >&2
  exit 1
fi
cores=$(nproc)
# With more than 2 cores the sharded server gets every core but loadgen's;
# on 2 cores it runs 2 shards over both, sharing core 0 with loadgen.
server_cores="1-$((cores - 1))"
all_shards=$((cores > 2 ? cores - 1 : 2))
[ "$cores" -le 2 ] && server_cores="0-1"

cargo build --release --workspace --locked -q
ember=target/release/ember
loadgen=target/release/loadgen

pids=()
# Wait for the servers to exit: one holding gigabytes takes a while, and a
# run started at once would find its ports still taken.
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

start() { # name port cmd...
  local port=$2; shift 2
  "$@" >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.1; done
  echo "server on $port did not start" >&2; exit 1
}

start ember1 7101 taskset -c 1 $ember --port 7101 --save '' --shards 1
start emberN 7102 taskset -c "$server_cores" $ember --port 7102 --save '' --shards "$all_shards"
start redis 7103 taskset -c 1 redis-server --port 7103 --save '' --appendonly no
# Each server logs its own stalls of 1 ms or more (LATENCY; loadgen resets
# it after the load and reads it at the end).
for port in 7101 7102 7103; do
  redis-cli -p "$port" config set latency-monitor-threshold 1 >/dev/null
done

if [ "$scenario" = mixed ]; then
  # As many keys again with TTLs of an hour: random samples mostly miss.
  for port in 7101 7102 7103; do
    awk -v n="$keys" 'BEGIN { for (i = 0; i < n; i++) printf "*5\r\n$3\r\nSET\r\n$%d\r\nlong:%d\r\n$1\r\nv\r\n$2\r\nEX\r\n$4\r\n3600\r\n", length("long:" i), i }' \
      | redis-cli -p "$port" --pipe >/dev/null
  done
fi

# Background: 50 connections at pipeline 1, 1:10 SET:GET over 1M keys without
# TTL, open loop at a fixed rate (latency from the intended send time).
taskset -c 0 $loadgen compare \
  --target ember-1shard=127.0.0.1:7101 \
  --target "ember-${all_shards}shards=127.0.0.1:7102" \
  --target redis=127.0.0.1:7103 \
  --scenario storm --keys "$keys" --data-size 32 \
  --clients 50 --pipeline 1 --ratio 1:10 --rate "${RATE:-40000}" --bg-keys 1000000 \
  --pre "${PRE:-6}" --post 2 --cap 60 --out-dir "$out" -q
echo "results: $out/compare.md"
cat "$out/compare.md"

# ember's own account of its sweep, from INFO: the longest slice, the CPU it
# spent, and per expired key (the latency table above also carries the
# machine's noise; these do not).
{
  echo
  echo "| ember's sweep (INFO) | ember-1shard | ember-${all_shards}shards |"
  echo "|---|---:|---:|"
  field() { redis-cli -p "$1" info stats | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'; }
  for f in expired_keys expire_cycle_cpu_milliseconds expire_slices expire_slice_max_us expired_time_cap_reached_count expire_lag_p99_ms expire_lag_max_ms; do
    echo "| $f | $(field 7101 $f) | $(field 7102 $f) |"
  done
  cpu_per_key() { awk -v ms="$(field "$1" expire_cycle_cpu_milliseconds)" -v n="$(field "$1" expired_keys)" 'BEGIN { if (n > 0) printf "%.3f", ms * 1000 / n }'; }
  echo "| sweep CPU per expired key (µs) | $(cpu_per_key 7101) | $(cpu_per_key 7102) |"
} | tee "$out/ember-sweep.md"
