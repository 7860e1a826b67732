#!/usr/bin/env bash
# The append-only file's cost: redis-benchmark -t set -P 16 against ember and
# redis-server side by side, each with appendonly no, everysec and always,
# the server pinned to one core and the benchmark to another (taskset), both
# started with --save ''. Prints requests per second and each setting's ratio
# to appendonly no of the same server.
#
#   cargo build --release && benches/aof_bench.sh [requests] [server-core] [bench-core]
set -u
cd "$(dirname "$0")/.."
. benches/serve.sh
n=${1:-100000}
score=${2:-0}
bcore=${3:-1}
port=26450
dir=$(mktemp -d -t aof-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
run() {  # run NAME MODE CMD... -> prints rps
  local name=$1 mode=$2; shift 2
  rm -rf "$dir/$name-$mode"; mkdir -p "$dir/$name-$mode"
  local args=(--port $port --save '' --dir "$dir/$name-$mode")
  case $mode in
    no) args+=(--appendonly no) ;;
    *) args+=(--appendonly yes --appendfsync "$mode") ;;
  esac
  local pid
  pid=$(serve $port taskset -c "$score" "$@" "${args[@]}")
  local rps
  rps=$(timeout 120 taskset -c "$bcore" redis-benchmark -p $port -t set -P 16 -c 50 -n "$n" -r 100000 -q 2>/dev/null \
    | tr '\r' '\n' | sed -n 's/^SET: \([0-9.]*\) requests per second.*/\1/p' | tail -1)
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  echo "${rps:-0}"
}
# The two servers take turns at each setting, so a change in the machine's
# load meets both alike.
declare -A base
printf '%-14s %-9s %12s %8s\n' server appendfsync 'SET rps' 'vs no'
for mode in no everysec always; do
  for server in ember redis-server; do
    if [ $server = ember ]; then cmd=(target/release/ember --shards 1); else cmd=(redis-server); fi
    rps=$(run $server $mode "${cmd[@]}")
    [ $mode = no ] && base[$server]=$rps
    ratio=$(awk -v a="$rps" -v b="${base[$server]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    printf '%-14s %-9s %12s %8s\n' $server $mode "$rps" "$ratio"
  done
done
