#!/usr/bin/env bash
# BGSAVE under load, side by side: ember --shards 1, ember with 2 shards and
# redis-server 7, one at a time (the data set is gigabytes). For each: N keys
# of 32-byte values (DEBUG POPULATE N key 32 on both, checked by DBSIZE),
# loadgen's background traffic (50 connections, 1:10 SET:GET over those keys,
# open loop at RATE requests/s), a BGSAVE in the middle of it, then a restart
# from the file it wrote. Reports, per server:
#   - the other clients' latency while the save ran: the worst 100 ms
#     window's p99.9 and the max (loadgen's windows between BGSAVE and
#     rdb_bgsave_in_progress:0), and the p99.9 of the quiet windows before
#   - Redis's fork stall (latest_fork_usec; ember forks nothing: 0)
#   - peak RSS during the save over RSS before: the server plus its save
#     process (ember) or its forked child (redis), both PIDs' RSS summed,
#     sampled every 50 ms
#   - the save time (BGSAVE to rdb_bgsave_in_progress:0) and the file size
#   - the start-up load of that file ("DB loaded from disk" in the log)
# The servers' core(s): ember --shards 1 and redis on core 1; 2 shards on
# cores 0-1; loadgen on core 0. The dump files are deleted at the end.
#
#   cargo build --release --workspace && benches/bgsave_bench.sh [keys]
# Env: RATE (20000), LOAD_SECS (seconds of background traffic, 40).
set -u
cd "$(dirname "$0")/.."
. benches/serve.sh
keys=${1:-10000000}
rate=${RATE:-20000}
secs=${LOAD_SECS:-40}
port=26460
ember=target/release/ember
loadgen=target/release/loadgen
dir=$(mktemp -d -t bgsave-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT

info() { redis-cli -p $port info "$1" | tr -d '\r' | awk -F: -v f="$2" '$1 == f { print $2 }'; }
now_ms() { date +%s%3N; }
# RSS (KiB) of a process and its children (ember's save process, redis's fork).
rss_tree() {
  local total=0 p
  for p in "$1" $(pgrep -P "$1"); do
    v=$(awk '/^VmRSS:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
    total=$((total + ${v:-0}))
  done
  echo $total
}

start_server() { # name -> pid
  local args=(--port $port --save '' --appendonly no --dir "$dir" --logfile "$dir/$1.log"
              --enable-debug-command yes)
  case $1 in
    ember-1shard) serve $port taskset -c 1 $ember --shards 1 "${args[@]}" ;;
    ember-2shards) serve $port taskset -c 0-1 $ember --shards 2 "${args[@]}" ;;
    redis) serve $port taskset -c 1 redis-server "${args[@]}" ;;
  esac
}

# Latency of the windows in [from, to) (Unix ms) and of those before.
windows() { # json from to
  python3 - "$@" <<'EOF'
import json, sys
path, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
doc = json.load(open(path))
def find(v, key):
    if isinstance(v, dict):
        if key in v:
            return v[key]
        for x in v.values():
            r = find(x, key)
            if r is not None:
                return r
    return None
start = find(doc, "Start time")
wins = find(doc, "Time-Series-100ms") or []
during = [w for w in wins if t0 <= start + w["t_ms"] < t1 and w["count"]]
before = [w for w in wins if start + w["t_ms"] < t0 - 100 and w["count"]]
def worst(ws, k): return max((w[k] for w in ws), default=0.0)
def median(ws, k):
    xs = sorted(w[k] for w in ws)
    return xs[len(xs) // 2] if xs else 0.0
print(f"{worst(during, 'p99.9_ms'):.2f} {worst(during, 'max_ms'):.2f} "
      f"{median(during, 'p99.9_ms'):.2f} {median(before, 'p99.9_ms'):.2f}")
EOF
}

rows=()
for name in ember-1shard ember-2shards redis; do
  rm -f "$dir/dump.rdb"
  pid=$(start_server $name)
  redis-cli -p $port debug populate "$keys" key 32 >/dev/null
  loaded=$(redis-cli -p $port dbsize)
  [ "$loaded" = "$keys" ] || echo "$name: DBSIZE $loaded, not $keys" >&2
  rss0=$(rss_tree "$pid")
  taskset -c 0 $loadgen -s 127.0.0.1 -p $port --test-time "$secs" --threads 1 --clients 50 \
    --rate-limiting $((rate / 50)) --ratio 1:10 --key-prefix key: --key-maximum $((keys - 1)) \
    --data-size 32 --json-out-file "$dir/lg.json" -q --hide-histogram >/dev/null 2>&1 &
  lg=$!
  sleep 5
  t0=$(now_ms)
  redis-cli -p $port bgsave >/dev/null
  peak=$rss0
  while :; do
    r=$(rss_tree "$pid"); [ "$r" -gt "$peak" ] && peak=$r
    [ "$(info persistence rdb_bgsave_in_progress)" = 0 ] && break
    sleep 0.05
  done
  t1=$(now_ms)
  fork_us=$(info stats latest_fork_usec)
  status=$(info persistence rdb_last_bgsave_status)
  wait $lg
  read -r p999 max p999_median quiet < <(windows "$dir/lg.json" "$t0" "$t1")
  size=$(stat -c %s "$dir/dump.rdb" 2>/dev/null || echo 0)
  stop "$pid"
  # The same file at start-up.
  pid=$(start_server $name)
  for _ in $(seq 600); do
    grep -q "DB loaded from disk" "$dir/$name.log" && break
    sleep 0.1
  done
  load=$(sed -n 's/.*DB loaded from disk: \([0-9.]*\) seconds.*/\1/p' "$dir/$name.log" | tail -1)
  [ "$(redis-cli -p $port dbsize)" = "$keys" ] || echo "$name: the restart has $(redis-cli -p $port dbsize) keys" >&2
  stop "$pid"
  rm -f "$dir/dump.rdb"
  ratio=$(awk -v a="$peak" -v b="$rss0" 'BEGIN { printf "%.2f", a / b }')
  rows+=("| $name | $p999 | $p999_median | $quiet | $max | $fork_us | $((rss0 / 1024)) | $((peak / 1024)) | $ratio | $(((t1 - t0))) | $((size / 1048576)) | ${load:-?} | $status |")
done

echo "BGSAVE of $keys keys (32-byte values) under $rate req/s, $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| server | p99.9 worst window during (ms) | p99.9 median window during (ms) | p99.9 before (ms) | max during (ms) | latest_fork_usec | RSS before (MiB) | peak RSS during (MiB) | peak / before | save time (ms) | file (MiB) | start-up load (s) | status |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
