#!/usr/bin/env bash
# Redis 7.0.15's own test suite (../shared/redis-suite, beside the project
# root) against a release build of ember, for the units the configuration
# and introspection issue measures itself by: each must pass at least 98% of
# redis-server's own count (reference.txt there), with no abort and no
# timeout. A unit short of it runs once more before the run fails: a few of
# the suite's tests time things on a busy machine.
set -uo pipefail
cd "$(dirname "$0")/.."

suite=../shared/redis-suite
if [ ! -x "$suite/run" ]; then
  echo "suite: $suite/run is missing (CI has it beside the project root)" >&2
  exit 1
fi
if ! command -v tclsh >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tcl) >/dev/null \
    || { echo "suite: tclsh missing and tcl could not be installed" >&2; exit 1; }
fi
cargo build --release --locked

units=(
  unit/type/list unit/type/set unit/type/zset unit/type/hash unit/type/incr
  unit/multi unit/introspection unit/introspection-2 unit/latency-monitor
  unit/tracking unit/slowlog unit/pubsub unit/querybuf unit/info-command
  unit/lazyfree unit/expire unit/keyspace unit/protocol unit/scan unit/other
)

# "UNIT ember=passed/failed[(note)]" for one unit.
run_unit() {
  SERVERS=ember UNIT_TIMEOUT=300 EMBER_ARGS="--shards 2 --enable-debug-command yes" \
    "$suite/run" "$1" 2>&1 | grep "^$1 ember="
}

failed=0
for unit in "${units[@]}"; do
  reference=$(awk -v u="$unit" '$1 == "compat" && $2 == u { print $3 }' "$suite/reference.txt")
  need=$(( (reference * 98 + 99) / 100 ))
  for attempt in 1 2; do
    line=$(run_unit "$unit")
    passed=$(sed -n 's/.* ember=\([0-9]*\)\/.*/\1/p' <<<"$line")
    echo "$line (redis-server ${reference}, need ${need})"
    if [ "${passed:-0}" -ge "$need" ] && ! grep -q '(aborted)\|(timeout)' <<<"$line"; then
      break
    fi
    if [ $attempt = 2 ]; then
      echo "suite: $unit below 98% of redis-server's count" >&2
      failed=1
    fi
  done
done
exit $failed
