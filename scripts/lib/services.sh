# Shared by the scripts: the PostgreSQL and Redis servers the platform and its tests use.
#
# ensure_services exports DATABASE_URL and REDIS_URL. Where one is already set, it is used as
# given. Otherwise the project starts its own server with its data under .local/ (ignored by
# git), on 127.0.0.1 only: PostgreSQL on port ${FLOWSITE_PG_PORT:-55432}, Redis on
# ${FLOWSITE_REDIS_PORT:-56379} — or the next free port when another program holds that one (the
# port chosen is kept in .local/<server>.port). Missing Debian packages are installed when the
# machine allows it. stop_services stops the servers this file started.

LOCAL_DIR="${FLOWSITE_LOCAL_DIR:-$PWD/.local}"

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# chosen_port NAME DEFAULT: the port recorded for NAME, or the first free one from DEFAULT on.
chosen_port() {
    local record="$LOCAL_DIR/$1.port" port="$2"
    if [ -f "$record" ]; then cat "$record"; return 0; fi
    while port_in_use "$port"; do port=$((port + 1)); done
    echo "$port" > "$record"
    echo "$port"
}

postgres_bindir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
    done
    command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ] && { pg_config --bindir; return 0; }
    return 1
}

# The PostgreSQL server refuses to run as root: as root it runs as the 'postgres' user.
as_postgres_user() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# Where PostgreSQL keeps its data: .local/postgres, unless the server's user cannot reach the
# project folder (a checkout under a private directory, as root); then a folder of its own
# under /var/tmp, linked from .local/postgres.
postgres_data_dir() {
    local wanted="$LOCAL_DIR/postgres"
    if [ -L "$wanted" ]; then readlink "$wanted"; return 0; fi
    if [ "$(id -u)" -ne 0 ] || runuser -u postgres -- test -x "$LOCAL_DIR"; then
        echo "$wanted"; return 0
    fi
    local outside
    outside="/var/tmp/flowsite-$(echo "$LOCAL_DIR" | sha256sum | cut -c1-12)/postgres"
    mkdir -p "$(dirname "$outside")"
    ln -sfn "$outside" "$wanted"
    echo "$outside"
}

start_local_postgres() {
    local bindir data PG_PORT
    if ! bindir=$(postgres_bindir); then
        ensure_commands pg_ctlcluster:postgresql || return 1
        bindir=$(postgres_bindir) || { echo "PostgreSQL's initdb was not found after installing postgresql" >&2; return 1; }
    fi
    if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
        useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    fi
    mkdir -p "$LOCAL_DIR"
    data=$(postgres_data_dir)
    if [ ! -f "$data/PG_VERSION" ]; then
        mkdir -p "$data"
        if [ "$(id -u)" -eq 0 ]; then chown postgres: "$data"; fi
        chmod 700 "$data"
        as_postgres_user "$bindir/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    if ! as_postgres_user "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
        rm -f "$LOCAL_DIR/postgres.port"
        local PG_PORT
        PG_PORT=$(chosen_port postgres "${FLOWSITE_PG_PORT:-55432}")
        as_postgres_user "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 start \
            -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=''" >/dev/null \
            || { echo "PostgreSQL did not start; see $data/server.log" >&2; return 1; }
    fi
    PG_PORT=$(sed -n 4p "$data/postmaster.pid")
    local url="postgres://postgres@127.0.0.1:$PG_PORT/flowsite"
    if ! "$bindir/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "select 1 from pg_database where datname='flowsite'" postgres | grep -q 1; then
        "$bindir/createdb" -h 127.0.0.1 -p "$PG_PORT" -U postgres flowsite
    fi
    export DATABASE_URL="$url"
}

start_local_redis() {
    ensure_commands redis-server:redis-server || return 1
    local dir="$LOCAL_DIR/redis" REDIS_PORT
    mkdir -p "$dir"
    if [ -f "$dir/redis.pid" ] && kill -0 "$(cat "$dir/redis.pid")" 2>/dev/null && [ -f "$LOCAL_DIR/redis.port" ]; then
        REDIS_PORT=$(cat "$LOCAL_DIR/redis.port")
    else
        rm -f "$LOCAL_DIR/redis.port"
        REDIS_PORT=$(chosen_port redis "${FLOWSITE_REDIS_PORT:-56379}")
        redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --dir "$dir" \
            --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save "" --appendonly no >/dev/null
        local tries=0
        until redis_answers "$REDIS_PORT"; do
            tries=$((tries + 1))
            [ $tries -gt 100 ] && { echo "Redis did not start; see $dir/redis.log" >&2; return 1; }
            sleep 0.1
        done
    fi
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
}

redis_answers() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1" && printf 'PING\r\n' >&3 && timeout 2 head -c 5 <&3 | grep -q PONG) 2>/dev/null
}

ensure_services() {
    if [ -z "${DATABASE_URL:-}" ]; then start_local_postgres || return 1; fi
    if [ -z "${REDIS_URL:-}" ]; then start_local_redis || return 1; fi
}

stop_services() {
    local bindir data="$LOCAL_DIR/postgres"
    if [ -f "$data/postmaster.pid" ] && bindir=$(postgres_bindir); then
        as_postgres_user "$bindir/pg_ctl" -D "$(readlink -f "$data")" -m fast -w stop >/dev/null || true
    fi
    if [ -f "$LOCAL_DIR/redis/redis.pid" ]; then
        kill "$(cat "$LOCAL_DIR/redis/redis.pid")" 2>/dev/null || true
        rm -f "$LOCAL_DIR/redis/redis.pid"
    fi
}
