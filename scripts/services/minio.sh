#!/usr/bin/env bash
# MinIO (S3) for the tests: built from source with `go install` (Go module
# proxy) into $STATE_DIR/bin, cached there (rebuilt only when the pin
# changes), run on 127.0.0.1:59000 with data in $STATE_DIR/minio/data.
#   root user didyma-test / didyma-test-secret. No console, no mc:
#   the tests create their buckets through the S3 API.
# usage: minio.sh start|stop|restart|status|env|build
set -euo pipefail
SERVICE_NAME=minio
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# MinIO tags its releases RELEASE.<date>, which Go cannot resolve as module
# versions: pin the pseudo-version of a master commit (2026-02-12) that builds
# with Go >= 1.24 (tested with Go 1.26).
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION="${DIDYMA_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"

MINIO_HOST=127.0.0.1
MINIO_PORT="${DIDYMA_MINIO_PORT:-59000}"
MINIO_USER=didyma-test
MINIO_PASSWORD=didyma-test-secret

BIN_DIR="$STATE_DIR/bin"
MINIO_BIN="$BIN_DIR/minio"
MINIO_STAMP="$BIN_DIR/minio.version"
MINIO_DIR="$STATE_DIR/minio"
MINIO_PIDFILE="$MINIO_DIR/minio.pid"
MINIO_LOG="$MINIO_DIR/minio.log"
BUILD_LOG="$MINIO_DIR/build.log"

env_lines() {
  echo "export TEST_S3_ENDPOINT=http://$MINIO_HOST:$MINIO_PORT TEST_S3_ACCESS_KEY=$MINIO_USER TEST_S3_SECRET_KEY=$MINIO_PASSWORD"
  # The binary itself: the cluster tests build the bundled MinIO's image from it.
  echo "export TEST_MINIO_BINARY=$MINIO_BIN"
}

built() {
  [ -x "$MINIO_BIN" ] && [ "$(cat "$MINIO_STAMP" 2>/dev/null)" = "$MINIO_VERSION" ]
}

ensure_built() {
  built && return 0
  command -v go >/dev/null 2>&1 ||
    die "go is missing: MinIO is built from source and needs Go >= 1.24 on PATH (Debian's golang-go is too old)"
  local gov
  gov="$(go env GOVERSION 2>/dev/null || true)"
  mkdir -p "$BIN_DIR" "$MINIO_DIR"
  log "building MinIO $MINIO_VERSION with $gov (several minutes on a cold cache; log: $BUILD_LOG)"
  local start=$SECONDS rc=0
  # Build into a scratch GOBIN, then move into place: an interrupted build
  # never leaves a half-written binary behind a matching stamp.
  local tmpbin="$BIN_DIR/.minio-build.$$"
  rm -rf "$tmpbin"
  mkdir -p "$tmpbin"
  (
    cd "$MINIO_DIR"
    GOBIN="$tmpbin" GO111MODULE=on go install "$MINIO_MODULE@$MINIO_VERSION"
  ) >"$BUILD_LOG" 2>&1 &
  local pid=$!
  # Progress on stderr while the build runs, so CI logs show it is alive.
  local next=60
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    if [ $((SECONDS - start)) -ge "$next" ]; then
      log "still building MinIO ($((SECONDS - start))s)"
      next=$((next + 60))
    fi
  done
  wait "$pid" || rc=$?
  if [ "$rc" -ne 0 ] || [ ! -x "$tmpbin/minio" ]; then
    tail -n 30 "$BUILD_LOG" >&2 || true
    rm -rf "$tmpbin"
    die "go install $MINIO_MODULE@$MINIO_VERSION failed (exit $rc, log: $BUILD_LOG); set DIDYMA_MINIO_VERSION to another pseudo-version to try"
  fi
  mv -f "$tmpbin/minio" "$MINIO_BIN"
  rm -rf "$tmpbin"
  echo "$MINIO_VERSION" >"$MINIO_STAMP"
  log "built MinIO in $((SECONDS - start))s: $MINIO_BIN"
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
    echo "minio: stopped$(built && echo " (built: $MINIO_VERSION)" || echo " (not built)")"
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
