#!/usr/bin/env bash
# PostgreSQL for the tests: Debian's `postgresql` package, our own cluster in
# $STATE_DIR/postgres/data, listening on 127.0.0.1:55432.
#   role didyma / password didyma (superuser: it is a throwaway test
#   cluster), database didyma_test.
#   As a managed database has them: TLS beside plain connections (a CA of its
#   own in $STATE_DIR/postgres/tls, a certificate for 127.0.0.1, localhost and
#   the test cluster's Service names postgresql and pgbouncer),
#   a migration owner didyma_migrator (creates databases, no superuser) and a
#   runtime role didyma_runtime (rows only, what migrate grants it).
# usage: postgres.sh start|stop|restart|crash|status|env
#   crash: an immediate shutdown, as a crash would leave the cluster (no
#   checkpoint; the next start recovers from the WAL).
set -euo pipefail
SERVICE_NAME=postgres
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=pki.sh
. "$(dirname "${BASH_SOURCE[0]}")/pki.sh"

PG_HOST=127.0.0.1
PG_PORT="${DIDYMA_PG_PORT:-55432}"
PG_ROLE=didyma
PG_PASSWORD=didyma
PG_DB=didyma_test

MIGRATOR_ROLE=didyma_migrator
MIGRATOR_PASSWORD=didyma-migrator
RUNTIME_ROLE=didyma_runtime
RUNTIME_PASSWORD=didyma-runtime

PG_DIR="$STATE_DIR/postgres"
PG_DATA="$PG_DIR/data"
PG_RUN="$PG_DIR/run"
PG_LOG="$PG_DIR/postgres.log"
PG_TLS="$PG_DIR/tls"
# The names the server (and PgBouncer, with the same certificate) answer to:
# loopback, and the Services of the test cluster's pods relayed to them.
PG_TLS_NAMES=IP:127.0.0.1,DNS:localhost,DNS:postgresql,DNS:pgbouncer

env_lines() {
  echo "export TEST_DATABASE_URL=postgres://$PG_ROLE:$PG_PASSWORD@$PG_HOST:$PG_PORT/$PG_DB"
  # The same database over the Unix socket: how processes on the cluster's own machine reach it (bench/).
  echo "export TEST_DATABASE_SOCKET_URL='postgres://$PG_ROLE:$PG_PASSWORD@localhost/$PG_DB?host=$PG_RUN&port=$PG_PORT'"
  # TLS (verify-full against this CA) and the two roles of a managed database; tests make databases of their own for them.
  echo "export TEST_DATABASE_CA_FILE=$PG_TLS/ca.crt"
  echo "export TEST_DATABASE_MIGRATION_URL=postgres://$MIGRATOR_ROLE:$MIGRATOR_PASSWORD@$PG_HOST:$PG_PORT/$PG_DB"
  echo "export TEST_DATABASE_RUNTIME_URL=postgres://$RUNTIME_ROLE:$RUNTIME_PASSWORD@$PG_HOST:$PG_PORT/$PG_DB"
}

# PostgreSQL refuses to run as root: as root, the cluster belongs to the
# `postgres` OS user (created by the package); otherwise to the current user.
pg_user() {
  if is_root; then echo postgres; else id -un; fi
}

as_pg() {
  if is_root; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

find_pg_bin() {
  local d
  # Newest installed major version first.
  for d in $(printf '%s\n' /usr/lib/postgresql/*/bin | sort -t/ -k4 -n -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}

ensure_installed() {
  if ! PG_BIN="$(find_pg_bin)" || ! command -v psql >/dev/null 2>&1; then
    apt_install_once postgresql postgresql-client
    PG_BIN="$(find_pg_bin)" || die "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found under /usr/lib/postgresql/*/bin even after installing the postgresql package"
  fi
  if is_root && ! getent passwd postgres >/dev/null; then
    log "creating the postgres OS user"
    useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres ||
      die "could not create the postgres OS user (initdb refuses to run as root)"
  fi
}

# As root the state dir is usually under /root (mode 700): the postgres user
# needs to traverse it. Grant search (x) permission only, never read, on the
# ancestors that lack it.
ensure_traversable() {
  is_root || return 0
  if runuser -u postgres -- test -x "$STATE_DIR" 2>/dev/null; then
    return 0
  fi
  local d="$STATE_DIR"
  local dirs=()
  while [ "$d" != "/" ] && [ -n "$d" ]; do
    dirs+=("$d")
    d="$(dirname "$d")"
  done
  for d in "${dirs[@]}"; do
    if [ -d "$d" ] && ! runuser -u postgres -- test -x "$d" 2>/dev/null; then
      warn "granting search-only permission (o+x) on $d so the postgres user can reach $PG_DIR"
      chmod o+x "$d"
    fi
  done
  runuser -u postgres -- test -x "$STATE_DIR" ||
    die "the postgres OS user cannot reach $STATE_DIR; set DIDYMA_SERVICES_DIR to a directory it can reach"
}

is_running() {
  # Cheap checks first: our postmaster.pid names a live process and the port answers.
  [ -e "$PG_DATA/postmaster.pid" ] || return 1
  local pid
  pid="$(head -n1 "$PG_DATA/postmaster.pid" 2>/dev/null | tr -dc '0-9')" || true
  if [ -z "$pid" ]; then
    # Unreadable to us? Fall back to pg_ctl.
    PG_BIN="${PG_BIN:-$(find_pg_bin)}" || return 1
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1 || return 1
  else
    pid_running "$pid" || return 1
  fi
  port_open "$PG_HOST" "$PG_PORT"
}

# After a crash (postmaster killed), wait for its orphaned children to exit and
# for the postmaster to be reaped: postgres refuses to start while the pid in
# postmaster.pid (or in the socket lock file) still exists, even as a zombie.
# If it lingers, drop those stale lock files.
clear_stale_pidfile() {
  local f="$PG_DATA/postmaster.pid" pid deadline
  [ -e "$f" ] || return 0
  pid="$(head -n1 "$f" 2>/dev/null | tr -dc '0-9')"
  [ -n "$pid" ] || return 0
  if pid_running "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = postgres ]; then
    return 0 # a live postmaster: pg_ctl will report it
  fi
  deadline=$((SECONDS + 15))
  while { pgrep -P "$pid" >/dev/null 2>&1 || kill -0 "$pid" 2>/dev/null; } && [ "$SECONDS" -lt "$deadline" ]; do
    sleep 0.2
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "removing stale lock files of postmaster $pid (not running, not reaped)"
    rm -f "$f" "$PG_RUN/.s.PGSQL.$PG_PORT.lock"
  fi
}

init_cluster() {
  [ -f "$PG_DATA/PG_VERSION" ] && return 0
  log "initdb $PG_DATA (as $(pg_user))"
  rm -rf "$PG_DATA"
  mkdir -p "$PG_DATA" "$PG_RUN"
  if is_root; then chown -R postgres:postgres "$PG_DIR"; fi
  chmod 700 "$PG_DATA"
  local pwfile
  pwfile="$(mktemp)"
  printf '%s\n' "$PG_PASSWORD" >"$pwfile"
  if is_root; then chown postgres "$pwfile"; fi
  as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --pwfile="$pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 ||
    { rm -f "$pwfile"; cat "$PG_DIR/initdb.log" >&2; rm -rf "$PG_DATA"; die "initdb failed"; }
  rm -f "$pwfile"
  # Tuned for a throwaway test cluster: durability is not needed.
  as_pg tee -a "$PG_DATA/postgresql.conf" >/dev/null <<EOF

# --- didyma test cluster (scripts/services/postgres.sh) ---
listen_addresses = '$PG_HOST'
port = $PG_PORT
unix_socket_directories = '$PG_RUN'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
log_line_prefix = '%m [%p] '
EOF
  rm -f "$PG_DIR/.provisioned"
}

# Written at every start, so clusters made by an older version of this script get it too.
write_hba() {
  # Password (scram) for everyone, over TCP and over the socket: anyone on the
  # machine can reach the socket. Provisioning uses the superuser's initdb password.
  as_pg tee "$PG_DATA/pg_hba.conf" >/dev/null <<EOF
local   all   all                  scram-sha-256
host    all   all   127.0.0.1/32   scram-sha-256
host    all   all   ::1/128        scram-sha-256
EOF
}

# The server's certificate, signed by a CA of its own, and `ssl = on` in a
# file postgresql.conf includes; plain connections keep working (pg_hba's
# `host` takes both). True when that file or the certificate changed (a
# running server must reload).
ensure_tls() {
  local signed=1
  ensure_server_cert "$PG_TLS" didyma-test-postgres-ca "$PG_TLS_NAMES"
  if [ "$CERT_SIGNED" = 1 ]; then
    log "signed the server certificate of PostgreSQL for $PG_TLS_NAMES in $PG_TLS"
    signed=0
  fi
  if is_root; then chown -R postgres:postgres "$PG_TLS"; fi
  grep -q "^include_if_exists = 'didyma-tls.conf'" "$PG_DATA/postgresql.conf" ||
    echo "include_if_exists = 'didyma-tls.conf'" | as_pg tee -a "$PG_DATA/postgresql.conf" >/dev/null
  as_pg tee "$PG_DATA/didyma-tls.conf.new" >/dev/null <<EOF
ssl = on
ssl_cert_file = '$PG_TLS/server.crt'
ssl_key_file = '$PG_TLS/server.key'
EOF
  if cmp -s "$PG_DATA/didyma-tls.conf.new" "$PG_DATA/didyma-tls.conf"; then
    as_pg rm -f "$PG_DATA/didyma-tls.conf.new"
    return "$signed"
  fi
  as_pg mv -f "$PG_DATA/didyma-tls.conf.new" "$PG_DATA/didyma-tls.conf"
}

# The migration owner and the runtime role, on clusters provisioned before them too.
provision_roles() {
  [ -f "$PG_DIR/.roles-provisioned" ] && return 0
  log "creating roles $MIGRATOR_ROLE and $RUNTIME_ROLE"
  as_pg env PGPASSWORD="$PG_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -p "$PG_PORT" -U postgres -d postgres <<EOF
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$MIGRATOR_ROLE') THEN
    CREATE ROLE $MIGRATOR_ROLE LOGIN CREATEDB PASSWORD '$MIGRATOR_PASSWORD';
  END IF;
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$RUNTIME_ROLE') THEN
    CREATE ROLE $RUNTIME_ROLE LOGIN PASSWORD '$RUNTIME_PASSWORD';
  END IF;
END \$\$;
-- What the platform sends at startup on a direct connection, which a transaction pooler does not pass on.
ALTER ROLE $RUNTIME_ROLE SET jit = off;
ALTER ROLE $RUNTIME_ROLE SET statement_timeout = '15s';
EOF
  touch "$PG_DIR/.roles-provisioned"
}

provision() {
  [ -f "$PG_DIR/.provisioned" ] && return 0
  log "creating role $PG_ROLE and database $PG_DB"
  local psql=(as_pg env PGPASSWORD="$PG_PASSWORD" psql -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -p "$PG_PORT" -U postgres -d postgres)
  "${psql[@]}" <<EOF
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_ROLE') THEN
    CREATE ROLE $PG_ROLE LOGIN SUPERUSER PASSWORD '$PG_PASSWORD';
  ELSE
    ALTER ROLE $PG_ROLE LOGIN SUPERUSER PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
EOF
  if [ "$("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != "1" ]; then
    "${psql[@]}" -c "CREATE DATABASE $PG_DB OWNER $PG_ROLE"
  fi
  touch "$PG_DIR/.provisioned"
}

do_start() {
  reserve_ports "$PG_PORT"
  if is_running; then
    # A cluster started before TLS and the roles gets them without a restart (ssl is reloadable).
    if ensure_tls; then
      PG_BIN="$(find_pg_bin)"
      as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -s reload >&2
    fi
    provision_roles
    return 0
  fi
  ensure_installed
  ensure_state_dir
  mkdir -p "$PG_DIR"
  ensure_traversable
  init_cluster
  write_hba
  ensure_tls || true
  mkdir -p "$PG_RUN"
  if is_root; then chown postgres:postgres "$PG_DIR" "$PG_RUN"; fi
  if port_open "$PG_HOST" "$PG_PORT"; then
    die "port $PG_HOST:$PG_PORT is already in use by another process (not the cluster in $PG_DATA)"
  fi
  clear_stale_pidfile
  log "starting PostgreSQL on $PG_HOST:$PG_PORT ($PG_BIN)"
  if is_root; then touch "$PG_LOG" && chown postgres:postgres "$PG_LOG"; fi
  if ! with_closed_fds as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 -s start >&2; then
    tail -n 30 "$PG_LOG" >&2 || true
    die "PostgreSQL did not start (log: $PG_LOG)"
  fi
  wait_for_port "$PG_HOST" "$PG_PORT" 30 || die "PostgreSQL started but $PG_HOST:$PG_PORT does not accept connections"
  provision
  provision_roles
  log "PostgreSQL ready"
}

do_stop() {
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    return 0
  fi
  PG_BIN="$(find_pg_bin)" || return 0
  if as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    log "stopping PostgreSQL"
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w -t 60 -s stop >&2 ||
      die "pg_ctl stop failed (log: $PG_LOG)"
  fi
}

do_crash() {
  [ -f "$PG_DATA/PG_VERSION" ] || return 0
  PG_BIN="$(find_pg_bin)" || return 0
  if as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; then
    log "stopping PostgreSQL at once (immediate: what a crash leaves)"
    as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 60 -s stop >&2 ||
      die "pg_ctl stop -m immediate failed (log: $PG_LOG)"
  fi
}

do_status() {
  if is_running; then
    echo "postgres: running on $PG_HOST:$PG_PORT (data $PG_DATA)"
  else
    echo "postgres: stopped"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  start) with_lock postgres do_start ;;
  stop) with_lock postgres do_stop ;;
  restart)
    with_lock postgres do_stop
    with_lock postgres do_start
    ;;
  crash) with_lock postgres do_crash ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|crash|status|env" ;;
esac
