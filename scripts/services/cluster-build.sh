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

# kube-router's NetworkPolicy firewall (iptables and ipset) alone: the
# NetworkPolicy implementation of the test cluster. Wired as kube-router's own
# command wires it (pkg/cmd), with its flags, but without the router, service
# proxy and load balancer, whose BGP and cloud SDKs would triple the build;
# client-go pinned to the cluster's, which the other builds have cached.
build_kube_router_netpol() {
  local dir="$BUILD_DIR/kube-router-netpol"
  write_wrapper "$dir" didyma.test/kube-router-netpol api apimachinery client-go
  cd "$dir"
  cat >main.go <<'EOF'
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/cloudnativelabs/kube-router/v2/pkg/controllers/netpol"
	"github.com/cloudnativelabs/kube-router/v2/pkg/healthcheck"
	"github.com/cloudnativelabs/kube-router/v2/pkg/options"
	"github.com/spf13/pflag"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "%s\n", err)
		os.Exit(1)
	}
}

func run() error {
	klog.InitFlags(nil)
	config := options.NewKubeRouterConfig()
	config.AddFlags(pflag.CommandLine)
	pflag.Parse()
	if err := flag.Set("v", config.VLevel); err != nil {
		return err
	}
	clientConfig, err := clientcmd.BuildConfigFromFlags(config.Master, config.Kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(clientConfig)
	if err != nil {
		return err
	}

	var wg sync.WaitGroup
	var ipsetMutex sync.Mutex
	stopCh := make(chan struct{})
	healthChan := make(chan *healthcheck.ControllerHeartbeat, 10)
	hc, err := healthcheck.NewHealthController(config)
	if err != nil {
		return err
	}
	wg.Add(1)
	go hc.RunServer(stopCh, &wg)

	factory := informers.NewSharedInformerFactory(client, 0)
	pods := factory.Core().V1().Pods().Informer()
	namespaces := factory.Core().V1().Namespaces().Informer()
	policies := factory.Networking().V1().NetworkPolicies().Informer()
	factory.Start(stopCh)
	factory.WaitForCacheSync(stopCh)
	hc.SetAlive()
	wg.Add(1)
	go hc.RunCheck(healthChan, stopCh, &wg)

	iptables, ipsets, err := netpol.NewIPTablesHandlers(config)
	if err != nil {
		return err
	}
	npc, err := netpol.NewNetworkPolicyController(client, config, pods, policies, namespaces, &ipsetMutex, iptables, ipsets)
	if err != nil {
		return err
	}
	if _, err := pods.AddEventHandler(npc.PodEventHandler); err != nil {
		return err
	}
	if _, err := namespaces.AddEventHandler(npc.NamespaceEventHandler); err != nil {
		return err
	}
	if _, err := policies.AddEventHandler(npc.NetworkPolicyEventHandler); err != nil {
		return err
	}
	wg.Add(1)
	go npc.Run(healthChan, stopCh, &wg)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	<-signals
	close(stopCh)
	wg.Wait()
	return nil
}
EOF
  go get "github.com/cloudnativelabs/kube-router/v2@$KUBE_ROUTER_VERSION"
  go mod tidy
  nice -n 10 go build -trimpath -o "$tmpbin/kube-router-netpol" .
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
    ! built kube-router-netpol "$KUBE_ROUTER_STAMP"; then
    require_go "the cluster's binaries"
  fi
  [ "$missing" -eq 0 ] || run_build kubelet+controllers "$KUBE_VERSION" "$BUILD_DIR/kube.log" build_node_binaries
  built coredns "$COREDNS_VERSION" || run_build coredns "$COREDNS_VERSION" "$BUILD_DIR/coredns.log" build_coredns
  built pause 1 || run_build pause 1 "$BUILD_DIR/pause.log" build_pause
  built prometheus-adapter "$METRICS_ADAPTER_VERSION" ||
    run_build prometheus-adapter "$METRICS_ADAPTER_VERSION" "$BUILD_DIR/metrics-adapter.log" build_metrics_adapter
  built kube-router-netpol "$KUBE_ROUTER_STAMP" ||
    run_build kube-router-netpol "$KUBE_ROUTER_STAMP" "$BUILD_DIR/kube-router-netpol.log" build_kube_router_netpol
}
