{{/* Names, labels and the pieces api, worker and the migrations Job share. */}}

{{- define "card-delivery.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "card-delivery.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "card-delivery.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "card-delivery.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: (dict "root" $ "component" "api") */}}
{{- define "card-delivery.selectorLabels" -}}
app.kubernetes.io/name: {{ include "card-delivery.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "card-delivery.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "card-delivery.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "card-delivery.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret api and worker read their secret environment from. */}}
{{- define "card-delivery.secretName" -}}
{{- if .Values.secret.existingSecret -}}
{{- .Values.secret.existingSecret -}}
{{- else -}}
{{- include "card-delivery.fullname" . -}}
{{- end -}}
{{- end -}}

{{- define "card-delivery.configMapName" -}}
{{- printf "%s-config" (include "card-delivery.fullname" .) -}}
{{- end -}}

{{/* Stops rendering when neither a database URL nor an existing Secret is given. */}}
{{- define "card-delivery.requireDatabase" -}}
{{- if not (or .Values.secret.existingSecret .Values.secret.databaseUrl) -}}
{{- fail "set secret.databaseUrl (postgres://USER:PASSWORD@HOST:5432/DB) or secret.existingSecret (a Secret with the key DATABASE_URL)" -}}
{{- end -}}
{{- end -}}

{{/*
Pod-level settings every process shares: no API token (the service never calls the Kubernetes API),
the non-root security context, pull secrets.
*/}}
{{- define "card-delivery.podCommon" -}}
serviceAccountName: {{ include "card-delivery.serviceAccountName" . }}
automountServiceAccountToken: false
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The root filesystem is read-only: /tmp is the one writable place (tsx's compile cache, npm's log
and cache directory).
*/}}
{{- define "card-delivery.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 256Mi
{{- end -}}

{{- define "card-delivery.tmpMount" -}}
- name: tmp
  mountPath: /tmp
{{- end -}}

{{- define "card-delivery.runtimeEnv" -}}
- name: NPM_CONFIG_CACHE
  value: /tmp/.npm
- name: NPM_CONFIG_UPDATE_NOTIFIER
  value: 'false'
{{- end -}}

{{/* Rolls the pods when the configuration they read at start-up changes. */}}
{{- define "card-delivery.checksums" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secret.existingSecret }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/*
Stops rendering on a TLS setting that would be silently ignored or would not work: a Temporal TLS
Secret without temporalTls.enabled, and a chart-made DATABASE_URL that does not name the mounted
Postgres CA (node-postgres reads the CA only from the URL's sslrootcert).
*/}}
{{- define "card-delivery.requireTls" -}}
{{- $t := .Values.temporalTls -}}
{{- if and (not $t.enabled) (or $t.clientCertificate.secretName $t.serverCa.secretName $t.apiKey.secretName) -}}
{{- fail "temporalTls names a Secret but temporalTls.enabled is false: set temporalTls.enabled=true (or remove the Secret names)" -}}
{{- end -}}
{{- $pg := .Values.postgresTls -}}
{{- if and $pg.caSecretName (not .Values.secret.existingSecret) -}}
{{- $param := printf "sslrootcert=%s/ca.crt" (trimSuffix "/" $pg.mountPath) -}}
{{- if not (contains $param .Values.secret.databaseUrl) -}}
{{- fail (printf "postgresTls.caSecretName is set: secret.databaseUrl must name the mounted CA, e.g. ?sslmode=verify-full&%s" $param) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "card-delivery.temporalTlsFiles" -}}
{{- $t := .Values.temporalTls -}}
{{- if and $t.enabled (or $t.clientCertificate.secretName $t.serverCa.secretName) -}}true{{- end -}}
{{- end -}}

{{/*
The TLS files as volumes: (dict "root" $ "temporal" true) for api and worker, "temporal" false for
the migrations Job (Postgres only). Mode 0440: the non-root user reads them through fsGroup.
*/}}
{{- define "card-delivery.tlsVolumes" -}}
{{- $t := .root.Values.temporalTls -}}
{{- if and .temporal (include "card-delivery.temporalTlsFiles" .root) }}
- name: temporal-tls
  projected:
    defaultMode: 288
    sources:
      {{- with $t.clientCertificate.secretName }}
      - secret:
          name: {{ . }}
          items:
            - key: {{ $t.clientCertificate.certKey }}
              path: client.crt
            - key: {{ $t.clientCertificate.keyKey }}
              path: client.key
      {{- end }}
      {{- with $t.serverCa.secretName }}
      - secret:
          name: {{ . }}
          items:
            - key: {{ $t.serverCa.key }}
              path: server-ca.crt
      {{- end }}
{{- end }}
{{- with .root.Values.postgresTls.caSecretName }}
- name: postgres-tls
  secret:
    secretName: {{ . }}
    defaultMode: 288
    items:
      - key: {{ $.root.Values.postgresTls.caKey }}
        path: ca.crt
{{- end }}
{{- end -}}

{{- define "card-delivery.tlsMounts" -}}
{{- if and .temporal (include "card-delivery.temporalTlsFiles" .root) }}
- name: temporal-tls
  mountPath: {{ .root.Values.temporalTls.mountPath }}
  readOnly: true
{{- end }}
{{- if .root.Values.postgresTls.caSecretName }}
- name: postgres-tls
  mountPath: {{ .root.Values.postgresTls.mountPath }}
  readOnly: true
{{- end }}
{{- end -}}

{{/* TEMPORAL_API_KEY from the operator's Secret (env wins over envFrom). */}}
{{- define "card-delivery.temporalApiKeyEnv" -}}
{{- $t := .Values.temporalTls -}}
{{- if and $t.enabled $t.apiKey.secretName }}
- name: TEMPORAL_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ $t.apiKey.secretName }}
      key: {{ $t.apiKey.key }}
{{- end }}
{{- end -}}
