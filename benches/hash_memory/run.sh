#!/usr/bin/env bash
# Memory of N small hashes (5 fields, 4-byte names, 10-byte values):
# ember --shards 1 and redis-server, plus ember with a TTL on every field
# (HPEXPIRE; redis-server 7.0 has no field TTLs). Servers on core 1, the
# loader (redis-cli --pipe) on core 0. Prints used_memory growth per hash.
#
# Usage: benches/hash_memory/run.sh [hashes]   (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000000}
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
cargo build --release --workspace --locked -q
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 benches/hash_memory/gen.py "$n" > "$tmp/plain.resp"
python3 benches/hash_memory/gen.py "$n" ttl > "$tmp/ttl.resp"

used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'; }

measure() { # label port input cmd...
  local label=$1 port=$2 input=$3; shift 3
  taskset -c 1 "$@" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  sleep 1
  local before after keys
  before=$(used "$port")
  taskset -c 0 redis-cli -p "$port" --pipe < "$input" >/dev/null
  sleep 2
  after=$(used "$port")
  keys=$(redis-cli -p "$port" dbsize)
  printf '%-22s keys=%s encoding=%s used_memory_growth=%s per_hash=%s B\n' "$label" "$keys" \
    "$(redis-cli -p "$port" object encoding hash:0000001)" "$((after - before))" "$(( (after - before) / keys ))"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

measure "ember-1shard" 7401 "$tmp/plain.resp" target/release/ember --port 7401 --save '' --shards 1
measure "ember-1shard+field-ttl" 7402 "$tmp/ttl.resp" target/release/ember --port 7402 --save '' --shards 1
measure "redis" 7403 "$tmp/plain.resp" redis-server --port 7403 --save '' --appendonly no
