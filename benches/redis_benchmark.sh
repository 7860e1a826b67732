#!/usr/bin/env bash
# redis-benchmark against ember --shards 1, ember with all shards and
# redis-server, servers on core 1 and the benchmark on core 0. Prints
# requests/s and the server's CPU time per request (from /proc/<pid>/stat,
# user and system, over the whole run).
#
# The VM's speed drifts from minute to minute, so with ROUNDS=n the servers
# take turns n times (a fresh server each turn) and a summary gives each
# server's median CPU per request and its ratio to redis-server's.
#
# EMBER_BASE=<path to another ember binary> adds the servers base1 and baseN
# (that binary with 1 and all shards), so a change is measured against the
# build before it in the same alternating rounds:
#   EMBER_BASE=/tmp/ember-old ROUNDS=3 SERVERS="base1 ember1" PIPELINES=16 ...
#
# Usage: [ROUNDS=1] [SERVERS="ember1 emberN redis"] [TESTS=set,get]
#        [PIPELINES="16 1"] benches/redis_benchmark.sh [requests]
#   (default 1000000 requests per test; TESTS as redis-benchmark -t takes them,
#   e.g. TESTS=lpush,lpop,sadd,hset,zadd,lrange_100 PIPELINES=16)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
tests=${TESTS:-set,get}
pipelines=${PIPELINES:-16 1}
rounds=${ROUNDS:-1}
servers=${SERVERS:-ember1 emberN redis}
command -v redis-benchmark >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
cargo build --release --workspace --locked -q
cores=$(nproc)
# With more than 2 cores the sharded server gets every core but the client's;
# on 2 cores it runs 2 shards over both, sharing core 0 with the client.
server_cores="1-$((cores - 1))"
all_shards=$((cores > 2 ? cores - 1 : 2))
[ "$cores" -le 2 ] && server_cores="0-1"
tick=$(getconf CLK_TCK)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# user and system clock ticks of a process so far
cpu_ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; }

run_one() { # round label port pid
  local round=$1 label=$2 port=$3 pid=$4
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
    echo "$before $after" | awk -v r="$round" -v l="$label" -v p="$p" -v s="$rps" -v t="$tick" \
      -v n="$n" -v k="$(echo "$lines" | wc -l)" -v out="$results" '{
        per = 1e6 / t / (k * n); user = ($3 - $1) * per; sys = ($4 - $2) * per
        printf "%-16s -P %-2s %s cpu_us_per_request=%.3f (user %.3f, system %.3f)\n", l, p, s, user + sys, user, sys
        printf "%s %s %s %.4f %.4f\n", r, l, p, user + sys, user >> out }'
  done
}

serve() { # port cmd...
  local port=$1; shift
  "$@" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  echo "$pid"
}

for round in $(seq "$rounds"); do
  [ "$rounds" -gt 1 ] && echo "round $round"
  for server in $servers; do
    case $server in
      ember1) label=ember-1shard; port=7201
        pid=$(serve $port taskset -c 1 target/release/ember --port $port --save '' --shards 1) ;;
      emberN) label="ember-${all_shards}shards"; port=7202
        pid=$(serve $port taskset -c "$server_cores" target/release/ember --port $port --save '' --shards "$all_shards") ;;
      base1) label=base-1shard; port=7204
        pid=$(serve $port taskset -c 1 "${EMBER_BASE:?set EMBER_BASE}" --port $port --shards 1) ;;
      baseN) label="base-${all_shards}shards"; port=7205
        pid=$(serve $port taskset -c "$server_cores" "${EMBER_BASE:?set EMBER_BASE}" --port $port --shards "$all_shards") ;;
      redis) label=redis; port=7203
        pid=$(serve $port taskset -c 1 redis-server --port $port --save '' --appendonly no) ;;
      *) echo "unknown server $server (ember1, emberN, redis, base1, baseN)" >&2; exit 1 ;;
    esac
    run_one "$round" "$label" "$port" "$pid"
    kill "$pid"; wait "$pid" 2>/dev/null || true
  done
done

# "<server> -P <n> <median>" for column $1 of the results (4: total, 5: user)
medians() {
  sort -k2,2 -k3,3n -k"$1","$1"n "$results" | awk -v col="$1" '
    { key = $2 " -P " $3; c[key]++; v[key, c[key]] = $col }
    END { for (k in c) { m = c[k]; h = int((m + 1) / 2)
      printf "%s %.3f\n", k, (m % 2) ? v[k, h] : (v[k, h] + v[k, h + 1]) / 2 } }' | sort
}

if [ "$rounds" -gt 1 ]; then
  echo
  echo "median over $rounds rounds: CPU µs per request (user), and the ratio to redis's median:"
  join -j 1 <(medians 4 | awk '{ print $1 "@" $3, $4 }') <(medians 5 | awk '{ print $1 "@" $3, $4 }') |
    awk '{ split($1, k, "@"); total[$1] = $2; user[$1] = $3; name[$1] = k[1]; pipe[$1] = k[2] }
      END { for (i in total) { ref = "redis@" pipe[i]
        ratio = (ref in total && total[ref] > 0) ? sprintf("%.2fx", total[i] / total[ref]) : "-"
        printf "%-16s -P %-2s %.3f (%.3f)  %s\n", name[i], pipe[i], total[i], user[i], ratio } }' | sort
fi
