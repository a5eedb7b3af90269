{{- define "legate.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "legate.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "legate.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "legate.sharedStore" -}}
{{- if or .Values.store .Values.storeSecret.name -}}true{{- end -}}
{{- end -}}

{{- /* config.yaml: the values' config, with metrics.listen on the metrics port. */ -}}
{{- define "legate.config" -}}
{{- $config := deepCopy (default dict .Values.config) -}}
{{- if .Values.metrics.enabled -}}
{{- if hasKey $config "metrics" -}}
{{- fail "leave config.metrics unset: the chart sets metrics.listen from metrics.port, which the pod's port, the Service and the scrape annotations follow" -}}
{{- end -}}
{{- $_ := set $config "metrics" (dict "listen" (printf "0.0.0.0:%d" (int .Values.metrics.port))) -}}
{{- else if .Values.metrics.serviceMonitor.enabled -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled: the ServiceMonitor scrapes the metrics port" -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}
