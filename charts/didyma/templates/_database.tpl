{{/*
The external PostgreSQL and RabbitMQ as a platform team runs them: host,
port and users with passwords from existing Secrets (DATABASE_PASSWORD,
DIDYMA_AMQP_PASSWORD: the platform encodes them into the URLs), TLS checked
against a CA from a Secret or ConfigMap, a transaction pooler in front of the
database, and a migration user apart from the runtime user.
*/}}

{{/* The runtime user's database env of every process (not the bundled PostgreSQL's). */}}
{{- define "didyma.externalDatabaseEnv" -}}
{{- $db := .Values.externalDatabase -}}
{{- if $db.host }}
- name: DATABASE_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ required "externalDatabase.existingSecret (the Secret of the runtime user's password) is required with externalDatabase.host" $db.existingSecret }}
      key: {{ $db.passwordKey }}
- name: DATABASE_URL
  value: {{ printf "postgres://%s@%s:%v/%s" (required "externalDatabase.user is required with externalDatabase.host" $db.user) $db.host $db.port $db.database | quote }}
{{- else }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $db.existingSecret | default (include "didyma.secretName" .) }}
      key: {{ $db.existingSecretKey }}
{{- end }}
{{- if eq $db.pooler.mode "transaction" }}
- { name: DATABASE_POOLER, value: transaction }
{{- end }}
{{- if not $db.pooler.listen }}
- { name: DATABASE_LISTEN, value: "off" }
{{- else if and $db.host $db.pooler.directHost }}
- name: DATABASE_LISTEN_URL
  value: {{ printf "postgres://%s@%s:%v/%s" $db.user $db.pooler.directHost $db.pooler.directPort $db.database | quote }}
{{- else if $db.pooler.listenUrlKey }}
- name: DATABASE_LISTEN_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "externalDatabase.existingSecret (holding pooler.listenUrlKey) is required with pooler.listenUrlKey" $db.existingSecret }}
      key: {{ $db.pooler.listenUrlKey }}
{{- else if eq $db.pooler.mode "transaction" }}
{{- fail "externalDatabase.pooler.mode=transaction: a transaction pooler drops LISTEN between transactions; set externalDatabase.pooler.directHost (with host) or pooler.listenUrlKey (with a URL), or pooler.listen=false" }}
{{- end }}
{{- if $db.tls.enabled }}
- { name: DATABASE_CA_FILE, value: {{ printf "/etc/didyma/database-ca/%s" $db.tls.caKey | quote }} }
{{- end }}
{{- end -}}

{{/* The migration Job's env on top: the migration user (DDL), directly to the server, and the runtime role it grants rows to. */}}
{{- define "didyma.migrationDatabaseEnv" -}}
{{- $db := .Values.externalDatabase -}}
{{- $m := $db.migration -}}
{{- if and (not .Values.postgresql.enabled) $m.user $db.host }}
- name: DATABASE_MIGRATION_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $m.existingSecret | default $db.existingSecret }}
      key: {{ $m.passwordKey }}
- name: DATABASE_MIGRATION_URL
  value: {{ printf "postgres://%s@%s:%v/%s" $m.user ($db.pooler.directHost | default $db.host) (ternary $db.pooler.directPort $db.port (not (empty $db.pooler.directHost))) $db.database | quote }}
- { name: DATABASE_RUNTIME_ROLE, value: {{ $db.user | quote }} }
{{- else if and (not .Values.postgresql.enabled) $m.urlKey }}
- name: DATABASE_MIGRATION_URL
  valueFrom:
    secretKeyRef:
      name: {{ required "externalDatabase.migration.existingSecret or externalDatabase.existingSecret (holding migration.urlKey) is required with migration.urlKey" ($m.existingSecret | default $db.existingSecret) }}
      key: {{ $m.urlKey }}
{{- with $m.runtimeRole }}
- { name: DATABASE_RUNTIME_ROLE, value: {{ . | quote }} }
{{- end }}
{{- end }}
{{- end -}}

{{/* The broker's env of every process (not the bundled RabbitMQ's). */}}
{{- define "didyma.externalRabbitmqEnv" -}}
{{- $mq := .Values.externalRabbitmq -}}
{{- if $mq.host }}
- name: DIDYMA_AMQP_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ required "externalRabbitmq.existingSecret (the Secret of the user's password) is required with externalRabbitmq.host" $mq.existingSecret }}
      key: {{ $mq.passwordKey }}
- name: DIDYMA_AMQP_URL
  value: {{ printf "%s://%s@%s%s%s" (ternary "amqps" "amqp" $mq.tls.enabled) (required "externalRabbitmq.user is required with externalRabbitmq.host" $mq.user) $mq.host (ternary "" (printf ":%v" $mq.port) (empty $mq.port)) (ternary "" (printf "/%s" (urlquery $mq.vhost)) (empty $mq.vhost)) | quote }}
{{- else }}
- name: DIDYMA_AMQP_URL
  valueFrom:
    secretKeyRef:
      name: {{ $mq.existingSecret | default (include "didyma.secretName" .) }}
      key: {{ $mq.existingSecretKey }}
{{- end }}
{{- if $mq.tls.enabled }}
- { name: DIDYMA_AMQP_CA_FILE, value: {{ printf "/etc/didyma/amqp-ca/%s" $mq.tls.caKey | quote }} }
{{- end }}
{{- end -}}

{{/* DATABASE_POOL_MAX of one component (dict root, component), over the ConfigMap's. */}}
{{- define "didyma.poolEnv" -}}
{{- with index .root.Values.externalDatabase.poolMaxPerComponent .component }}
- { name: DATABASE_POOL_MAX, value: {{ . | quote }} }
{{- end }}
{{- end -}}

{{/* A CA volume (dict name, tls): from a Secret or a ConfigMap, only its key. */}}
{{- define "didyma.caVolume" -}}
{{- $tls := .tls -}}
{{- if $tls.enabled }}
- name: {{ .name }}
  {{- if $tls.caSecret }}
  secret:
    secretName: {{ $tls.caSecret }}
    items: [{ key: {{ $tls.caKey }}, path: {{ $tls.caKey }} }]
  {{- else }}
  configMap:
    name: {{ required (printf "%s: tls.caSecret or tls.caConfigMap is required with tls.enabled" .of) $tls.caConfigMap }}
    items: [{ key: {{ $tls.caKey }}, path: {{ $tls.caKey }} }]
  {{- end }}
{{- end }}
{{- end -}}

{{/* The CA volumes of the database and the broker, for a pod's volumes. */}}
{{- define "didyma.caVolumes" -}}
{{- if not .Values.postgresql.enabled }}{{ include "didyma.caVolume" (dict "name" "database-ca" "tls" .Values.externalDatabase.tls "of" "externalDatabase") }}{{ end }}
{{- if not .Values.rabbitmq.enabled }}{{ include "didyma.caVolume" (dict "name" "amqp-ca" "tls" .Values.externalRabbitmq.tls "of" "externalRabbitmq") }}{{ end }}
{{- end -}}

{{/* Their mounts, for a container's volumeMounts. */}}
{{- define "didyma.caVolumeMounts" -}}
{{- if and (not .Values.postgresql.enabled) .Values.externalDatabase.tls.enabled }}
- { name: database-ca, mountPath: /etc/didyma/database-ca, readOnly: true }
{{- end }}
{{- if and (not .Values.rabbitmq.enabled) .Values.externalRabbitmq.tls.enabled }}
- { name: amqp-ca, mountPath: /etc/didyma/amqp-ca, readOnly: true }
{{- end }}
{{- end -}}
