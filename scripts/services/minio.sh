#!/usr/bin/env bash
# MinIO (S3) for the tests: built from source with `go install` (Go module
# proxy) into $STATE_DIR/bin, cached there (rebuilt only when its pin in
# versions.sh changes), run on 127.0.0.1:59000 with data in $STATE_DIR/minio/data.
#   root user didyma-test / didyma-test-secret. No console, no mc:
#   the tests create their buckets through the S3 API.
# usage: minio.sh start|stop|restart|status|env|build
set -euo pipefail
SERVICE_NAME=minio
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=versions.sh
. "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

MINIO_HOST=127.0.0.1
MINIO_PORT="${DIDYMA_MINIO_PORT:-59000}"
MINIO_USER=didyma-test
MINIO_PASSWORD=didyma-test-secret

MINIO_BIN="$BIN_DIR/minio"
MINIO_DIR="$STATE_DIR/minio"
MINIO_PIDFILE="$MINIO_DIR/minio.pid"
MINIO_LOG="$MINIO_DIR/minio.log"
BUILD_LOG="$MINIO_DIR/build.log"

env_lines() {
  echo "export TEST_S3_ENDPOINT=http://$MINIO_HOST:$MINIO_PORT TEST_S3_ACCESS_KEY=$MINIO_USER TEST_S3_SECRET_KEY=$MINIO_PASSWORD"
  # The binary itself: the cluster tests build the bundled MinIO's image from it.
  echo "export TEST_MINIO_BINARY=$MINIO_BIN"
}

build_minio() {
  cd "$MINIO_DIR"
  GOBIN="$tmpbin" GO111MODULE=on go install "$MINIO_MODULE@$MINIO_VERSION"
}

ensure_built() {
  built minio "$MINIO_VERSION" && return 0
  require_go MinIO
  mkdir -p "$MINIO_DIR"
  run_build minio "$MINIO_VERSION" "$BUILD_LOG" build_minio
}

is_running() {
  pidfile_alive "$MINIO_PIDFILE" && port_open "$MINIO_HOST" "$MINIO_PORT"
}

healthy() {
  curl -fsS -m 2 -o /dev/null "http://$MINIO_HOST:$MINIO_PORT/minio/health/live" 2>/dev/null
}

do_start() {
  reserve_ports "$MINIO_PORT" "$((MINIO_PORT + 1))"
  if is_running; then
    return 0
  fi
  command -v curl >/dev/null 2>&1 || apt_install_once curl
  ensure_state_dir
  ensure_built
  mkdir -p "$MINIO_DIR/data" "$MINIO_DIR/certs"
  if pidfile_alive "$MINIO_PIDFILE"; then
    stop_pid "$(pidfile_pid "$MINIO_PIDFILE")" 15
  fi
  port_open "$MINIO_HOST" "$MINIO_PORT" &&
    die "port $MINIO_HOST:$MINIO_PORT is already in use by another process (not our MinIO)"
  log "starting MinIO on $MINIO_HOST:$MINIO_PORT"
  echo "=== start $(date -Is)" >>"$MINIO_LOG"
  (
    export MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD"
    export MINIO_BROWSER=off MINIO_UPDATE=off MINIO_PROMETHEUS_AUTH_TYPE=public
    spawn_daemon "$MINIO_PIDFILE" "$MINIO_LOG" "$MINIO_BIN" server --quiet \
      --address "$MINIO_HOST:$MINIO_PORT" --console-address "$MINIO_HOST:$((MINIO_PORT + 1))" \
      --certs-dir "$MINIO_DIR/certs" "$MINIO_DIR/data"
  )
  local deadline=$((SECONDS + 60)) pid
  pid="$(pidfile_pid "$MINIO_PIDFILE")"
  until healthy; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$MINIO_LOG" >&2 || true
      die "MinIO did not become healthy on $MINIO_HOST:$MINIO_PORT (log: $MINIO_LOG)"
    fi
    sleep 0.2
  done
  log "MinIO ready"
}

do_stop() {
  if pidfile_alive "$MINIO_PIDFILE"; then
    log "stopping MinIO"
    stop_pid "$(pidfile_pid "$MINIO_PIDFILE")" 20
  fi
  rm -f "$MINIO_PIDFILE"
}

do_status() {
  if is_running; then
    echo "minio: running on $MINIO_HOST:$MINIO_PORT (pid $(pidfile_pid "$MINIO_PIDFILE"), $MINIO_VERSION)"
  else
    echo "minio: stopped$(built minio "$MINIO_VERSION" && echo " (built: $MINIO_VERSION)" || echo " (not built)")"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  start) with_lock minio do_start ;;
  stop) with_lock minio do_stop ;;
  restart)
    with_lock minio do_stop
    with_lock minio do_start
    ;;
  build) with_lock minio ensure_built ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|status|env|build" ;;
esac
