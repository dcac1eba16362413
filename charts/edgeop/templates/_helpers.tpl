{{/* The operator's name: <release>-appservice (edgeop-appservice for release "edgeop", as in deploy/). */}}
{{- define "edgeop.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (default "appservice" .Values.nameOverride) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The node agent's name: <release>-agent. */}}
{{- define "edgeop.agentName" -}}
{{- printf "%s-agent" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "edgeop.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* Labels of every object; `name` is the component's app.kubernetes.io/name. */}}
{{- define "edgeop.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/part-of: edgeop
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{/* The pod labels a selector matches (immutable once installed). */}}
{{- define "edgeop.selectorLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/*
The pod's terminationGracePeriodSeconds: the drain (shutdownGracePeriod) plus the Lease
release's bound (renewDeadline) plus 5 s to stop, as deploy/ computes it
(src/operators/appservice/manifests.ts). Durations in whole seconds: "30s", "1m", "1m30s".
*/}}
{{- define "edgeop.seconds" -}}
{{- $d := . | default "0s" -}}
{{- $total := 0.0 -}}
{{- range $m := regexFindAll "[0-9.]+(ms|s|m|h)" $d -1 -}}
{{- $n := float64 (regexFind "^[0-9.]+" $m) -}}
{{- if hasSuffix "ms" $m }}{{ $total = addf $total (divf $n 1000) }}
{{- else if hasSuffix "s" $m }}{{ $total = addf $total $n }}
{{- else if hasSuffix "m" $m }}{{ $total = addf $total (mulf $n 60) }}
{{- else if hasSuffix "h" $m }}{{ $total = addf $total (mulf $n 3600) }}{{ end -}}
{{- end -}}
{{- $total -}}
{{- end -}}

{{/* How Prometheus scrapes --metrics-secure endpoints: HTTPS with its service account's token (bind it to the metrics-reader ClusterRole); the serving certificate is self-signed unless one is mounted. Nothing for plain HTTP. */}}
{{- define "edgeop.scrapeSecurity" -}}
{{- if .Values.metrics.secure -}}
scheme: https
bearerTokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token
tlsConfig:
  insecureSkipVerify: true
{{- end -}}
{{- end -}}

{{/*
The operator's ServiceAccount: the chart's (named serviceAccount.name, default the full name) when
serviceAccount.create, else serviceAccount.name (default "default"), one that exists already.
*/}}
{{- define "edgeop.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "edgeop.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}
