#!/usr/bin/env bash
# The bank's production topology on one machine, without containers (install the packages first with
# deploy/host/install.sh):
#
#   topology.sh up     [--state-dir DIR] [--port 8100] [--api-ports 8101,8102] [--workers 3] [--pg-port 5433]
#   topology.sh status [--state-dir DIR] [--port 8100]
#   topology.sh down   [--state-dir DIR] [--purge]
#
# `up` runs a PostgreSQL cluster of the distribution's server with pgvector in DIR, migrates as the
# owner `agentbank`, then serves as `agentbank_app` (SELECT and INSERT only on the audit log): API
# processes behind nginx, and workers, in production mode with JSON logs and one rate limit kept in the
# database. Every file it makes is in DIR: the cluster, the bank's data, secrets, logs, pid files and
# nginx's configuration. It may be run again: what runs already is left running. Settings beyond the
# topology's own (the chat endpoint, AGENTBANK_RATE_LIMIT_PER_MINUTE...) come from the environment.
#
# Keys: by default a keyring file in DIR/data/keyring; with AGENTBANK_KEY_STORE=pkcs11 and
# AGENTBANK_PKCS11_MODULE, _TOKEN_LABEL and _PIN in the environment of `up`, a PKCS#11 token (an HSM,
# or SoftHSM2 from Debian's softhsm2 for a trial) keeps them and wraps and unwraps inside itself.
# Backups: `set -a; . DIR/app.env; set +a; agentbank backup BACKUP_DIR` (pg_dump by the cluster's own
# version of the tools, and the audit heads, never the keys); `agentbank restore BACKUP_DIR --yes` after
# `down`, with AGENTBANK_MIGRATION_DATABASE_URL naming a role that may create databases (the owner
# `agentbank` may not; the cluster's superuser may), re-applies every withdrawal since from the signed
# withdrawal ledger in DIR/data/audit-checkpoints.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
STATE=/var/lib/agentbank-topology PORT=8100 API_PORTS=8101,8102 WORKERS=3 PG_PORT=5433 PURGE=""
AGENTBANK=$ROOT/.venv/bin/agentbank
[[ -x $AGENTBANK ]] || AGENTBANK=$(command -v agentbank || true)

COMMAND=${1:-}
shift || true
while [[ $# -gt 0 ]]; do
    case $1 in
        --state-dir) STATE=$2; shift 2 ;;
        --port) PORT=$2; shift 2 ;;
        --api-ports) API_PORTS=$2; shift 2 ;;
        --workers) WORKERS=$2; shift 2 ;;
        --pg-port) PG_PORT=$2; shift 2 ;;
        --agentbank) AGENTBANK=$2; shift 2 ;;
        --purge) PURGE=yes; shift ;;
        *) echo "unknown option $1 (see the top of $0)" >&2; exit 2 ;;
    esac
done
[[ $COMMAND == up ]] && mkdir -p "$STATE"
[[ -d $STATE ]] || { echo "nothing at $STATE" >&2; exit 1; }
STATE=$(cd "$STATE" && pwd)
PGDATA=$STATE/postgres SOCKET=$STATE/socket DATA=$STATE/data LOGS=$STATE/logs PIDS=$STATE/pids NGINX=$STATE/nginx
RELEASES=$STATE/releases  # published releases (aggregates only): nginx reads them, unlike the data directory
PG_MAJOR=$(find /usr/lib/postgresql -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort -V | tail -n 1)
PG_BIN=/usr/lib/postgresql/$PG_MAJOR/bin

# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` system user.
if [[ $(id -u) -eq 0 ]]; then PG_USER=postgres; else PG_USER=$(id -un); fi
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
# The superuser, over the cluster's own socket (peer authentication: it has no password).
superuser_psql() {
    as_pg env PGOPTIONS="-c client_min_messages=warning" \
        psql -X -q -v ON_ERROR_STOP=1 -h "$SOCKET" -p "$PG_PORT" -U "$PG_USER" "$@"
}

# A pid file's process, only if it is this topology's: a pid reused by another program is never signalled.
ours() {
    local pid
    pid=$(cat "$PIDS/$1.pid" 2>/dev/null) || return 1
    tr '\0' '\n' 2>/dev/null <"/proc/$pid/environ" | grep -qx "AGENTBANK_DATA_DIR=$DATA" && echo "$pid"
}

names() {  # every bank process the topology started, by its pid file
    local file
    for file in "$PIDS"/api-*.pid "$PIDS"/worker-*.pid; do
        if [[ -e $file ]]; then basename "$file" .pid; fi
    done
}

wait_for() {  # wait_for SECONDS WHAT COMMAND...: until the command succeeds, or fail naming WHAT
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS > deadline)); then echo "$what did not happen in time; logs are in $LOGS" >&2; exit 1; fi
        sleep 0.5
    done
}

ready() { python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)" "$1"; }
random_hex() { python3 -c "import secrets, sys; print(secrets.token_hex(int(sys.argv[1])))" "$1"; }
workers_registered() {
    (($(superuser_psql -d agentbank -tAc "SELECT count(*) FROM procrastinate_workers") >= WORKERS))
}

start_postgres() {
    if [[ ! -f $PGDATA/PG_VERSION ]]; then
        install -d -o "$PG_USER" -m 0700 "$PGDATA"
        as_pg "$PG_BIN/initdb" -D "$PGDATA" -U "$PG_USER" -E UTF8 --locale=C.UTF-8 --auth-local=peer \
            --auth-host=scram-sha-256 --no-instructions >"$LOGS/initdb.log"
        # Loopback only; every bank process keeps a pool of connections.
        cat >>"$PGDATA/postgresql.conf" <<EOF
port = $PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$SOCKET'
max_connections = 300
EOF
    fi
    install -d -o "$PG_USER" -m 0755 "$SOCKET"
    touch "$LOGS/postgres.log" && chown "$PG_USER" "$LOGS/postgres.log"
    if ! as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null; then
        as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -l "$LOGS/postgres.log" -w -t 60 start >/dev/null ||
            { tail -n 5 "$LOGS/postgres.log" >&2; exit 1; }
    fi
}

create_database() {
    # The owner migrates and owns every table; it is no superuser. pgvector is not a trusted
    # extension, so the superuser creates it; the first migration then finds it there.
    superuser_psql -d postgres -v pw="$OWNER_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE agentbank LOGIN PASSWORD %L NOSUPERUSER NOCREATEDB NOCREATEROLE', :'pw')
    WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'agentbank') \gexec
SELECT 'CREATE DATABASE agentbank OWNER agentbank'
    WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'agentbank') \gexec
\c agentbank
CREATE EXTENSION IF NOT EXISTS vector;
SQL
    # The application role, by the very statement a container's database runs on its first start.
    if [[ -z $(superuser_psql -d agentbank -tAc "SELECT 1 FROM pg_roles WHERE rolname = 'agentbank_app'") ]]; then
        as_pg env PGHOST="$SOCKET" PGPORT="$PG_PORT" POSTGRES_USER="$PG_USER" POSTGRES_DB=agentbank \
            AGENTBANK_APP_PASSWORD="$APP_PASSWORD" sh -s <"$ROOT/deploy/initdb/10-app-role.sh" >/dev/null
    fi
}

check_audit_grants() {
    # As the role the bank serves as, each rewrite of the audit log must be refused by the grants
    # themselves, not only by the append-only triggers (which the owner could switch off).
    local statement out
    for statement in "UPDATE audit_events SET details = '{}'" "DELETE FROM audit_events" "TRUNCATE audit_events" \
        "UPDATE audit_checkpoints SET seq = 0" "DELETE FROM audit_checkpoints"; do
        out=$(psql -X -v ON_ERROR_STOP=1 "$APP_URL" -c "BEGIN" -c "$statement" -c "ROLLBACK" 2>&1 || true)
        if ! grep -q "permission denied" <<<"$out"; then
            echo "agentbank_app was not refused \"$statement\": $out" >&2
            exit 1
        fi
    done
}

spawn() {  # spawn NAME ARGS...: an agentbank process in a session of its own, its log and pid in STATE
    local name=$1
    shift
    ours "$name" >/dev/null && return 0
    (
        set -a && . "$STATE/app.env" && set +a
        export PYTHONUNBUFFERED=1  # each line reaches the log file as it is written
        exec setsid "$AGENTBANK" "$@" >>"$LOGS/$name.log" 2>&1 </dev/null
    ) &
    echo $! >"$PIDS/$name.pid"
}

start_nginx() {
    local upstreams="" port user=""
    for port in ${API_PORTS//,/ }; do
        upstreams+="        server 127.0.0.1:$port max_fails=1 fail_timeout=10s;"$'\n'
    done
    # As root the master drops its workers to www-data, which must own the temporary files.
    install -d "$NGINX/tmp"
    if [[ $(id -u) -eq 0 ]]; then user="user www-data;" && chown www-data "$NGINX/tmp"; fi
    cat >"$NGINX/nginx.conf" <<EOF
$user
worker_processes 1;
pid $PIDS/nginx.pid;
error_log $LOGS/nginx-error.log warn;
events { worker_connections 4096; }
http {
    log_format json escape=json '{"time":"\$time_iso8601","remote":"\$remote_addr","request":"\$request",'
        '"status":\$status,"bytes":\$body_bytes_sent,"seconds":\$request_time,'
        '"upstream":"\$upstream_addr","upstream_status":"\$upstream_status","reader":"\$reader"}';
    access_log $LOGS/nginx-access.log json buffer=64k flush=1s;
    client_body_temp_path $NGINX/tmp/body;
    proxy_temp_path $NGINX/tmp/proxy;
    fastcgi_temp_path $NGINX/tmp/fastcgi;
    uwsgi_temp_path $NGINX/tmp/uwsgi;
    scgi_temp_path $NGINX/tmp/scgi;
    # A process that stops answering is left out for 10 s, and a request it refused goes to another.
    # A request it took and then dropped is retried elsewhere only when idempotent (nginx's rule): a job
    # submission cut off in flight fails, and its client retries with the same Idempotency-Key.
    upstream agentbank {
$upstreams        keepalive 32;
    }
    # Published tables are files on the bank's shelf (agentbank/publication/shelf.py): nginx serves them itself once
    # the API has said the token may read the open tier. Its answer is kept 30 s per token, so a revoked
    # client is refused here within 30 s (by the API, at once). Each read names its client in the log.
    proxy_cache_path $NGINX/tmp/tokens levels=1 keys_zone=tokens:4m max_size=16m inactive=60s;
    map \$arg_breakdowns \$table_dims { "" "-"; "~^[a-z_]+(?:,[a-z_]+)?\$" \$arg_breakdowns; default "none"; }
    map \$arg_format \$table_format { "" "json"; "~^(?:json|csv|parquet|dta|sav)\$" \$arg_format; default "none"; }
    server {
        listen 127.0.0.1:$PORT;
        # The shelf's formats (nothing else here is a file nginx serves).
        types { application/json json; text/csv csv; application/vnd.apache.parquet parquet;
                application/x-stata-dta dta; application/x-spss-sav sav; }
        default_type application/octet-stream;
        # Audio chunks of the spoken interview are up to 2 MiB (AGENTBANK_MAX_AUDIO_CHUNK_BYTES).
        client_max_body_size 4m;
        location = /_open_token {
            internal;
            proxy_pass http://agentbank/v1/open/token;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header Authorization \$http_authorization;
            proxy_cache tokens;
            proxy_cache_key \$http_authorization;
            proxy_cache_valid 200 30s;
            proxy_ignore_headers Cache-Control Expires Set-Cookie;
        }
        # A table the current release holds, by its URL; anything else (a table to queue, an error, a query in
        # another order) is the API's. A refused token goes to the API too, which says why in its own words.
        # Named captures: a map's regex, evaluated later, would overwrite numbered ones.
        location ~ "^/v1/open/instruments/(?<instrument>[a-z0-9_]+)/items/(?<item>[A-Za-z0-9_]+)/distribution\$" {
            auth_request /_open_token;
            auth_request_set \$reader \$upstream_http_x_client_id;
            error_page 401 403 = @api;
            root $RELEASES;
            add_header Cache-Control "private, no-cache" always;
            try_files /current/tables/\$instrument/\$item/\$table_dims.\$table_format @api;
        }
        location ~ "^/v1/open/files/(?<file>[0-9a-f]{64}\.(?:json|csv|parquet|dta|sav))\$" {
            auth_request /_open_token;
            auth_request_set \$reader \$upstream_http_x_client_id;
            error_page 401 403 = @api;
            root $RELEASES;
            add_header Cache-Control "private, max-age=31536000, immutable" always;
            try_files /files/\$file @api;
        }
        location @api {
            proxy_pass http://agentbank;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto \$scheme;
        }
        location / {
            proxy_pass http://agentbank;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto \$scheme;
            proxy_read_timeout 120s;
        }
    }
}
EOF
    nginx -t -q -c "$NGINX/nginx.conf" -p "$NGINX"
    if [[ -s $PIDS/nginx.pid ]] && kill -0 "$(cat "$PIDS/nginx.pid")" 2>/dev/null; then
        nginx -c "$NGINX/nginx.conf" -p "$NGINX" -s reload
    else
        nginx -c "$NGINX/nginx.conf" -p "$NGINX"
    fi
}

up() {
    if [[ ! -x $PG_BIN/postgres || ! -f /usr/share/postgresql/$PG_MAJOR/extension/vector.control ]] ||
        ! command -v nginx >/dev/null; then
        echo "PostgreSQL, pgvector or nginx is missing: run deploy/host/install.sh as root" >&2
        exit 1
    fi
    [[ -n $AGENTBANK ]] || { echo "no agentbank command: run make install, or pass --agentbank" >&2; exit 1; }
    chmod 0755 "$STATE"  # the postgres user reaches its cluster inside it
    install -d -m 0755 "$LOGS" "$PIDS" "$NGINX"
    install -d -m 0700 "$DATA"
    install -d -m 0755 "$RELEASES"
    if [[ ! -f $STATE/secrets.env ]]; then
        (umask 077 && printf 'OWNER_PASSWORD=%s\nAPP_PASSWORD=%s\nSECRET_KEY=%s\n' \
            "$(random_hex 24)" "$(random_hex 24)" "$(random_hex 32)" >"$STATE/secrets.env")
    fi
    . "$STATE/secrets.env"
    APP_URL=postgresql://agentbank_app:$APP_PASSWORD@127.0.0.1:$PG_PORT/agentbank
    # What every bank process of the topology reads; `set -a; . app.env` lets an operator's command join.
    (umask 077 && cat >"$STATE/app.env" <<EOF
AGENTBANK_ENVIRONMENT=production
AGENTBANK_DATA_DIR=$DATA
AGENTBANK_RELEASE_FILES_DIR=$RELEASES
AGENTBANK_SECRET_KEY=$SECRET_KEY
AGENTBANK_DATABASE_URL=$APP_URL
AGENTBANK_RATE_LIMIT_STORAGE=database
AGENTBANK_LOG_FORMAT=json
EOF
    )
    start_postgres
    create_database
    # Only this command holds the owner's password; the serving processes never see it.
    (set -a && . "$STATE/app.env" && set +a &&
        AGENTBANK_MIGRATION_DATABASE_URL=postgresql://agentbank:$OWNER_PASSWORD@127.0.0.1:$PG_PORT/agentbank \
            "$AGENTBANK" db upgrade >>"$LOGS/migrate.log" 2>&1) || { tail -n 30 "$LOGS/migrate.log" >&2; exit 1; }
    check_audit_grants
    local n=0 port
    for port in ${API_PORTS//,/ }; do
        n=$((n + 1))
        spawn "api-$n" serve --host 127.0.0.1 --port "$port" --no-worker --no-demo
    done
    for n in $(seq 1 "$WORKERS"); do spawn "worker-$n" worker; done
    start_nginx
    for port in ${API_PORTS//,/ }; do
        wait_for 180 "the API on port $port answering /v1/ready" ready "http://127.0.0.1:$port/v1/ready"
    done
    wait_for 30 "/v1/ready through nginx" ready "http://127.0.0.1:$PORT/v1/ready"
    wait_for 180 "$WORKERS workers registering" workers_registered
    echo "the bank serves on http://127.0.0.1:$PORT: $(names | wc -l) processes as agentbank_app, logs in $LOGS"
}

down() {
    local name pid pids=()
    if [[ -s $PIDS/nginx.pid ]]; then kill "$(cat "$PIDS/nginx.pid")" 2>/dev/null || true; fi
    # SIGTERM: the API finishes its requests, a worker gives its tasks back within the shutdown grace.
    for name in $(names); do
        if pid=$(ours "$name"); then kill -TERM "$pid" && pids+=("$pid"); fi
    done
    local deadline=$((SECONDS + 30))
    for pid in "${pids[@]}"; do
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -f "$PIDS"/*.pid
    if [[ -f $PGDATA/PG_VERSION ]] && as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null; then
        as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
    fi
    if [[ -n $PURGE ]]; then rm -rf "$STATE"; fi
    echo "stopped${PURGE:+ and removed $STATE}"
}

status() {
    local name pid
    for name in $(names); do
        if pid=$(ours "$name"); then echo "$name: running (pid $pid)"; else echo "$name: not running"; fi
    done
    if ready "http://127.0.0.1:$PORT/v1/ready" 2>/dev/null; then echo "nginx: ready on $PORT"; else
        echo "nginx: not ready on $PORT"
    fi
    as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status 2>/dev/null | head -n 1 || echo "postgres: not running"
}

case $COMMAND in
    up | down | status) "$COMMAND" ;;
    *) echo "usage: $0 up|status|down [options] (see the top of $0)" >&2; exit 2 ;;
esac
