#!/usr/bin/env bash
# GEOADD and GEOSEARCH throughput, ember --shards 1 against redis-server
# 7.0, each pinned to core 1 with redis-benchmark on core 0 (-P 16).
#
# GEOADD: random integer points (0..84 degrees each way, redis-benchmark's
# __rand_int__) into one key. GEOSEARCH: 10k random points around the
# Mediterranean preloaded, then a 100 km radius search with COUNT 10 ASC
# (about 130 members in range) and a 200 km box search, unsorted.
#
# Usage: benches/geo_bench.sh [requests] [rounds]; needs target/release/ember.
set -euo pipefail
n=${1:-200000}
rounds=${2:-3}
cd "$(dirname "$0")/.."

. benches/serve.sh

preload() {
    python3 - "$1" <<'EOF' | redis-cli -p "$1" --pipe >/dev/null
import random, sys
random.seed(7)
out = sys.stdout
for chunk in range(100):
    args = ["GEOADD", "pts"]
    for i in range(100):
        args += ["%.6f" % random.uniform(5, 25), "%.6f" % random.uniform(33, 45), "p%d" % (chunk * 100 + i)]
    out.write("*%d\r\n" % len(args))
    for a in args:
        out.write("$%d\r\n%s\r\n" % (len(a), a))
EOF
}

bench() {
    taskset -c 0 redis-benchmark -p "$1" -n "$n" -P 16 -r 85 -q "${@:2}" 2>/dev/null \
        | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1
}

printf '%-6s %-8s %12s %12s %12s\n' round server GEOADD GEOSEARCH_R GEOSEARCH_BOX
for round in $(seq "$rounds"); do
    for server in redis ember; do
        port=$((7311 + round * 2)); [ $server = ember ] && port=$((port + 1))
        if [ $server = redis ]; then
            pid=$(serve $port taskset -c 1 redis-server --port $port --save '' --appendonly no)
        else
            pid=$(serve $port taskset -c 1 target/release/ember --port $port --save '' --shards 1)
        fi
        preload $port
        add=$(bench $port GEOADD g __rand_int__ __rand_int__ m:__rand_int__)
        radius=$(bench $port GEOSEARCH pts FROMLONLAT 15 37 BYRADIUS 100 km COUNT 10 ASC)
        box=$(bench $port GEOSEARCH pts FROMLONLAT 15 37 BYBOX 200 200 km)
        printf '%-6s %-8s %12s %12s %12s\n' "$round" $server "$add" "$radius" "$box"
        kill "$pid"; wait "$pid" 2>/dev/null || true
    done
done
