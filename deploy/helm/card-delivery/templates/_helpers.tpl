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
