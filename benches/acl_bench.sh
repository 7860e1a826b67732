#!/usr/bin/env bash
# What an ACL user restricted to a key pattern costs per request, against
# the default user (no ACL check: nothing to check), for ember --shards 1
# and for redis-server side by side: SET and GET of `key:<rand>` at -P 16,
# the restricted user being `on >pw ~key:* +@all` (every command, the
# benchmark's keys all allowed, so each request runs the whole check:
# command bit, key specs, pattern match).
#
# The measure is the server's CPU time per request (user + system ticks
# of every thread, from /proc/PID/stat, before and after each run), which
# holds still on a busy VM where requests per second do not. Rounds
# alternate which of the two users goes first, to cancel drift.
#
# Usage: [NO_BUILD=1] benches/acl_bench.sh [requests per run] [rounds]
#        (defaults 2000000 and 3)
# Pinning: the server on core 0, redis-benchmark on core 1.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-2000000}
rounds=${2:-3}
command -v redis-server >/dev/null || { echo "apt-get install -y redis-server redis-tools" >&2; exit 1; }
[ -n "${NO_BUILD:-}" ] || cargo build --release --locked -q
port=7321
hz=$(getconf CLK_TCK)

# serve, stop, cpu_ticks
. "$(dirname "$0")/serve.sh"

run() { # pid test user-args... -> CPU microseconds per request
  local pid=$1 test=$2; shift 2
  local before after
  before=$(cpu_ticks "$pid")
  taskset -c 1 redis-benchmark -p "$port" -n "$requests" -c 50 -P 16 -r 100000 \
    -t "$test" -q "$@" >/dev/null 2>&1
  after=$(cpu_ticks "$pid")
  awk -v t=$((after - before)) -v n="$requests" -v hz="$hz" 'BEGIN { printf "%.4f", t * 1e6 / hz / n }'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $requests requests per run, -P 16, -c 50"
printf '%-7s %-4s %-6s %12s %12s %8s\n' server test round "no ACL us" "ACL us" ratio
for server in ember redis; do
  if [ "$server" = redis ]; then
    pid=$(serve "$port" taskset -c 0 redis-server --port "$port" --save '' --appendonly no)
  else
    pid=$(serve "$port" taskset -c 0 target/release/ember --port "$port" --save '' --shards 1)
  fi
  redis-cli -p "$port" ACL SETUSER bench on '>benchpw' '~key:*' '+@all' >/dev/null
  for test in set get; do
    sum=0 plain_sum=0 acl_sum=0
    for round in $(seq "$rounds"); do
      if [ $((round % 2)) -eq 1 ]; then
        plain=$(run "$pid" "$test")
        acl=$(run "$pid" "$test" --user bench -a benchpw)
      else
        acl=$(run "$pid" "$test" --user bench -a benchpw)
        plain=$(run "$pid" "$test")
      fi
      ratio=$(awk -v a="$acl" -v p="$plain" 'BEGIN { printf "%.3f", a / p }')
      sum=$(awk -v s="$sum" -v r="$ratio" 'BEGIN { print s + r }')
      plain_sum=$(awk -v s="$plain_sum" -v r="$plain" 'BEGIN { print s + r }')
      acl_sum=$(awk -v s="$acl_sum" -v r="$acl" 'BEGIN { print s + r }')
      printf '%-7s %-4s %-6s %12s %12s %8s\n' "$server" "$test" "$round" "$plain" "$acl" "$ratio"
    done
    printf '%-7s %-4s %-6s %12s %12s %8s\n' "$server" "$test" mean "" "" \
      "$(awk -v s="$sum" -v n="$rounds" 'BEGIN { printf "%.3f", s / n }')"
    printf '%-7s %-4s %-6s %12s %12s %8s\n' "$server" "$test" total "$plain_sum" "$acl_sum" \
      "$(awk -v a="$acl_sum" -v p="$plain_sum" 'BEGIN { printf "%.3f", a / p }')"
  done
  stop "$pid"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
