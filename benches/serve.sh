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
