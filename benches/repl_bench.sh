#!/usr/bin/env bash
# Replication's figures, ember and redis-server 7.0.15 side by side:
#
# 1. Full-sync time of KEYS keys (DEBUG POPULATE, 32-byte values) for the
#    four pairings ember->ember, redis->redis, ember->redis, redis->ember:
#    from REPLICAOF to the replica's `master_link_status:up` (the file sent,
#    read and loaded). The master is pinned to one core, the replica to the
#    other; each pairing ROUNDS times, the pairings of one master in turn.
#    Only two servers run at a time (one master, one replica).
# 2. The master's SET throughput (redis-benchmark -t set -P 16) with no
#    replica, then with one replica attached, as a ratio, for each server
#    (ember->ember and redis->redis), the rounds alternating.
# 3. Replication lag during the with-replica runs of 2: INFO sampled every
#    10 ms on both sides; bytes = the master's `master_repl_offset` minus
#    the replica's `slave_repl_offset`; ms = how long before the replica's
#    sample the master's offset had reached what the replica applied
#    (interpolated between the master's samples).
#
#   cargo build --release && benches/repl_bench.sh [keys] [rounds] [requests]
#   (keys 0: only 2 and 3)
#
# Defaults: 10000000 keys, 2 rounds, 2000000 SETs. Servers run with
# --repl-diskless-sync-delay 0 (redis-server waits 5 s by default for more
# replicas to share the transfer),
# --save '' (no files but the replica's sync file, deleted at the end);
# ember with --shards 1 (one core each).
set -u
cd "$(dirname "$0")/.."
. benches/serve.sh
keys=${1:-10000000}
rounds=${2:-2}
requests=${3:-2000000}
mport=26470
rport=26471
dir=$(mktemp -d -t repl-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT

start() {  # start NAME PORT -> pid (the master on core 0, a replica on core 1)
  local name=$1 port=$2 core=1
  [ "$port" = $mport ] && core=0
  mkdir -p "$dir/$port"
  if [ "$name" = ember ]; then
    serve "$port" taskset -c $core target/release/ember --port "$port" --shards 1 --save '' --dir "$dir/$port" --enable-debug-command yes --repl-diskless-sync-delay 0
  else
    serve "$port" taskset -c $core redis-server --port "$port" --save '' --dir "$dir/$port" --enable-debug-command yes --repl-diskless-sync-delay 0
  fi
}

info_field() {  # info_field PORT FIELD
  redis-cli -p "$1" info replication | tr -d '\r' | sed -n "s/^$2://p"
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Seconds from REPLICAOF until the replica's link is up (its load done).
sync_time() {  # sync_time REPLICA-NAME -> seconds
  local rpid t0 t1
  rpid=$(start "$1" $rport)
  t0=$(now_ms)
  redis-cli -p $rport replicaof 127.0.0.1 $mport >/dev/null
  while [ "$(info_field $rport master_link_status)" != up ]; do sleep 0.02; done
  t1=$(now_ms)
  local n; n=$(redis-cli -p $rport dbsize)
  [ "$n" = "$keys" ] || echo "  (replica holds $n keys, not $keys)" >&2
  stop "$rpid"
  rm -rf "${dir:?}/$rport"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }'
}

echo "# $(date -u '+%F %T') UTC, load: $(cut -d' ' -f1-3 /proc/loadavg), $keys keys, $rounds rounds"
declare -A secs
[ "$keys" -gt 0 ] && echo "## full sync"
for master in ember redis; do
  [ "$keys" -gt 0 ] || break
  mpid=$(start $master $mport)
  t0=$(now_ms)
  redis-cli -p $mport debug populate "$keys" key 32 >/dev/null
  echo "  $master master: DEBUG POPULATE $keys took $(( $(now_ms) - t0 )) ms" >&2
  for round in $(seq "$rounds"); do
    for replica in ember redis; do
      s=$(sync_time $replica)
      secs[$master-$replica]+="$s "
      echo "  round $round $master->$replica ${s}s" >&2
    done
  done
  stop "$mpid"
  rm -rf "${dir:?}/$mport"
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
if [ "$keys" -gt 0 ]; then
  printf '%-16s %10s   %s\n' pairing 'median s' 'rounds'
  for pair in ember-ember redis-redis ember-redis redis-ember; do
    printf '%-16s %10s   %s\n' "${pair/-/->}" "$(echo "${secs[$pair]}" | median)" "${secs[$pair]}"
  done
fi

# The lag sampler: prints "bytes_median bytes_p99 bytes_max ms_median ms_p99 ms_max".
sampler() {
  python3 - "$mport" "$rport" "$1" <<'EOF'
import bisect, socket, sys, time

def conn(port):
    s = socket.create_connection(("127.0.0.1", int(port)))
    return s, s.makefile("rb")

def info(c, field):
    s, f = c
    s.sendall(b"*2\r\n$4\r\nINFO\r\n$11\r\nreplication\r\n")
    n = int(f.readline()[1:])
    body = f.read(n + 2).decode()
    for line in body.split("\r\n"):
        if line.startswith(field + ":"):
            return int(line.split(":", 1)[1])
    return None

m, r = conn(sys.argv[1]), conn(sys.argv[2])
stop = sys.argv[3]
mt, mo, lag_b, lag_ms = [], [], [], []
start = info(m, "master_repl_offset")
while True:
    try:
        open(stop).close()
        break
    except FileNotFoundError:
        pass
    t = time.monotonic()
    mof = info(m, "master_repl_offset")
    rof = info(r, "slave_repl_offset") or 0
    t2 = time.monotonic()
    mt.append(t); mo.append(mof)
    if mof > start + 100000:  # the benchmark is running
        lag_b.append(max(0, mof - rof))
        i = bisect.bisect_left(mo, rof)
        if i >= len(mo):
            lag_ms.append(0.0)
        elif i == 0 or mo[i] == rof:
            lag_ms.append(max(0.0, (t2 - mt[i]) * 1000))
        else:
            # when the master's offset passed rof, between samples i-1 and i
            f = (rof - mo[i - 1]) / (mo[i] - mo[i - 1])
            at = mt[i - 1] + f * (mt[i] - mt[i - 1])
            lag_ms.append(max(0.0, (t2 - at) * 1000))
    time.sleep(0.01)

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p))] if v else 0

print(pct(lag_b, 0.5), pct(lag_b, 0.99), max(lag_b or [0]),
      "%.1f" % pct(lag_ms, 0.5), "%.1f" % pct(lag_ms, 0.99), "%.1f" % max(lag_ms or [0]))
EOF
}

bench() {  # bench PORT -> SET rps
  timeout 300 taskset -c 1 redis-benchmark -p "$1" -t set -P 16 -c 50 -n "$requests" -r 100000 -d 32 -q 2>/dev/null \
    | tr '\r' '\n' | sed -n 's/^SET: \([0-9.]*\) requests per second.*/\1/p' | tail -1
}

echo "## throughput and lag (redis-benchmark -t set -P 16 -c 50 -n $requests -r 100000 -d 32)"
declare -A alone with lagb lagms ratio
for round in $(seq "$rounds"); do
  for s in ember redis; do
    mpid=$(start $s $mport)
    a=$(bench $mport)
    redis-cli -p $mport flushall >/dev/null
    rpid=$(start $s $rport)
    redis-cli -p $rport replicaof 127.0.0.1 $mport >/dev/null
    while [ "$(info_field $rport master_link_status)" != up ]; do sleep 0.02; done
    rm -f "$dir/stop"
    sampler "$dir/stop" >"$dir/lag" &
    spid=$!
    w=$(bench $mport)
    touch "$dir/stop"; wait $spid
    read -r b50 b99 bmax m50 m99 mmax <"$dir/lag"
    stop "$rpid"; stop "$mpid"
    rm -rf "${dir:?}/$mport" "${dir:?}/$rport"
    alone[$s]+="$a "; with[$s]+="$w "; lagb[$s]+="$b50 "; lagms[$s]+="$m50 "
    ratio[$s]+="$(awk -v a="$a" -v w="$w" 'BEGIN { if (a > 0) printf "%.2f", w / a; else print 0 }') "
    echo "  round $round $s: alone $a rps, with a replica $w rps; lag bytes median/p99/max $b50/$b99/$bmax, ms $m50/$m99/$mmax" >&2
  done
done
# The ratio is the median of each round's (alone and with a replica run
# back to back, so a change in the machine's load meets both alike).
printf '%-14s %12s %14s %7s %16s %13s\n' server 'alone rps' 'replica rps' ratio 'lag bytes (med)' 'lag ms (med)'
for s in ember redis; do
  printf '%-14s %12s %14s %7s %16s %13s\n' $s "$(echo "${alone[$s]}" | median)" "$(echo "${with[$s]}" | median)" \
    "$(echo "${ratio[$s]}" | median)" "$(echo "${lagb[$s]}" | median)" "$(echo "${lagms[$s]}" | median)"
done
echo "# done $(date -u '+%T') UTC, load: $(cut -d' ' -f1-3 /proc/loadavg)"
