{{/*
The TLS Secret of a server's host (dict "root" $ "name" <server>): its own
servers.<name>.ingress.tlsSecretName, else with cert-manager the one its
Certificate writes (<fullname>-<name>-tls), else the shared
ingress.tlsSecretName; empty: no TLS.
*/}}
{{- define "didyma.tlsSecretName" -}}
{{- $server := index .root.Values.servers .name -}}
{{- if $server.ingress.tlsSecretName -}}
{{- $server.ingress.tlsSecretName -}}
{{- else if .root.Values.ingress.certManager.enabled -}}
{{- printf "%s-tls" (include "didyma.component" (dict "root" .root "component" .name)) -}}
{{- else -}}
{{- .root.Values.ingress.tlsSecretName -}}
{{- end -}}
{{- end -}}

{{/* The paths a server exposes outside the cluster (never /metrics), as {path, exact}; auth adds its OAuth endpoints and the dashboard. */}}
{{- define "didyma.exposedPaths" -}}
{{- $paths := list (dict "path" "/api") -}}
{{- if eq . "auth" }}{{ $paths = concat $paths (list (dict "path" "/o") (dict "path" "/dashboard")) }}{{ end -}}
{{- /* The document in Swagger UI, with its files. */ -}}
{{- $paths = concat $paths (list (dict "path" "/openapi.json" "exact" true) (dict "path" "/docs")) -}}
{{- toYaml $paths -}}
{{- end -}}
