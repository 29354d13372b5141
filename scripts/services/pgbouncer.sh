#!/usr/bin/env bash
# PgBouncer for the tests: Debian's `pgbouncer` package in front of the
# PostgreSQL of postgres.sh, as a platform team runs one before a managed
# database: transaction pooling, TLS to the server checked against its CA
# (verify-full), TLS offered to clients with a certificate of the same CA.
# Listens on 127.0.0.1:56432; any database name goes to the same name on the
# server; the users are the server's didyma_migrator and didyma_runtime.
# usage: pgbouncer.sh start|stop|restart|status|env
set -euo pipefail
SERVICE_NAME=pgbouncer
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PGB_HOST=127.0.0.1
PGB_PORT="${DIDYMA_PGBOUNCER_PORT:-56432}"
PG_HOST=127.0.0.1
PG_PORT="${DIDYMA_PG_PORT:-55432}"
RUNTIME_ROLE=didyma_runtime
RUNTIME_PASSWORD=didyma-runtime
MIGRATOR_ROLE=didyma_migrator
MIGRATOR_PASSWORD=didyma-migrator

PGB_DIR="$STATE_DIR/pgbouncer"
PGB_CONF="$PGB_DIR/pgbouncer.ini"
PGB_PIDFILE="$PGB_DIR/pgbouncer.pid"
PGB_LOG="$PGB_DIR/pgbouncer.log"
# The CA and certificate of postgres.sh: the server's name and the pooler's are the same (127.0.0.1).
PG_TLS="$STATE_DIR/postgres/tls"

env_lines() {
  echo "export TEST_PGBOUNCER_URL=postgres://$RUNTIME_ROLE:$RUNTIME_PASSWORD@$PGB_HOST:$PGB_PORT/didyma_test"
}

# PgBouncer refuses to run as root: as root, it runs as the `postgres` OS user (postgres.sh made it).
as_pgb() {
  if is_root; then runuser -u postgres -- "$@"; else "$@"; fi
}

write_config() {
  mkdir -p "$PGB_DIR"
  cat >"$PGB_DIR/userlist.txt" <<USERS
"$RUNTIME_ROLE" "$RUNTIME_PASSWORD"
"$MIGRATOR_ROLE" "$MIGRATOR_PASSWORD"
USERS
  cat >"$PGB_CONF" <<CONF
[databases]
* = host=$PG_HOST port=$PG_PORT

[pgbouncer]
listen_addr = $PGB_HOST
listen_port = $PGB_PORT
unix_socket_dir =
pidfile = $PGB_PIDFILE
logfile = $PGB_LOG
auth_type = scram-sha-256
auth_file = $PGB_DIR/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
server_tls_sslmode = verify-full
server_tls_ca_file = $PG_TLS/ca.crt
client_tls_sslmode = allow
client_tls_cert_file = $PG_TLS/server.crt
client_tls_key_file = $PG_TLS/server.key
log_connections = 0
log_disconnections = 0
CONF
  chmod 600 "$PGB_DIR/userlist.txt"
  if is_root; then chown -R postgres:postgres "$PGB_DIR"; fi
}

pgb_pid() { head -n1 "$PGB_PIDFILE" 2>/dev/null | tr -dc '0-9'; }

is_running() {
  local pid
  pid="$(pgb_pid)"
  [ -n "$pid" ] && pid_running "$pid" && port_open "$PGB_HOST" "$PGB_PORT"
}

do_start() {
  reserve_ports "$PGB_PORT"
  is_running && return 0
  [ -s "$PG_TLS/ca.crt" ] || die "no CA of PostgreSQL in $PG_TLS: start postgres first (all.sh starts it before pgbouncer)"
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || apt_install_once pgbouncer
  ensure_state_dir
  write_config
  port_open "$PGB_HOST" "$PGB_PORT" && die "port $PGB_HOST:$PGB_PORT is already in use by another process (not our PgBouncer)"
  log "starting PgBouncer on $PGB_HOST:$PGB_PORT (transaction pooling, verify-full TLS to $PG_HOST:$PG_PORT)"
  rm -f "$PGB_PIDFILE"
  with_closed_fds as_pgb /usr/sbin/pgbouncer -d "$PGB_CONF" >&2 || { tail -n 20 "$PGB_LOG" >&2 || true; die "PgBouncer did not start (log: $PGB_LOG)"; }
  wait_for_port "$PGB_HOST" "$PGB_PORT" 30 || die "PgBouncer started but $PGB_HOST:$PGB_PORT does not accept connections (log: $PGB_LOG)"
  log "PgBouncer ready"
}

do_stop() {
  local pid
  pid="$(pgb_pid)"
  [ -n "$pid" ] && pid_running "$pid" || return 0
  log "stopping PgBouncer"
  stop_pid "$pid" 15
  rm -f "$PGB_PIDFILE"
}

do_status() {
  if is_running; then
    echo "pgbouncer: running on $PGB_HOST:$PGB_PORT"
  else
    echo "pgbouncer: stopped"
    return 1
  fi
}

case "${1:-}" in
  start) with_lock pgbouncer do_start ;;
  stop) with_lock pgbouncer do_stop ;;
  restart)
    with_lock pgbouncer do_stop
    with_lock pgbouncer do_start
    ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|status|env" ;;
esac
