# shellcheck shell=bash
# The cluster's External metrics: Prometheus Adapter on the host, behind the
# apiserver's aggregation layer, serving the test Prometheus's series (the
# invocations waiting for the executors). Sourced by cluster.sh, which sets the variables used here.

# The aggregation layer's identities, signed by the cluster's CA: the
# apiserver's front-proxy client (the only name allowed to assert users to an
# extension server) and the metrics adapter's serving certificate.
ensure_aggregation_certs() {
  [ -s "$PKI_DIR/metrics-adapter.crt" ] && return 0
  (
    cd "$PKI_DIR"
    umask 077
    printf '%s\n' 'extendedKeyUsage=clientAuth' >front-proxy.ext
    sign_cert front-proxy-client /CN=front-proxy-client front-proxy.ext
    printf '%s\n' "subjectAltName=DNS:$ADAPTER_SERVICE.kube-system.svc,IP:$NODE_IP" 'extendedKeyUsage=serverAuth' >metrics-adapter.ext
    sign_cert metrics-adapter "/CN=$ADAPTER_SERVICE" metrics-adapter.ext
  )
}

# Prometheus Adapter on the host, registered as external.metrics.k8s.io: the
# executors' HPA reads the invocations waiting through it.
start_metrics_adapter() {
  cat >"$CLUSTER_DIR/metrics-adapter.yaml" <<'EOF'
externalRules:
  # Every private server reports the same count per workspace, read from the database: one of them, summed over workspaces.
  - seriesQuery: 'didyma_invocations_queued'
    resources: { namespaced: false }
    metricsQuery: 'sum(max by (workspace) (<<.Series>>{<<.LabelMatchers>>}))'
EOF
  daemon prometheus-adapter "$BIN_DIR/prometheus-adapter" --config "$CLUSTER_DIR/metrics-adapter.yaml" \
    --prometheus-url "$PROMETHEUS_URL" --metrics-relist-interval 5s \
    --lister-kubeconfig "$KUBECONFIG_FILE" --authentication-kubeconfig "$KUBECONFIG_FILE" \
    --authorization-kubeconfig "$KUBECONFIG_FILE" --bind-address "$NODE_IP" --secure-port "$METRICS_ADAPTER_PORT" \
    --tls-cert-file "$PKI_DIR/metrics-adapter.crt" --tls-private-key-file "$PKI_DIR/metrics-adapter.key" --v=1
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: Service
    metadata: { name: $ADAPTER_SERVICE, namespace: kube-system }
    spec: { ports: [{ name: https, port: 443, targetPort: $METRICS_ADAPTER_PORT }] }
  - apiVersion: discovery.k8s.io/v1
    kind: EndpointSlice
    metadata: { name: $ADAPTER_SERVICE-host, namespace: kube-system, labels: { kubernetes.io/service-name: $ADAPTER_SERVICE } }
    addressType: IPv4
    ports: [{ name: https, port: $METRICS_ADAPTER_PORT, protocol: TCP }]
    endpoints: [{ addresses: ["$NODE_IP"], conditions: { ready: true } }]
  - apiVersion: apiregistration.k8s.io/v1
    kind: APIService
    metadata: { name: v1beta1.external.metrics.k8s.io }
    spec:
      group: external.metrics.k8s.io
      version: v1beta1
      service: { name: $ADAPTER_SERVICE, namespace: kube-system, port: 443 }
      caBundle: $(base64 -w0 <"$PKI_DIR/ca.crt")
      groupPriorityMinimum: 100
      versionPriority: 100
EOF
  wait_until "the metrics adapter did not serve external.metrics.k8s.io" 60 prometheus-adapter external_metrics_served
}

external_metrics_served() { kubectl_ get --raw /apis/external.metrics.k8s.io/v1beta1 >/dev/null 2>&1; }
