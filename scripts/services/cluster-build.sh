# shellcheck shell=bash
# The cluster's own binaries, built from the Go module proxy at the
# Kubernetes version of versions.sh (whose helpers build them) and cached in
# $BIN_DIR with version stamps. Sourced by cluster.sh, which sets the
# variables used here.

NODE_BINARIES=(kubelet kube-controller-manager kube-scheduler kube-proxy kubectl)

# kube.sh's wrapper module of kubernetes, with the node's commands.
build_node_binaries() {
  local dir="$BUILD_DIR/kube" c pkgs=()
  write_wrapper "$dir" didyma.test/kube-node-build "${STAGING_MODULES[@]}"
  cd "$dir"
  for c in "${NODE_BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  go get "${pkgs[@]/%/@$KUBE_VERSION}"
  nice -n 10 go build -trimpath -o "$tmpbin/" -ldflags "$(kube_version_ldflags)" "${pkgs[@]}"
}

# CoreDNS with only the plugins a cluster's Service names need (its full
# plugin set pulls every cloud SDK), client-go pinned to the cluster's.
build_coredns() {
  local dir="$BUILD_DIR/coredns"
  write_wrapper "$dir" didyma.test/coredns-build api apimachinery client-go
  cd "$dir"
  cat >main.go <<'EOF'
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/ready"
)

func init() {
	dnsserver.Directives = []string{"bind", "ready", "health", "errors", "cache", "loadbalance", "kubernetes"}
}

func main() { coremain.Run() }
EOF
  go get "github.com/coredns/coredns@$COREDNS_VERSION"
  go mod tidy
  nice -n 10 go build -trimpath -o "$tmpbin/coredns" .
}

# Prometheus Adapter: serves Prometheus series as the External metrics an HPA
# reads (the executors' queue depth), as in clusters that run it.
build_metrics_adapter() {
  local dir="$BUILD_DIR/metrics-adapter"
  write_wrapper "$dir" didyma.test/metrics-adapter-build
  cd "$dir"
  go get "sigs.k8s.io/prometheus-adapter/cmd/adapter@$METRICS_ADAPTER_VERSION"
  nice -n 10 go build -trimpath -o "$tmpbin/prometheus-adapter" sigs.k8s.io/prometheus-adapter/cmd/adapter
}

# kube-router with only its NetworkPolicy firewall (iptables and ipset) on:
# the NetworkPolicy implementation of the test cluster. Upstream's command as
# it is; its router, service proxy and CNI stay off (cluster.sh).
build_kube_router() {
  local dir="$BUILD_DIR/kube-router" pkg=github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
  write_wrapper "$dir" didyma.test/kube-router-build
  cd "$dir"
  go get "$pkg@$KUBE_ROUTER_VERSION"
  nice -n 10 go build -trimpath -o "$tmpbin/kube-router" "$pkg"
}

# The sandbox container of every pod: sleeps until a signal, reaps orphans.
build_pause() {
  local dir="$BUILD_DIR/pause"
  write_wrapper "$dir" didyma.test/pause
  cd "$dir"
  cat >main.go <<'EOF'
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
EOF
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmpbin/pause" .
}

ensure_built() {
  ensure_state_dir
  mkdir -p "$BIN_DIR" "$BUILD_DIR"
  # etcd, kube-apiserver and helm: kube.sh's build (and its lock).
  bash "$KUBE_SCRIPT" build
  local c missing=0
  for c in "${NODE_BINARIES[@]}"; do built "$c" "$KUBE_VERSION" || missing=1; done
  if [ "$missing" -eq 1 ] || ! built coredns "$COREDNS_VERSION" || ! built pause 1 || ! built prometheus-adapter "$METRICS_ADAPTER_VERSION" ||
    ! built kube-router "$KUBE_ROUTER_VERSION"; then
    require_go "the cluster's binaries"
  fi
  [ "$missing" -eq 0 ] || run_build kubelet+controllers "$KUBE_VERSION" "$BUILD_DIR/kube.log" build_node_binaries
  built coredns "$COREDNS_VERSION" || run_build coredns "$COREDNS_VERSION" "$BUILD_DIR/coredns.log" build_coredns
  built pause 1 || run_build pause 1 "$BUILD_DIR/pause.log" build_pause
  built prometheus-adapter "$METRICS_ADAPTER_VERSION" ||
    run_build prometheus-adapter "$METRICS_ADAPTER_VERSION" "$BUILD_DIR/metrics-adapter.log" build_metrics_adapter
  built kube-router "$KUBE_ROUTER_VERSION" ||
    run_build kube-router "$KUBE_ROUTER_VERSION" "$BUILD_DIR/kube-router.log" build_kube_router
}
