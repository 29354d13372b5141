# shellcheck shell=bash
# shellcheck disable=SC2034 # the pins are read by the scripts that source this file
# The pinned versions of what the service scripts build from the Go module
# proxy, and the helpers that build it: each binary lands in $BIN_DIR with a
# version stamp beside it ($BIN_DIR/NAME.version) and is rebuilt only when
# the stamp differs from its pin. Each pin can be overridden by the DIDYMA_*
# variable it reads. Sourced after lib.sh by kube.sh, cluster.sh, minio.sh, jaeger.sh and keycloak.sh.

ETCD_VERSION="${DIDYMA_ETCD_VERSION:-v3.5.35}"
KUBE_VERSION="${DIDYMA_KUBE_VERSION:-v1.34.4}"
HELM_VERSION="${DIDYMA_HELM_VERSION:-v3.19.5}"
COREDNS_VERSION="${DIDYMA_COREDNS_VERSION:-v1.14.0}"
METRICS_ADAPTER_VERSION="${DIDYMA_METRICS_ADAPTER_VERSION:-v0.12.0}"
# kube-router, run as the test cluster's NetworkPolicy firewall only (docs/decisions.md says why not kube-network-policies).
KUBE_ROUTER_VERSION="${DIDYMA_KUBE_ROUTER_VERSION:-v2.1.0}"
# MinIO tags its releases RELEASE.<date>, which Go cannot resolve as module
# versions: the pin is the pseudo-version of a master commit (2026-02-12)
# that builds with Go >= 1.24.
MINIO_MODULE=github.com/minio/minio
MINIO_VERSION="${DIDYMA_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
# Jaeger v2 (one binary on the OpenTelemetry Collector): `go install` refuses its go.mod, so it is built as a tool of a wrapper module.
JAEGER_MODULE=github.com/jaegertracing/jaeger
JAEGER_VERSION="${DIDYMA_JAEGER_VERSION:-v1.76.0}"
# Keycloak, the OpenID Provider of the SSO tests: a Maven artifact (org.keycloak:keycloak-quarkus-dist, zip), not built here (keycloak.sh).
KEYCLOAK_VERSION="${DIDYMA_KEYCLOAK_VERSION:-26.4.7}"
# Helm's build also stamps the Kubernetes version `helm template` assumes (build_helm in kube.sh).
HELM_STAMP="$HELM_VERSION (kubernetes $KUBE_VERSION)"
# kube-router's controller is built on the cluster's client-go (build_kube_router_netpol in cluster-build.sh).
KUBE_ROUTER_STAMP="$KUBE_ROUTER_VERSION (kubernetes $KUBE_VERSION)"

BIN_DIR="$STATE_DIR/bin"

# Kubernetes publishes its staging modules (k8s.io/api, client-go, ...) as
# v0.<minor>.<patch>; its own go.mod points them at ./staging, so a wrapper
# module replaces each with the published version (write_wrapper).
STAGING_MODULES=(api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
  cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api cri-client
  csi-translation-lib dynamic-resource-allocation endpointslice externaljwt kms kube-aggregator
  kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics mount-utils
  pod-security-admission sample-apiserver sample-cli-plugin sample-controller)

kube_minor() {
  local minor="${KUBE_VERSION#v1.}"
  echo "${minor%%.*}"
}

# The version fields Kubernetes' release builds stamp into its commands.
kube_version_ldflags() {
  local v=k8s.io/component-base/version
  echo "-X $v.gitVersion=$KUBE_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$(kube_minor) -X $v.gitTreeState=clean"
}

stamp_of() { cat "$BIN_DIR/$1.version" 2>/dev/null || true; }
# built NAME VERSION: $BIN_DIR/NAME is there and was built at VERSION.
built() { [ -x "$BIN_DIR/$1" ] && [ "$(stamp_of "$1")" = "$2" ]; }

# require_go WHAT: stop with a message unless Go is on PATH.
require_go() {
  command -v go >/dev/null 2>&1 ||
    die "go is missing: building $1 from source needs Go >= 1.24 on PATH (Debian's golang-go is too old)"
}

# write_wrapper DIR MODULE [STAGING_MODULE...]: a fresh module DIR to build
# in, since `go install pkg@version` refuses modules whose go.mod has replace
# directives (etcd and kubernetes both have them); each named staging module
# is replaced by its published version of $KUBE_VERSION.
write_wrapper() {
  local dir="$1" module="$2" m
  shift 2
  rm -rf "$dir"
  mkdir -p "$dir"
  printf 'module %s\n\ngo 1.24\n' "$module" >"$dir/go.mod"
  if [ "$#" -gt 0 ]; then
    {
      printf '\nreplace (\n'
      for m in "$@"; do printf '\tk8s.io/%s => k8s.io/%s v0.%s\n' "$m" "$m" "${KUBE_VERSION#v1.}"; done
      echo ')'
    } >>"$dir/go.mod"
  fi
}

# run_build NAME VERSION LOG CMD...: runs CMD in the background (it must
# leave its binaries in $tmpbin), prints progress every minute, then moves
# each binary into $BIN_DIR with VERSION as its stamp. An interrupted build
# never leaves a half-written binary behind a matching stamp.
run_build() {
  local name="$1" version="$2" buildlog="$3"
  shift 3
  local start=$SECONDS rc=0 next=60 binary
  tmpbin="$BIN_DIR/.$name-build.$$"
  rm -rf "$tmpbin"
  mkdir -p "$tmpbin"
  log "building $name $version with $(go env GOVERSION) (minutes on a cold cache; log: $buildlog)"
  ("$@") >"$buildlog" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    if [ $((SECONDS - start)) -ge "$next" ]; then
      log "still building $name ($((SECONDS - start))s)"
      next=$((next + 60))
    fi
  done
  wait "$pid" || rc=$?
  local binaries=("$tmpbin"/*)
  if [ "$rc" -ne 0 ] || [ ! -x "${binaries[0]}" ]; then
    tail -n 30 "$buildlog" >&2 || true
    rm -rf "$tmpbin"
    die "building $name $version failed (exit $rc, log: $buildlog)"
  fi
  for binary in "${binaries[@]}"; do
    mv -f "$binary" "$BIN_DIR/"
    echo "$version" >"$BIN_DIR/${binary##*/}.version"
  done
  rm -rf "$tmpbin"
  log "built $name in $((SECONDS - start))s"
}

# with_build_lock NAME CMD...: a cold build takes longer than with_lock's
# 15-minute wait on a small machine, so builds hold a lock of their own.
with_build_lock() {
  local name="$1"
  shift
  ensure_state_dir
  (
    flock -w 3600 9 || die "timed out waiting for the $name lock"
    "$@"
  ) 9>"$STATE_DIR/locks/$name.lck"
}
