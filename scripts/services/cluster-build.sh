# shellcheck shell=bash
# The cluster's binaries, built from the Go module proxy at kube.sh's
# Kubernetes version and cached in $BIN_DIR with version stamps (rebuilt only
# when a pin changes). Sourced by cluster.sh, which sets the variables used here.

stamp_of() { cat "$BIN_DIR/$1.version" 2>/dev/null || true; }
built() { [ -x "$BIN_DIR/$1" ] && [ "$(stamp_of "$1")" = "$2" ]; }
NODE_BINARIES=(kubelet kube-controller-manager kube-scheduler kube-proxy kubectl)

# build_in NAME VERSION LOG CMD...: CMD leaves its binaries in $out; they
# move into $BIN_DIR with their version stamps only when all were built.
build_in() {
  local name="$1" version="$2" buildlog="$3" start=$SECONDS rc=0
  shift 3
  out="$BUILD_DIR/.out-$name.$$"
  rm -rf "$out"
  mkdir -p "$out"
  log "building $name $version with $(go env GOVERSION) (log: $buildlog)"
  ("$@") >"$buildlog" 2>&1 || rc=$?
  local f
  if [ "$rc" -ne 0 ]; then
    tail -n 30 "$buildlog" >&2 || true
    rm -rf "$out"
    die "building $name $version failed (exit $rc, log: $buildlog)"
  fi
  for f in "$out"/*; do
    mv -f "$f" "$BIN_DIR/"
    echo "$version" >"$BIN_DIR/$(basename "$f").version"
  done
  rm -rf "$out"
  log "built $name in $((SECONDS - start))s"
}

# The kubernetes wrapper module of kube.sh, with the node's commands.
build_node_binaries() {
  local dir="$BUILD_DIR/kube" staging="v0.${KUBE_VERSION#v1.}" minor="${KUBE_VERSION#v1.}" m c pkgs=()
  minor="${minor%%.*}"
  rm -rf "$dir"
  mkdir -p "$dir"
  cd "$dir"
  printf 'module didyma.test/kube-node-build\n\ngo 1.24\n\nreplace (\n' >go.mod
  local modules
  modules="$(kube_staging_modules)"
  [ -n "$modules" ] || die "found no STAGING_MODULES list in $KUBE_SCRIPT"
  for m in $modules; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$staging" >>go.mod; done
  echo ')' >>go.mod
  for c in "${NODE_BINARIES[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  go get "${pkgs[@]/%/@$KUBE_VERSION}"
  local v=k8s.io/component-base/version
  nice -n 10 go build -trimpath -o "$out/" \
    -ldflags "-X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean" "${pkgs[@]}"
}

# kube.sh's list of staging modules (one source for both wrappers).
kube_staging_modules() {
  sed -n '/^STAGING_MODULES=(/,/)/p' "$KUBE_SCRIPT" | tr -d '()' | sed 's/STAGING_MODULES=//' | tr -s ' \n' '\n' | grep -v '^$'
}

# CoreDNS with only the plugins a cluster's Service names need (its full
# plugin set pulls every cloud SDK), client-go pinned to the cluster's.
build_coredns() {
  local dir="$BUILD_DIR/coredns" staging="v0.${KUBE_VERSION#v1.}" m
  rm -rf "$dir"
  mkdir -p "$dir"
  cd "$dir"
  printf 'module didyma.test/coredns-build\n\ngo 1.24\n\nreplace (\n' >go.mod
  for m in api apimachinery client-go; do printf '\tk8s.io/%s => k8s.io/%s %s\n' "$m" "$m" "$staging" >>go.mod; done
  echo ')' >>go.mod
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
  nice -n 10 go build -trimpath -o "$out/coredns" .
}

# Prometheus Adapter: serves Prometheus series as the External metrics an HPA
# reads (the executors' queue depth), as in clusters that run it.
build_metrics_adapter() {
  local dir="$BUILD_DIR/metrics-adapter"
  rm -rf "$dir"
  mkdir -p "$dir"
  cd "$dir"
  printf 'module didyma.test/metrics-adapter-build\n\ngo 1.24\n' >go.mod
  go get "sigs.k8s.io/prometheus-adapter/cmd/adapter@$METRICS_ADAPTER_VERSION"
  nice -n 10 go build -trimpath -o "$out/prometheus-adapter" sigs.k8s.io/prometheus-adapter/cmd/adapter
}

# The sandbox container of every pod: sleeps until a signal, reaps orphans.
build_pause() {
  local dir="$BUILD_DIR/pause"
  rm -rf "$dir"
  mkdir -p "$dir"
  cd "$dir"
  printf 'module didyma.test/pause\n\ngo 1.24\n' >go.mod
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
  CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$out/pause" .
}

ensure_built() {
  ensure_state_dir
  mkdir -p "$BIN_DIR" "$BUILD_DIR"
  # etcd, kube-apiserver and helm: kube.sh's build (and its lock).
  bash "$KUBE_SCRIPT" build
  local c missing=0
  for c in "${NODE_BINARIES[@]}"; do built "$c" "$KUBE_VERSION" || missing=1; done
  if [ "$missing" -eq 1 ] || ! built coredns "$COREDNS_VERSION" || ! built pause 1 || ! built prometheus-adapter "$METRICS_ADAPTER_VERSION"; then
    command -v go >/dev/null 2>&1 || die "go is missing: the cluster's binaries are built from source and need Go >= 1.24 on PATH"
  fi
  [ "$missing" -eq 0 ] || build_in kubelet+controllers "$KUBE_VERSION" "$BUILD_DIR/kube.log" build_node_binaries
  built coredns "$COREDNS_VERSION" || build_in coredns "$COREDNS_VERSION" "$BUILD_DIR/coredns.log" build_coredns
  built pause 1 || build_in pause 1 "$BUILD_DIR/pause.log" build_pause
  built prometheus-adapter "$METRICS_ADAPTER_VERSION" ||
    build_in prometheus-adapter "$METRICS_ADAPTER_VERSION" "$BUILD_DIR/metrics-adapter.log" build_metrics_adapter
}

with_build_lock() {
  ensure_state_dir
  (
    flock -w 3600 9 || die "timed out waiting for the cluster build lock"
    "$@"
  ) 9>"$STATE_DIR/locks/cluster-build.lck"
}
