{{/* Names are fixed: the admission policy and RBAC name the ServiceAccount system:serviceaccount:<ns>:worker-stacks. */}}
{{- define "ws.name" -}}worker-stacks{{- end -}}

{{- define "ws.labels" -}}
app.kubernetes.io/name: worker-stacks
app.kubernetes.io/part-of: worker-stacks
{{- end -}}

{{- define "ws.selector" -}}
app.kubernetes.io/name: worker-stacks
app.kubernetes.io/component: reconciler
{{- end -}}

{{/* The namespace of the Lease(s): the daemon's unless leaderElection.namespace says otherwise. */}}
{{- define "ws.leaseNamespace" -}}
{{- .Values.reconciler.leaderElection.namespace | default .Values.namespace.name -}}
{{- end -}}

{{/* repository:tag, or repository:tag@digest (the digest decides what runs; the tag stays readable). */}}
{{- define "ws.image" -}}
{{- $i := .Values.image -}}
{{- if and $i.digest (not (regexMatch "^sha256:[0-9a-f]{64}$" $i.digest)) -}}
{{- fail (printf "image.digest: %q is not a digest (sha256:<64 lowercase hex>)" $i.digest) -}}
{{- end -}}
{{- if contains "@" $i.repository -}}
{{- fail (printf "image.repository: %q names a digest; give it in image.digest" $i.repository) -}}
{{- end -}}
{{ $i.repository }}:{{ $i.tag | default .Chart.AppVersion }}{{ with $i.digest }}@{{ . }}{{ end }}
{{- end -}}

{{/*
The Lease names: worker-stacks-<shard> per shard (the daemon names a shard's Lease so from --shard), or the one Lease
(leaderElection.id, default worker-stacks).
*/}}
{{- define "ws.leaseNames" -}}
{{- if .Values.shards -}}
{{- if .Values.reconciler.leaderElection.id -}}
{{- fail "reconciler.leaderElection.id: with shards each shard's Lease is worker-stacks-<shard name>; leave id unset" -}}
{{- end -}}
{{- range .Values.shards }}
- {{ printf "worker-stacks-%s" .name }}
{{- end -}}
{{- else }}
- {{ .Values.reconciler.leaderElection.id | default "worker-stacks" }}
{{- end -}}
{{- end -}}

{{/*
The container's arguments: the flags `worker-stacks manifests` passes first, in its order, then every other flag
whose value is set. Context: dict "root" $ "shard" <shard or nil>.
*/}}
{{- define "ws.args" -}}
{{- $r := .root.Values.reconciler -}}
{{- $le := $r.leaderElection -}}
- reconcile
- --watch
- --store
- kubernetes
{{- if $r.watchNamespace }}
- --namespace
- {{ $r.watchNamespace | quote }}
{{- else }}
- --all-namespaces
{{- end }}
- --port
- {{ $r.port | quote }}
- --bind
- {{ $r.bind | quote }}
- --grace-seconds
- {{ $r.graceSeconds | quote }}
{{- if .shard }}
- --shard
- {{ .shard.name | quote }}
{{- end }}
{{- $selectors := list -}}
{{- if .shard }}{{ $selectors = append $selectors .shard.selector }}{{ end -}}
{{- if $r.selector }}{{ $selectors = append $selectors $r.selector }}{{ end -}}
{{- if $selectors }}
- --selector
- {{ join "," $selectors | quote }}
{{- end }}
{{- with $r.clusters }}
- --cluster
{{- range . }}
- {{ . | quote }}
{{- end }}
{{- end }}
{{- range $flag, $key := dict "--concurrency" "concurrency" "--workers" "workers" "--resync-minutes" "resyncMinutes" "--log-level" "logLevel" "--synth-threads" "synthThreads" "--poll-seconds" "pollSeconds" "--max-update-attempts" "maxUpdateAttempts" "--cfn-read-qps" "cfnReadQps" "--cfn-write-qps" "cfnWriteQps" "--drift" "drift" "--role-name" "roleName" "--external-id" "externalId" "--clusters" "clustersDir" "--templates" "templatesDir" "--shard-check-seconds" "shardCheckSeconds" }}
{{- $v := index $r $key -}}
{{- if not (kindIs "invalid" $v) }}
- {{ $flag }}
- {{ $v | toString | quote }}
{{- end }}
{{- end }}
{{- if not $r.nag }}
- --no-nag
{{- end }}
{{- if $r.dryRun }}
- --dry-run
{{- end }}
{{- if $r.s3ForcePathStyle }}
- --s3-force-path-style
{{- end }}
{{- if not $r.assumeRole }}
- --no-assume-role
{{- end }}
{{- if not $le.enabled }}
- --no-leader-elect
{{- else }}
{{- /* Without --shard the daemon names its Lease from the namespace and selector it watches: the chart names it,
so that it is the one the Role allows. */ -}}
{{- if and (not .shard) (or $le.id $r.watchNamespace $r.selector) }}
- --leader-election-id
- {{ $le.id | default "worker-stacks" | quote }}
{{- end }}
{{- with $le.namespace }}
- --leader-election-namespace
- {{ . | quote }}
{{- end }}
{{- range $flag, $key := dict "--lease-duration-seconds" "leaseDurationSeconds" "--renew-deadline-seconds" "renewDeadlineSeconds" "--retry-period-seconds" "retryPeriodSeconds" }}
{{- $v := index $le $key -}}
{{- if not (kindIs "invalid" $v) }}
- {{ $flag }}
- {{ $v | toString | quote }}
{{- end }}
{{- end }}
{{- end }}
{{- range $r.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{- /*
A label selector as the daemon reads -l (lib/platform/kube/label-selector.ts): its terms as requirements {key, op, values}
(k=v is k in (v), k!=v is k notin (v); exists and ! have no values), in JSON. Context: dict "selector" <text> "at"
<the value's name, for the message>. A term it cannot read fails the render, as the daemon would fail at start.
*/ -}}
{{- define "ws.selectorRequirements" -}}
{{- $reqs := list -}}
{{- $at := .at -}}
{{- range $t := regexFindAll "[^,()]+(\\([^()]*\\))?" .selector -1 -}}
{{- $t = trim $t -}}
{{- $set := "^(\\S+)\\s+(in|notin)\\s*\\(([^()]*)\\)$" -}}
{{- $eq := "^([^!=\\s]+)\\s*(==|=|!=)\\s*([^=!\\s]*)$" -}}
{{- if regexMatch $set $t -}}
{{- $values := list -}}
{{- range splitList "," (regexReplaceAll $set $t "${3}") }}{{ $values = append $values (trim .) }}{{ end -}}
{{- $reqs = append $reqs (dict "key" (regexReplaceAll $set $t "${1}") "op" (regexReplaceAll $set $t "${2}") "values" $values) -}}
{{- else if regexMatch $eq $t -}}
{{- $reqs = append $reqs (dict "key" (regexReplaceAll $eq $t "${1}") "op" (eq (regexReplaceAll $eq $t "${2}") "!=" | ternary "notin" "in") "values" (list (regexReplaceAll $eq $t "${3}"))) -}}
{{- else if hasPrefix "!" $t -}}
{{- $reqs = append $reqs (dict "key" (trimPrefix "!" $t | trim) "op" "!" "values" list) -}}
{{- else if regexMatch "^\\S+$" $t -}}
{{- $reqs = append $reqs (dict "key" $t "op" "exists" "values" list) -}}
{{- else -}}
{{- fail (printf "%s: %q is not a label selector term (key=value, key!=value, key in (a,b), key notin (a,b), key, !key)" $at $t) -}}
{{- end -}}
{{- end -}}
{{- range $reqs -}}
{{- if not (regexMatch "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$" .key) -}}
{{- fail (printf "%s: %q is not a label key ([prefix/]name, name of at most 63 letters, digits, -, _, .)" $at .key) -}}
{{- end -}}
{{- end -}}
{{- toJson $reqs -}}
{{- end -}}

{{- /*
"true" when one object could match every requirement of the list (two selectors' requirements together), as
LabelSelector.overlaps decides it: per key, unless one says absent and another needs the key, or every value the
`in`s allow (their intersection) is excluded by a `notin`. Context: the list of requirements.
*/ -}}
{{- define "ws.requirementsSatisfiable" -}}
{{- $byKey := dict -}}
{{- range . }}{{ $_ := set $byKey .key (append (hasKey $byKey .key | ternary (index $byKey .key) list) .) }}{{ end -}}
{{- $disjoint := false -}}
{{- range $key, $reqs := $byKey -}}
{{- $absent := false }}{{ $present := false }}{{ $ins := list }}{{ $excluded := list -}}
{{- range $reqs -}}
{{- if eq .op "!" }}{{ $absent = true }}{{ end -}}
{{- if or (eq .op "exists") (eq .op "in") }}{{ $present = true }}{{ end -}}
{{- if eq .op "in" }}{{ $ins = append $ins .values }}{{ end -}}
{{- if eq .op "notin" }}{{ $excluded = concat $excluded .values }}{{ end -}}
{{- end -}}
{{- if and $absent $present }}{{ $disjoint = true }}{{ end -}}
{{- if $ins -}}
{{- $allowed := first $ins -}}
{{- range rest $ins }}{{ $next := . }}{{ $kept := list }}{{ range $allowed }}{{ if has . $next }}{{ $kept = append $kept . }}{{ end }}{{ end }}{{ $allowed = $kept }}{{ end -}}
{{- $free := false -}}
{{- range $allowed }}{{ if not (has . $excluded) }}{{ $free = true }}{{ end }}{{ end -}}
{{- if not $free }}{{ $disjoint = true }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if not $disjoint }}true{{ end -}}
{{- end -}}

{{/*
"true" when the CRD of this name is on the cluster and another release (or none: kubectl, a GitOps tool) owns it;
empty otherwise, and always with `helm template` (lookup answers nothing offline).
*/}}
{{- define "ws.crdOwnedElsewhere" -}}
{{- $root := index . 0 -}}
{{- $live := lookup "apiextensions.k8s.io/v1" "CustomResourceDefinition" "" (index . 1) -}}
{{- if $live -}}
{{- $annotations := $live.metadata.annotations | default dict -}}
{{- if ne (get $annotations "meta.helm.sh/release-name") $root.Release.Name -}}true{{- end -}}
{{- end -}}
{{- end }}
