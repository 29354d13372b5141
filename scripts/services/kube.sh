#!/usr/bin/env bash
# An envtest-style Kubernetes control plane for the tests: etcd 3.5 and
# kube-apiserver built from the Go module proxy (wrapper go.mods under
# $STATE_DIR/kube/build, the usual k8s.io replace block), helm v3 by
# `go install`, all cached in $STATE_DIR/bin (rebuilt only when a pin of
# versions.sh changes).
# No controller-manager, scheduler or kubelet: objects are stored and
# validated (CRD schemas, RBAC, server-side apply, dry-run), nothing runs.
#   etcd on 127.0.0.1:52379 (plain HTTP, loopback only), kube-apiserver on
#   https://127.0.0.1:56443 with its own CA; the kubeconfig authenticates as a
#   system:masters client certificate.
# usage: kube.sh start|stop|restart|status|env|build
set -euo pipefail
SERVICE_NAME=kube
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=pki.sh
. "$(dirname "${BASH_SOURCE[0]}")/pki.sh"
# shellcheck source=versions.sh
. "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

HOST=127.0.0.1
ETCD_PORT="${DIDYMA_ETCD_PORT:-52379}"
ETCD_PEER_PORT="${DIDYMA_ETCD_PEER_PORT:-52380}"
APISERVER_PORT="${DIDYMA_APISERVER_PORT:-56443}"

KUBE_DIR="$STATE_DIR/kube"
BUILD_DIR="$KUBE_DIR/build"
PKI_DIR="$KUBE_DIR/pki"
ETCD_DATA="$KUBE_DIR/etcd-data"
KUBECONFIG_FILE="$KUBE_DIR/kubeconfig"
ETCD_PIDFILE="$KUBE_DIR/etcd.pid"
APISERVER_PIDFILE="$KUBE_DIR/kube-apiserver.pid"
ETCD_LOG="$KUBE_DIR/etcd.log"
APISERVER_LOG="$KUBE_DIR/kube-apiserver.log"

env_lines() {
  echo "export TEST_KUBECONFIG=$KUBECONFIG_FILE TEST_HELM=$BIN_DIR/helm"
}

# ---------------------------------------------------------------- building

build_etcd() {
  local dir="$BUILD_DIR/etcd"
  write_wrapper "$dir" didyma.test/etcd-build
  cd "$dir"
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  nice -n 10 go build -trimpath -o "$tmpbin/etcd" go.etcd.io/etcd/server/v3
}

build_apiserver() {
  local dir="$BUILD_DIR/kube-apiserver"
  write_wrapper "$dir" didyma.test/kube-apiserver-build "${STAGING_MODULES[@]}"
  cd "$dir"
  go get "k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION"
  nice -n 10 go build -trimpath -o "$tmpbin/kube-apiserver" -ldflags "$(kube_version_ldflags)" k8s.io/kubernetes/cmd/kube-apiserver
}

# Helm's release builds stamp their version and default Kubernetes version
# (what `helm template` assumes without a cluster) with -ldflags; so does this.
build_helm() {
  mkdir -p "$BUILD_DIR"
  cd "$BUILD_DIR"
  GOBIN="$tmpbin" nice -n 10 go install -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION \
    -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(kube_minor)" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

ensure_built() {
  ensure_state_dir
  mkdir -p "$BIN_DIR" "$BUILD_DIR"
  built etcd "$ETCD_VERSION" && built kube-apiserver "$KUBE_VERSION" && built helm "$HELM_STAMP" && return 0
  require_go "etcd, kube-apiserver and helm"
  built etcd "$ETCD_VERSION" || run_build etcd "$ETCD_VERSION" "$BUILD_DIR/etcd.log" build_etcd
  built helm "$HELM_STAMP" || run_build helm "$HELM_STAMP" "$BUILD_DIR/helm.log" build_helm
  built kube-apiserver "$KUBE_VERSION" || run_build kube-apiserver "$KUBE_VERSION" "$BUILD_DIR/kube-apiserver.log" build_apiserver
}

# ---------------------------------------------------------------- processes

etcd_running() { pidfile_alive "$ETCD_PIDFILE" && port_open "$HOST" "$ETCD_PORT"; }
apiserver_running() { pidfile_alive "$APISERVER_PIDFILE" && port_open "$HOST" "$APISERVER_PORT"; }

apiserver_ready() {
  curl -fsS -m 2 -o /dev/null --cacert "$PKI_DIR/ca.crt" --cert "$PKI_DIR/admin.crt" --key "$PKI_DIR/admin.key" \
    "https://$HOST:$APISERVER_PORT/readyz" 2>/dev/null
}

start_etcd() {
  etcd_running && return 0
  port_open "$HOST" "$ETCD_PORT" && die "port $HOST:$ETCD_PORT is already in use by another process (not our etcd)"
  mkdir -p "$ETCD_DATA"
  log "starting etcd $ETCD_VERSION on $HOST:$ETCD_PORT"
  echo "=== start $(date -Is)" >>"$ETCD_LOG"
  spawn_daemon "$ETCD_PIDFILE" "$ETCD_LOG" "$BIN_DIR/etcd" --name didyma-test --data-dir "$ETCD_DATA" \
    --listen-client-urls "http://$HOST:$ETCD_PORT" --advertise-client-urls "http://$HOST:$ETCD_PORT" \
    --listen-peer-urls "http://$HOST:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://$HOST:$ETCD_PEER_PORT" \
    --initial-cluster "didyma-test=http://$HOST:$ETCD_PEER_PORT" --unsafe-no-fsync --quota-backend-bytes 4294967296
  wait_for_port "$HOST" "$ETCD_PORT" 60 "$(pidfile_pid "$ETCD_PIDFILE")" || {
    tail -n 30 "$ETCD_LOG" >&2 || true
    die "etcd did not start (log: $ETCD_LOG)"
  }
}

start_apiserver() {
  apiserver_running && apiserver_ready && return 0
  if pidfile_alive "$APISERVER_PIDFILE"; then stop_pid "$(pidfile_pid "$APISERVER_PIDFILE")" 20; fi
  port_open "$HOST" "$APISERVER_PORT" && die "port $HOST:$APISERVER_PORT is already in use by another process (not our kube-apiserver)"
  log "starting kube-apiserver $KUBE_VERSION on https://$HOST:$APISERVER_PORT"
  echo "=== start $(date -Is)" >>"$APISERVER_LOG"
  spawn_daemon "$APISERVER_PIDFILE" "$APISERVER_LOG" "$BIN_DIR/kube-apiserver" \
    --etcd-servers "http://$HOST:$ETCD_PORT" --etcd-prefix /didyma-test \
    --bind-address "$HOST" --advertise-address "$HOST" --secure-port "$APISERVER_PORT" \
    --cert-dir "$KUBE_DIR/apiserver-certs" \
    --tls-cert-file "$PKI_DIR/apiserver.crt" --tls-private-key-file "$PKI_DIR/apiserver.key" \
    --client-ca-file "$PKI_DIR/ca.crt" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$PKI_DIR/sa.pub" \
    --service-account-signing-key-file "$PKI_DIR/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
    --disable-admission-plugins ServiceAccount --enable-priority-and-fairness=false \
    --profiling=false --v=1
  local deadline=$((SECONDS + 120)) pid
  pid="$(pidfile_pid "$APISERVER_PIDFILE")"
  until apiserver_ready; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$APISERVER_LOG" >&2 || true
      die "kube-apiserver did not become ready on https://$HOST:$APISERVER_PORT (log: $APISERVER_LOG)"
    fi
    sleep 0.5
  done
}

do_start() {
  reserve_ports "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT"
  command -v curl >/dev/null 2>&1 || apt_install_once curl
  mkdir -p "$KUBE_DIR"
  ensure_pki "$PKI_DIR" didyma-test "IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
  start_etcd
  start_apiserver
  write_kubeconfig "$KUBECONFIG_FILE" "$PKI_DIR" didyma-test "https://$HOST:$APISERVER_PORT"
  log "kube-apiserver ready (kubeconfig: $KUBECONFIG_FILE)"
}

do_stop() {
  local f
  for f in "$APISERVER_PIDFILE" "$ETCD_PIDFILE"; do
    if pidfile_alive "$f"; then
      log "stopping $(basename "$f" .pid)"
      stop_pid "$(pidfile_pid "$f")" 20
    fi
    rm -f "$f"
  done
}

do_status() {
  if etcd_running && apiserver_running && apiserver_ready; then
    echo "kube: running (kube-apiserver $KUBE_VERSION on https://$HOST:$APISERVER_PORT, etcd $ETCD_VERSION on $HOST:$ETCD_PORT)"
  else
    echo "kube: stopped ($(built kube-apiserver "$KUBE_VERSION" && echo built || echo 'not built'))"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  # The (long) cold build runs before, not under, the start lock.
  start)
    with_build_lock kube-build ensure_built
    with_lock kube do_start
    ;;
  stop) with_lock kube do_stop ;;
  restart)
    with_build_lock kube-build ensure_built
    with_lock kube do_stop
    with_lock kube do_start
    ;;
  build) with_build_lock kube-build ensure_built ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|status|env|build" ;;
esac
