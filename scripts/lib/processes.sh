# Shared by the scripts: background processes of the platform, with a pid file in .local/run
# and a log in .local/log.

start_process() {
    local name="$1"; shift
    local pidfile="$LOCAL_DIR/run/$name.pid"
    if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
        echo "$name is running already (pid $(cat "$pidfile"))"
        return 0
    fi
    mkdir -p "$LOCAL_DIR/run" "$LOCAL_DIR/log"
    setsid "$@" >>"$LOCAL_DIR/log/$name.log" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    echo "started $name (pid $!, log $LOCAL_DIR/log/$name.log)"
}

stop_process() {
    local name="$1" pidfile="$LOCAL_DIR/run/$1.pid" pid
    [ -f "$pidfile" ] || return 0
    pid=$(cat "$pidfile")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 300); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "$name did not stop within 30 s: killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
        echo "stopped $name"
    fi
    rm -f "$pidfile"
}

wait_for_url() {
    local url="$1" seconds="$2"
    "$VENV/bin/python" - "$url" "$seconds" <<'PY'
import sys, time, urllib.request
url, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
while time.monotonic() < deadline:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            if response.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.5)
sys.exit(1)
PY
}
