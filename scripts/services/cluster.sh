#!/usr/bin/env bash
# A real single-node Kubernetes cluster for the end-to-end tests, with no
# Docker engine and no registry: containerd, runc and the CNI plugins from
# Debian; etcd, kube-apiserver and helm as kube.sh builds them; kubelet,
# kube-controller-manager, kube-scheduler, kube-proxy, kubectl, CoreDNS and
# kube-router's NetworkPolicy firewall built from the Go module proxy at the
# Kubernetes version of versions.sh (same Go build cache), cached in
# $STATE_DIR/bin. The sandbox ("pause") image is built
# here too and imported into containerd; images of the project are imported
# the same way (scripts/image/), so pods never pull.
#   network: bridge didyma0 10.88.0.1/16 (pods), services 10.96.0.0/16; the
#   apiserver (https://10.88.0.1:56543), the kubelet and CoreDNS (10.88.0.1:53,
#   cluster.local only: nothing is forwarded outside) listen on the bridge.
#   Pods reach the host's test services (loopback ports) through relays on
#   10.88.0.1 (DIDYMA_CLUSTER_HOST_PORTS); nothing a pod sends leaves the host.
#   NetworkPolicies are enforced by kube-router's firewall (iptables, ipset).
# Separate from kube.sh's control plane: own etcd, apiserver, CA and data.
# usage: cluster.sh start|stop|restart|status|env|build
set -euo pipefail
SERVICE_NAME=cluster
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=pki.sh
. "$(dirname "${BASH_SOURCE[0]}")/pki.sh"
# shellcheck source=versions.sh
. "$(dirname "${BASH_SOURCE[0]}")/versions.sh"

PAUSE_IMAGE=didyma.local/pause:3.10

BRIDGE=didyma0
NODE_IP=10.88.0.1
POD_CIDR=10.88.0.0/16
SERVICE_CIDR=10.96.0.0/16
NODE_NAME=didyma-node
ETCD_PORT="${DIDYMA_CLUSTER_ETCD_PORT:-52479}"
ETCD_PEER_PORT="${DIDYMA_CLUSTER_ETCD_PEER_PORT:-52480}"
APISERVER_PORT="${DIDYMA_CLUSTER_APISERVER_PORT:-56543}"
DNS_HEALTH_PORT=58080
DNS_READY_PORT=58181
NETPOL_HEALTH_PORT=58244
METRICS_ADAPTER_PORT=56544
ADAPTER_SERVICE=didyma-metrics-adapter
PROMETHEUS_URL="http://127.0.0.1:${DIDYMA_PROMETHEUS_PORT:-59090}"
# PostgreSQL, RabbitMQ, MinIO, Prometheus and Jaeger's OTLP/HTTP of the other scripts.
HOST_PORTS="${DIDYMA_CLUSTER_HOST_PORTS:-55432 56432 55672 59000 59090 54318}"

CLUSTER_DIR="$STATE_DIR/cluster"
BUILD_DIR="$CLUSTER_DIR/build"
PKI_DIR="$CLUSTER_DIR/pki"
RUN_DIR=/run/didyma-cluster
CONTAINERD_SOCKET="$RUN_DIR/containerd.sock"
KUBECONFIG_FILE="$CLUSTER_DIR/kubeconfig"
KUBE_SCRIPT="$SERVICES_LIB_DIR/kube.sh"

env_lines() {
  echo "export TEST_CLUSTER_KUBECONFIG=$KUBECONFIG_FILE TEST_CLUSTER_CONTAINERD=$CONTAINERD_SOCKET TEST_CLUSTER_HOST_IP=$NODE_IP TEST_KUBECTL=$BIN_DIR/kubectl TEST_HELM=$BIN_DIR/helm"
}

# shellcheck source=cluster-build.sh
. "$SERVICES_LIB_DIR/cluster-build.sh"
# shellcheck source=cluster-metrics.sh
. "$SERVICES_LIB_DIR/cluster-metrics.sh"

# ---------------------------------------------------------------- the host

install_packages() {
  apt_install_once containerd runc containernetworking-plugins iptables ipset conntrack socat openssl curl
}

# What the kernel must offer, checked up front so that a missing piece is one
# clear message instead of a pod stuck in ContainerCreating.
check_kernel() {
  is_root || die "the cluster needs root (network namespaces, bridges, iptables, cgroups)"
  local missing=()
  grep -qw overlay /proc/filesystems || missing+=("overlayfs (containerd's snapshotter)")
  [ -d /proc/sys/net/bridge ] || missing+=("br_netfilter (/proc/sys/net/bridge: Service traffic between pods)")
  [ -d /proc/sys/net/netfilter ] || missing+=("nf_conntrack (/proc/sys/net/netfilter: kube-proxy)")
  [ -e /sys/fs/cgroup/memory ] || [ -e /sys/fs/cgroup/cgroup.controllers ] || missing+=("the memory cgroup (/sys/fs/cgroup: pod limits)")
  iptables -t nat -L -n >/dev/null 2>&1 || missing+=("iptables nat table (kube-proxy)")
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add didyma-probe type bridge 2>/dev/null && ip link del didyma-probe || missing+=("bridge network devices")
  fi
  [ "${#missing[@]}" -eq 0 ] || die "this kernel lacks what a Kubernetes node needs: ${missing[*]}"
}

# The pods' bridge with the node's address (the CNI bridge plugin adopts it),
# forwarding for Service traffic, and no way out to other networks.
setup_network() {
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
  fi
  # `replace` is idempotent: a bridge left by an earlier run keeps its address.
  ip addr replace "$NODE_IP/16" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # Service addresses stay on the bridge (kube-proxy rewrites them), never the default route.
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE" src "$NODE_IP"
  echo 1 >/proc/sys/net/ipv4/ip_forward
  echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables
  iptables -C FORWARD -i "$BRIDGE" ! -o "$BRIDGE" -j DROP 2>/dev/null ||
    iptables -I FORWARD -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
  mkdir -p "$CLUSTER_DIR/cni"
  cat >"$CLUSTER_DIR/cni/10-didyma.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "didyma",
  "plugins": [
    {
      "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR", "gateway": "$NODE_IP" }]], "routes": [{ "dst": "0.0.0.0/0" }],
                "dataDir": "$CLUSTER_DIR/cni/ipam" }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
  # Pods resolve through the cluster DNS only (nothing outside is reachable).
  printf 'nameserver %s\n' "$NODE_IP" >"$CLUSTER_DIR/resolv.conf"
}

# ---------------------------------------------------------------- processes

pidfile() { echo "$CLUSTER_DIR/$1.pid"; }
logfile() { echo "$CLUSTER_DIR/$1.log"; }
alive() { pidfile_alive "$(pidfile "$1")"; }

# daemon NAME CMD...: start CMD unless it runs already.
daemon() {
  local name="$1"
  shift
  alive "$name" && return 0
  log "starting $name"
  echo "=== start $(date -Is)" >>"$(logfile "$name")"
  spawn_daemon "$(pidfile "$name")" "$(logfile "$name")" "$@"
}

# wait_until WHAT SECONDS NAME CMD...: poll CMD; fail with NAME's log.
wait_until() {
  local what="$1" timeout_s="$2" name="$3" deadline
  shift 3
  deadline=$((SECONDS + timeout_s))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name" || [ "$SECONDS" -ge "$deadline" ]; then
      tail -n 30 "$(logfile "$name")" >&2 || true
      die "$what (log: $(logfile "$name"))"
    fi
    sleep 0.5
  done
}

kubectl_() { "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
apiserver_ready() {
  curl -fsS -m 2 -o /dev/null --cacert "$PKI_DIR/ca.crt" --cert "$PKI_DIR/admin.crt" --key "$PKI_DIR/admin.key" \
    "https://$NODE_IP:$APISERVER_PORT/readyz"
}

start_control_plane() {
  mkdir -p "$CLUSTER_DIR/etcd-data"
  daemon etcd "$BIN_DIR/etcd" --name didyma-cluster --data-dir "$CLUSTER_DIR/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "didyma-cluster=http://127.0.0.1:$ETCD_PEER_PORT" --unsafe-no-fsync --quota-backend-bytes 4294967296
  wait_until "etcd did not start" 60 etcd port_open 127.0.0.1 "$ETCD_PORT"
  daemon kube-apiserver "$BIN_DIR/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" --etcd-prefix /didyma-cluster \
    --bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
    --cert-dir "$CLUSTER_DIR/apiserver-certs" \
    --tls-cert-file "$PKI_DIR/apiserver.crt" --tls-private-key-file "$PKI_DIR/apiserver.key" \
    --client-ca-file "$PKI_DIR/ca.crt" --authorization-mode Node,RBAC \
    --kubelet-client-certificate "$PKI_DIR/admin.crt" --kubelet-client-key "$PKI_DIR/admin.key" \
    --kubelet-preferred-address-types InternalIP \
    --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$PKI_DIR/sa.pub" \
    --service-account-signing-key-file "$PKI_DIR/sa.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allow-privileged=true \
    --enable-priority-and-fairness=false --profiling=false --v=1 \
    --feature-gates HPAScaleToZero=true --enable-aggregator-routing=true \
    --requestheader-client-ca-file "$PKI_DIR/ca.crt" --requestheader-allowed-names front-proxy-client \
    --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
    --requestheader-extra-headers-prefix X-Remote-Extra- \
    --proxy-client-cert-file "$PKI_DIR/front-proxy-client.crt" --proxy-client-key-file "$PKI_DIR/front-proxy-client.key"
  wait_until "kube-apiserver did not become ready on https://$NODE_IP:$APISERVER_PORT" 120 kube-apiserver apiserver_ready
  write_kubeconfig "$KUBECONFIG_FILE" "$PKI_DIR" didyma-cluster "https://$NODE_IP:$APISERVER_PORT"
  daemon kube-controller-manager "$BIN_DIR/kube-controller-manager" --kubeconfig "$KUBECONFIG_FILE" \
    --bind-address 127.0.0.1 --secure-port 10557 --leader-elect=false \
    --service-account-private-key-file "$PKI_DIR/sa.key" --root-ca-file "$PKI_DIR/ca.crt" \
    --use-service-account-credentials=true --cluster-signing-cert-file "$PKI_DIR/ca.crt" \
    --cluster-signing-key-file "$PKI_DIR/ca.key" --service-cluster-ip-range "$SERVICE_CIDR" \
    --feature-gates HPAScaleToZero=true --horizontal-pod-autoscaler-sync-period 5s \
    --profiling=false --v=1
  daemon kube-scheduler "$BIN_DIR/kube-scheduler" --kubeconfig "$KUBECONFIG_FILE" \
    --bind-address 127.0.0.1 --secure-port 10559 --leader-elect=false --profiling=false --v=1
}

start_containerd() {
  local dir="$CLUSTER_DIR/containerd"
  mkdir -p "$dir" "$RUN_DIR"
  cat >"$dir/config.toml" <<EOF
version = 2
root = "$dir/root"
state = "$RUN_DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$CONTAINERD_SOCKET"
[ttrpc]
  address = "$RUN_DIR/containerd-ttrpc.sock"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Root here lacks CAP_SYS_RESOURCE: lowering a container's OOM score would fail.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$CLUSTER_DIR/cni"
EOF
  daemon containerd containerd --config "$dir/config.toml"
  wait_until "containerd did not start" 60 containerd ctr_ version
  # Captured first: under pipefail, `grep -q` closing the pipe early would fail it.
  local images
  images=$(ctr_ images check "name==$PAUSE_IMAGE" 2>/dev/null || true)
  [[ "$images" == *"$PAUSE_IMAGE"* ]] || import_pause
}

ctr_() { ctr --address "$CONTAINERD_SOCKET" --namespace k8s.io "$@"; }

import_pause() {
  local rootfs="$BUILD_DIR/pause-rootfs" archive="$BUILD_DIR/pause.tar"
  rm -rf "$rootfs"
  mkdir -p "$rootfs"
  cp "$BIN_DIR/pause" "$rootfs/pause"
  node "$SERVICES_LIB_DIR/../image/oci-archive.mjs" --rootfs "$rootfs" --name "$PAUSE_IMAGE" \
    --config '{"Entrypoint":["/pause"],"User":"65535:65535"}' --out "$archive"
  ctr_ images import --no-unpack=false "$archive" >/dev/null
  log "imported $PAUSE_IMAGE"
}

start_node() {
  local dir="$CLUSTER_DIR/kubelet"
  mkdir -p "$dir"
  cat >"$CLUSTER_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$CONTAINERD_SOCKET
# No systemd here; cgroup v1 is what this kernel mounts.
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: $PKI_DIR/ca.crt }
authorization: { mode: AlwaysAllow }
clusterDomain: cluster.local
clusterDNS: [$NODE_IP]
resolvConf: $CLUSTER_DIR/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1% }
maxPods: 110
EOF
  daemon kubelet "$BIN_DIR/kubelet" --config "$CLUSTER_DIR/kubelet.yaml" --kubeconfig "$KUBECONFIG_FILE" \
    --root-dir "$dir" --cert-dir "$dir/pki" --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --v=1
  daemon kube-proxy "$BIN_DIR/kube-proxy" --kubeconfig "$KUBECONFIG_FILE" --hostname-override "$NODE_NAME" \
    --proxy-mode iptables --cluster-cidr "$POD_CIDR" --metrics-bind-address 127.0.0.1:10249 \
    --healthz-bind-address 127.0.0.1:10256 --conntrack-max-per-core 0 \
    --conntrack-tcp-timeout-established 0 --conntrack-tcp-timeout-close-wait 0 --v=1
  cat >"$CLUSTER_DIR/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:$DNS_HEALTH_PORT
    ready 127.0.0.1:$DNS_READY_PORT
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $KUBECONFIG_FILE
        pods insecure
    }
    cache 30
    loadbalance
}
EOF
  daemon coredns "$BIN_DIR/coredns" -conf "$CLUSTER_DIR/Corefile"
  local p
  for p in $HOST_PORTS; do
    daemon "relay-$p" socat "TCP-LISTEN:$p,bind=$NODE_IP,fork,reuseaddr" "TCP:127.0.0.1:$p"
  done
  wait_until "the node did not become Ready" 120 kubelet node_ready
  wait_until "CoreDNS did not become ready" 60 coredns curl -fsS -m 2 http://127.0.0.1:$DNS_READY_PORT/ready
}

# kube-router's firewall alone enforces NetworkPolicies (iptables and ipset
# on the pods' addresses): kube-proxy and the bridge plugin do the rest. It
# needs the node registered. Its health check expects a heartbeat from every
# controller its options turn on: the router and service proxy, which do not
# run here, are off, or the check fails a minute after the start.
start_network_policies() {
  daemon kube-router-netpol "$BIN_DIR/kube-router-netpol" --kubeconfig "$KUBECONFIG_FILE" \
    --run-firewall=true --run-router=false --run-service-proxy=false \
    --hostname-override "$NODE_NAME" --service-cluster-ip-range "$SERVICE_CIDR" --health-port "$NETPOL_HEALTH_PORT" --v=1
  wait_until "kube-router's NetworkPolicy firewall did not become healthy" 60 kube-router-netpol \
    curl -fsS -m 2 "http://127.0.0.1:$NETPOL_HEALTH_PORT/healthz"
}

# kube-router leaves its chains and ipsets behind when it stops (its own
# clean-up needs a running controller): they would go on judging the packets
# of the pods that get the same addresses next time, with nobody to update them.
cleanup_network_policies() {
  local rule chain set
  iptables -S | grep -- '--comment "kube-router netpol' | sed 's/^-A /-D /' | while read -r rule; do
    eval "iptables $rule" || true
  done
  local chains
  chains=$(iptables -S | awk '$1 == "-N" && $2 ~ /^KUBE-(ROUTER|POD-FW|NWPLCY)-/ { print $2 }')
  for chain in $chains; do iptables -F "$chain" || true; done
  for chain in $chains; do iptables -X "$chain" || true; done
  for set in $(ipset list -n 2>/dev/null | grep -E '^(inet6:)?KUBE-(SRC|DST)-' || true); do ipset destroy "$set" || true; done
}

node_ready() {
  [ "$(kubectl_ get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}

do_start() {
  reserve_ports "$ETCD_PORT" "$ETCD_PEER_PORT" "$APISERVER_PORT" "$DNS_HEALTH_PORT" "$DNS_READY_PORT" "$METRICS_ADAPTER_PORT" "$NETPOL_HEALTH_PORT"
  install_packages
  check_kernel
  mkdir -p "$CLUSTER_DIR"
  setup_network
  ensure_pki "$PKI_DIR" didyma-cluster "IP:127.0.0.1,IP:$NODE_IP,IP:10.96.0.1,DNS:localhost,DNS:$NODE_NAME,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  ensure_aggregation_certs
  start_control_plane
  start_containerd
  start_node
  start_network_policies
  start_metrics_adapter
  log "cluster ready in $SECONDS s (kubeconfig: $KUBECONFIG_FILE)"
}

# The pods' containers outlive containerd (their shims run on): they are
# killed first, through containerd, then the processes in reverse order.
do_stop() {
  local name
  for name in kubelet; do stop_named "$name"; done
  if alive containerd; then
    local task
    for task in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true; done
    sleep 1
    for task in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$task" >/dev/null 2>&1 || true; done
  fi
  for name in $(for p in $HOST_PORTS; do echo "relay-$p"; done) prometheus-adapter kube-router-netpol coredns kube-proxy containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop_named "$name"
  done
  [ -x "$BIN_DIR/kube-proxy" ] && "$BIN_DIR/kube-proxy" --cleanup >/dev/null 2>&1 || true
  cleanup_network_policies
}

stop_named() {
  local f
  f="$(pidfile "$1")"
  if pidfile_alive "$f"; then
    log "stopping $1"
    stop_pid "$(pidfile_pid "$f")" 30
  fi
  rm -f "$f"
}

do_status() {
  local name down=()
  for name in etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns kube-router-netpol prometheus-adapter; do
    alive "$name" || down+=("$name")
  done
  if [ "${#down[@]}" -eq 0 ] && node_ready 2>/dev/null; then
    echo "cluster: running (Kubernetes $KUBE_VERSION, node $NODE_NAME Ready, apiserver https://$NODE_IP:$APISERVER_PORT)"
  else
    echo "cluster: stopped${down:+ (not running: ${down[*]})}"
    return 1
  fi
}

cmd="${1:-}"
case "$cmd" in
  start)
    with_build_lock cluster-build ensure_built
    with_lock cluster do_start
    ;;
  stop) with_lock cluster do_stop ;;
  restart)
    with_build_lock cluster-build ensure_built
    with_lock cluster do_stop
    with_lock cluster do_start
    ;;
  build) with_build_lock cluster-build ensure_built ;;
  status) do_status ;;
  env) env_lines ;;
  *) usage_exit "$0" "start|stop|restart|status|env|build" ;;
esac
