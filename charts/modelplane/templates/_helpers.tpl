{{/* Names */}}
{{- define "modelplane.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "modelplane.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains (include "modelplane.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "modelplane.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* <fullname>-<component>, e.g. modelplane-operator */}}
{{- define "modelplane.component" -}}
{{- printf "%s-%s" (include "modelplane.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "modelplane.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "modelplane.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: modelplane
{{- end -}}

{{/* Labels of one component: call with (dict "root" $ "component" "executor") */}}
{{- define "modelplane.componentLabels" -}}
{{ include "modelplane.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "modelplane.selectorLabels" -}}
app.kubernetes.io/name: {{ include "modelplane.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "modelplane.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "modelplane.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "modelplane.fullname" .) -}}
{{- end -}}

{{- define "modelplane.configName" -}}
{{- printf "%s-config" (include "modelplane.fullname" .) -}}
{{- end -}}

{{- define "modelplane.proxyConfigMap" -}}
{{- .Values.proxyConfigMap | default (printf "%s-proxy-config" (include "modelplane.fullname" .)) -}}
{{- end -}}

{{- define "modelplane.leaseName" -}}
{{- printf "%s-operator" (include "modelplane.fullname" .) -}}
{{- end -}}

{{/* Environment every process shares: the config ConfigMap, the database and queue URLs from Secrets. */}}
{{- define "modelplane.commonEnv" -}}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.externalDatabase.existingSecret | default (include "modelplane.secretName" .) }}
      key: {{ .Values.externalDatabase.existingSecretKey }}
- name: MODELPLANE_AMQP_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.externalRabbitmq.existingSecret | default (include "modelplane.secretName" .) }}
      key: {{ .Values.externalRabbitmq.existingSecretKey }}
- name: MODELPLANE_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "modelplane.secretName" . }}
      key: metrics-token
      optional: true
{{- end -}}

{{/* Kubernetes mode, for the private server, the executors and the operator. */}}
{{- define "modelplane.kubeEnv" -}}
- name: MODELPLANE_KUBE_MODE
  value: in-cluster
- name: MODELPLANE_KUBE_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: MODELPLANE_PROXY_CONFIGMAP
  value: {{ include "modelplane.proxyConfigMap" . }}
{{- end -}}

{{- define "modelplane.podSecurity" -}}
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
{{- define "modelplane.probes" -}}
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
