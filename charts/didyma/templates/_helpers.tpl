{{/* Names */}}
{{- define "didyma.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "didyma.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "didyma.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "didyma.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* <fullname>-<component>, e.g. didyma-operator */}}
{{- define "didyma.component" -}}
{{- printf "%s-%s" (include "didyma.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "didyma.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "didyma.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: didyma
{{- end -}}

{{/* Labels of one component: call with (dict "root" $ "component" "executor") */}}
{{- define "didyma.componentLabels" -}}
{{ include "didyma.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "didyma.selectorLabels" -}}
app.kubernetes.io/name: {{ include "didyma.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The platform's image (after image.registry): by digest when image.digest is set, by tag otherwise. */}}
{{- define "didyma.image" -}}
{{- $repository := include "didyma.imageRepository" (dict "root" . "image" .Values.image) -}}
{{- if .Values.image.digest -}}
{{ $repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ $repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{- define "didyma.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "didyma.fullname" .) -}}
{{- end -}}

{{/* The S3 endpoint of storage configurations: the bundled MinIO's Service, or externalMinio.endpoint. */}}
{{- define "didyma.minioEndpoint" -}}
{{- if .Values.minio.enabled -}}
{{- printf "http://%s:9000" (include "didyma.component" (dict "root" . "component" "minio")) -}}
{{- else -}}
{{- .Values.externalMinio.endpoint -}}
{{- end -}}
{{- end -}}

{{- define "didyma.configName" -}}
{{- printf "%s-config" (include "didyma.fullname" .) -}}
{{- end -}}

{{- define "didyma.proxyConfigMap" -}}
{{- .Values.proxyConfigMap | default (printf "%s-proxy-config" (include "didyma.fullname" .)) -}}
{{- end -}}

{{- define "didyma.leaseName" -}}
{{- printf "%s-operator" (include "didyma.fullname" .) -}}
{{- end -}}

{{/* Environment every process shares: the config ConfigMap, the database and queue URLs from Secrets. */}}
{{- define "didyma.commonEnv" -}}
{{- /* The bundled PostgreSQL and RabbitMQ: their Secrets own the passwords, the URLs refer to them. */ -}}
{{- if .Values.postgresql.enabled -}}
- name: POSTGRESQL_PASSWORD
  valueFrom:
    secretKeyRef: { name: {{ include "didyma.component" (dict "root" . "component" "postgresql") }}, key: password }
- name: DATABASE_URL
  value: {{ printf "postgres://%s:$(POSTGRESQL_PASSWORD)@%s:5432/%s" .Values.postgresql.username (include "didyma.component" (dict "root" . "component" "postgresql")) .Values.postgresql.database | quote }}
{{- else -}}
{{ include "didyma.externalDatabaseEnv" . | trim }}
{{- end }}
{{- if .Values.rabbitmq.enabled }}
- name: RABBITMQ_PASSWORD
  valueFrom:
    secretKeyRef: { name: {{ include "didyma.component" (dict "root" . "component" "rabbitmq") }}, key: password }
- name: DIDYMA_AMQP_URL
  value: {{ printf "amqp://%s:$(RABBITMQ_PASSWORD)@%s:5672" .Values.rabbitmq.username (include "didyma.component" (dict "root" . "component" "rabbitmq")) | quote }}
{{- else }}
{{- include "didyma.externalRabbitmqEnv" . }}
{{- end }}
- name: DIDYMA_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "didyma.secretName" . }}
      key: metrics-token
      optional: true
{{- end -}}

{{/* The namespace of the credentials Secrets: never the release namespace, where RBAC would then open the release Secret too. */}}
{{- define "didyma.credentialsNamespace" -}}
{{- $namespace := .Values.credentials.namespace | default (printf "%s-credentials" .Release.Namespace) -}}
{{- if eq $namespace .Release.Namespace -}}
{{- fail "credentials.namespace must differ from the release namespace: the components may read every Secret of that namespace" -}}
{{- end -}}
{{- if gt (len $namespace) 63 -}}
{{- fail (printf "credentials.namespace: %q is longer than 63 characters; set a shorter one" $namespace) -}}
{{- end -}}
{{- $namespace -}}
{{- end -}}

{{/* Kubernetes mode, for the private server, the executors and the operator. */}}
{{- define "didyma.kubeEnv" -}}
- name: DIDYMA_KUBE_MODE
  value: in-cluster
- name: DIDYMA_KUBE_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: DIDYMA_PROXY_CONFIGMAP
  value: {{ include "didyma.proxyConfigMap" . }}
- name: DIDYMA_KUBE_CREDENTIALS_NAMESPACE
  value: {{ include "didyma.credentialsNamespace" . }}
{{- end -}}

{{- define "didyma.podSecurity" -}}
# No Service environment variables: with the release named didyma, the Service
# didyma-auth would inject DIDYMA_AUTH_PORT=tcp://… into every container, a
# setting of the platform's own.
enableServiceLinks: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* HTTP probes on /healthz (liveness) and /readyz (readiness) of a named port. */}}
{{- define "didyma.probes" -}}
livenessProbe:
  httpGet: { path: /healthz, port: {{ . }} }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /readyz, port: {{ . }} }
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 3
startupProbe:
  httpGet: { path: /healthz, port: {{ . }} }
  periodSeconds: 2
  failureThreshold: 30
{{- end -}}

{{/*
Pod settings each component has in its values (extraEnv, extraVolumes,
extraVolumeMounts, podAnnotations, priorityClassName, topologySpreadConstraints).
The helpers below take (dict "root" $ "component" <name> "values" <its values>).
*/}}

{{/* The chart-wide podAnnotations, then the component's own (they win). */}}
{{- define "didyma.podAnnotations" -}}
{{- with mergeOverwrite (deepCopy (.root.Values.podAnnotations | default dict)) (.values.podAnnotations | default dict) }}
{{- toYaml . }}
{{- end }}
{{- end -}}

{{/* priorityClassName and topologySpreadConstraints; a constraint without labelSelector gets the component's pod labels. */}}
{{- define "didyma.podScheduling" -}}
{{- $pod := dict }}
{{- with .values.priorityClassName }}{{ $_ := set $pod "priorityClassName" . }}{{ end }}
{{- $selector := dict "matchLabels" (include "didyma.selectorLabels" . | fromYaml) }}
{{- $constraints := list }}
{{- range .values.topologySpreadConstraints }}
{{- $constraints = append $constraints (ternary . (merge (dict "labelSelector" $selector) .) (hasKey . "labelSelector")) }}
{{- end }}
{{- with $constraints }}{{ $_ := set $pod "topologySpreadConstraints" . }}{{ end }}
{{- with $pod }}{{ toYaml . }}{{ end }}
{{- end -}}

{{/*
GitOps: "true" when the chart renders against a cluster (install, upgrade,
--dry-run=server), where the kube-system Namespace always exists; empty under
`helm template` and client dry runs (Argo CD renders so), whose lookup
answers nothing (`helm lint` reports the failure below as information).
*/}}
{{- define "didyma.clusterReachable" -}}
{{- if lookup "v1" "Namespace" "" "kube-system" -}}true{{- end -}}
{{- end -}}

{{/*
Called before generating a key or password (dict: root, value, hint): without
cluster access the one the release already has cannot be read back, so every
render would make a new one; refuse rather than change it silently.
*/}}
{{- define "didyma.mayGenerate" -}}
{{- if not (include "didyma.clusterReachable" .root) -}}
{{- fail (printf "%s is empty and would be generated anew on every render: without cluster access (helm template, Argo CD, --dry-run=client) the chart cannot read back the value the release already has. %s (docs/kubernetes.md, GitOps)." .value .hint) -}}
{{- end -}}
{{- end -}}

{{/* Metadata the chart adds to its CRDs, replacing their `  labels:` line. */}}
{{- define "didyma.crdMetadata" -}}
{{- if .Values.crds.keep }}
  annotations:
    helm.sh/resource-policy: keep
{{- end }}
  labels:
    {{- include "didyma.labels" . | replace "app.kubernetes.io/part-of: didyma" "" | trim | nindent 4 }}
{{ "" }}
{{- end -}}

{{/*
Fails, with cluster access, when a CRD exists that this release does not own:
one installed from the crds/ folder of chart 0.1.x or by kubectl (adopt it,
or keep applying it yourself with crds.enabled=false), or one another
release owns (only one release per cluster may set crds.enabled).
*/}}
{{- define "didyma.crdOwnable" -}}
{{- $crd := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" .name -}}
{{- if $crd -}}
{{- $annotations := $crd.metadata.annotations | default dict -}}
{{- $owner := get $annotations "meta.helm.sh/release-name" -}}
{{- $ownerNamespace := get $annotations "meta.helm.sh/release-namespace" -}}
{{- if not $owner -}}
{{- fail (printf "CRD %s exists but no Helm release owns it (installed from the crds/ folder of chart 0.1.x, or with kubectl). Let this release adopt it: kubectl label crd %s app.kubernetes.io/managed-by=Helm && kubectl annotate crd %s meta.helm.sh/release-name=%s meta.helm.sh/release-namespace=%s; or set crds.enabled=false and apply crds/ yourself (docs/kubernetes.md, Upgrading the CRDs)." .name .name .name .root.Release.Name .root.Release.Namespace) -}}
{{- else if or (ne $owner .root.Release.Name) (ne $ownerNamespace .root.Release.Namespace) -}}
{{- fail (printf "CRD %s belongs to release %s in namespace %s: only one release per cluster installs the CRDs; set crds.enabled=false in this one." .name $owner $ownerNamespace) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Single sign-on (docs/sso.md): the connections of sso.connections as
DIDYMA_OIDC_CONNECTIONS, each clientSecret read from its Secret into a
variable of its own, which the connection names in client_secret_env.
*/}}
{{- define "didyma.ssoEnv" -}}
{{- $connections := list }}
{{- range $i, $connection := .Values.sso.connections }}
{{- $entry := omit $connection "clientSecret" }}
{{- with $connection.clientSecret }}
{{- $_ := set $entry "client_secret_env" (printf "DIDYMA_OIDC_CLIENT_SECRET_%d" $i) }}
- name: DIDYMA_OIDC_CLIENT_SECRET_{{ $i }}
  valueFrom:
    secretKeyRef: { name: {{ .secretName | quote }}, key: {{ .key | quote }} }
{{- end }}
{{- $connections = append $connections $entry }}
{{- end }}
{{- with $connections }}
- name: DIDYMA_OIDC_CONNECTIONS
  value: {{ toJson . | quote }}
{{- end }}
{{- end }}

{{- /* Workload identity reviews ServiceAccount tokens: the auth server then has a ServiceAccount of its own, allowed to create TokenReviews. */}}
{{- define "didyma.reviewsTokens" -}}
{{- if .Values.workloadIdentity.serviceAccounts }}true{{ end }}
{{- end }}

{{- define "didyma.workloadEnv" -}}
{{- with .Values.workloadIdentity.issuers }}
- name: DIDYMA_WORKLOAD_ISSUERS
  value: {{ toJson . | quote }}
{{- end }}
{{- with .Values.workloadIdentity.serviceAccounts }}
- name: DIDYMA_WORKLOAD_SERVICE_ACCOUNTS
  value: {{ toJson . | quote }}
- { name: DIDYMA_WORKLOAD_TOKEN_REVIEW, value: in-cluster }
- name: DIDYMA_WORKLOAD_AUDIENCE
  value: {{ $.Values.workloadIdentity.audience | quote }}
{{- end }}
{{- end }}

{{/*
An image reference from {repository, tag} (dict "root" $ "image" <values>):
with image.registry set, the repository's own registry host is replaced by
it, and a Docker Hub name gets its full path (postgres: library/postgres),
as a mirror or a pull-through cache serves it.
*/}}
{{- define "didyma.imageRepository" -}}
{{- $repository := .image.repository -}}
{{- with .root.Values.image.registry -}}
{{- $parts := splitList "/" $repository -}}
{{- $first := first $parts -}}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) -}}
{{- $parts = rest $parts -}}
{{- else if eq (len $parts) 1 -}}
{{- $parts = prepend $parts "library" -}}
{{- end -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) (join "/" $parts) -}}
{{- end -}}
{{- $repository -}}
{{- end -}}

{{/* A bundled dependency's image (postgresql, rabbitmq, minio): call with (dict "root" $ "image" <its image values>). */}}
{{- define "didyma.dependencyImage" -}}
{{ include "didyma.imageRepository" . }}:{{ .image.tag }}
{{- end -}}

{{/*
The pod settings every platform pod shares (global) and the component's own
(dict "root" $ "values" <its values> "field" <extraEnv|extraVolumes|extraVolumeMounts>):
global entries first, less those the component redefines (same name, or
mountPath for mounts), which a server-side apply would refuse as duplicates.
*/}}
{{- define "didyma.extraList" -}}
{{- $key := ternary "mountPath" "name" (eq .field "extraVolumeMounts") -}}
{{- $own := get .values .field | default list -}}
{{- $taken := dict -}}
{{- range $own }}{{ $_ := set $taken (toString (get . $key)) true }}{{ end -}}
{{- $merged := list -}}
{{- range get (.root.Values.global | default dict) .field | default list -}}
{{- if not (hasKey $taken (toString (get . $key))) }}{{ $merged = append $merged . }}{{ end -}}
{{- end -}}
{{- with concat $merged $own }}{{ toYaml . }}{{ end -}}
{{- end -}}
