# Sourced by the bench scripts: `serve PORT CMD...` starts a server in the
# background, waits until it answers PING on PORT, and prints its pid.
serve() {
    local port=$1; shift
    "$@" >/dev/null 2>&1 &
    local pid=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && break
        sleep 0.05
    done
    echo "$pid"
}

# `stop PID`: kills it and waits until it is gone (its port free again).
stop() {
    kill "$1" 2>/dev/null || true
    while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
}

# `cpu_ticks PID`: utime + stime of every thread, in clock ticks (the
# CPU a server spent, steadier than throughput on a noisy machine).
cpu_ticks() {
    awk '{print $14 + $15}' "/proc/$1/stat"
}
