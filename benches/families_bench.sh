#!/usr/bin/env bash
# Throughput of the bitmap, HyperLogLog, stream and geo commands, ember
# --shards 1 against redis-server 7.0, each pinned to core 1 with
# redis-benchmark on core 0 (-P 16, random arguments from -r; GEOADD's
# coordinates 0..84), neither
# taking snapshots. Prints requests/s per command and the ratio.
#
#   SETBIT    one bit of a 1 Mbit string            BITCOUNT  that string, whole
#   PFADD     random elements into one HLL           PFCOUNT   that HLL (cached)
#   XADD      auto IDs into one stream               XREADGROUP one new entry per call
#   GEOADD    random points into one key             GEOSEARCH 100 km around a point, COUNT 10
#
# Memory: bytes per stream entry (100k XADDs of two field-value pairs) and
# per HyperLogLog key (10k keys of 100 elements each), `used_memory` growth.
#
# Usage: benches/families_bench.sh [requests] [rounds]; needs target/release/ember.
set -euo pipefail
n=${1:-200000}
rounds=${2:-2}
cd "$(dirname "$0")/.."

. benches/serve.sh

bench() {
    taskset -c 0 redis-benchmark -p "$1" -n "$n" -P 16 -r "${R:-1000000}" -q "${@:2}" 2>/dev/null \
        | tr '\r' '\n' | grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1
}

used() { redis-cli -p "$1" info memory | tr -d '\r' | awk -F: '$1=="used_memory"{print $2}'; }

# Sends generated commands through redis-cli --pipe.
pipe() { python3 -c "$2" | redis-cli -p "$1" --pipe >/dev/null; }

resp='
import sys
def cmd(*a):
    sys.stdout.write("*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x), x) for x in a))
'

names=(SETBIT BITCOUNT PFADD PFCOUNT XADD XREADGROUP GEOADD GEOSEARCH)
declare -A rate
printf '%-6s %-6s' round server; printf ' %10s' "${names[@]}" per-entry per-hll; echo
for round in $(seq "$rounds"); do
    for server in redis ember; do
        port=$((7351 + round * 2)); [ $server = ember ] && port=$((port + 1))
        if [ $server = redis ]; then
            pid=$(serve $port taskset -c 1 redis-server --port $port --save '' --appendonly no)
        else
            pid=$(serve $port taskset -c 1 target/release/ember --port $port --save '' --shards 1)
        fi
        redis-cli -p $port setbit bits 1048575 0 >/dev/null
        r=()
        r+=("$(bench $port SETBIT bits 524287 1)")
        r+=("$(bench $port BITCOUNT bits)")
        r+=("$(bench $port PFADD hll e:__rand_int__)")
        r+=("$(bench $port PFCOUNT hll)")
        r+=("$(bench $port XADD s '*' field value:__rand_int__)")
        redis-cli -p $port XGROUP CREATE s g 0 >/dev/null
        r+=("$(bench $port XREADGROUP GROUP g c COUNT 1 STREAMS s '>')")
        r+=("$(R=85 bench $port GEOADD g __rand_int__ __rand_int__ m:__rand_int__)")
        pipe $port "$resp
import random
random.seed(7)
for i in range(10000):
    cmd('GEOADD', 'pts', '%.6f' % random.uniform(5, 25), '%.6f' % random.uniform(33, 45), 'p%d' % i)"
        r+=("$(bench $port GEOSEARCH pts FROMLONLAT 15 37 BYRADIUS 100 km COUNT 10 ASC)")
        redis-cli -p $port flushall >/dev/null
        sleep 0.5
        before=$(used $port)
        pipe $port "$resp
for i in range(100000):
    cmd('XADD', 'es', '*', 'sensor', 'temp', 'value', str(i % 1000))"
        sleep 0.5
        entry=$(( ($(used $port) - before) / 100000 ))
        redis-cli -p $port flushall >/dev/null
        sleep 0.5
        before=$(used $port)
        pipe $port "$resp
for k in range(10000):
    cmd('PFADD', 'h:%d' % k, *['e%d' % (k * 100 + i) for i in range(100)])"
        sleep 0.5
        hll=$(( ($(used $port) - before) / 10000 ))
        printf '%-6s %-6s' "$round" $server; printf ' %10s' "${r[@]}" "$entry B" "$hll B"; echo
        for i in "${!names[@]}"; do rate[$round,$server,$i]=${r[$i]}; done
        kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
    done
    printf '%-6s %-6s' "$round" ratio
    for i in "${!names[@]}"; do
        printf ' %9.2fx' "$(echo "${rate[$round,ember,$i]} / ${rate[$round,redis,$i]}" | bc -l)"
    done
    echo
done
