/**
 * The Bottlerocket settings an `eks-bottlerocket` user data may hold, and the TOML type of each. Source: the Bottlerocket
 * settings reference, https://bottlerocket.dev/en/os/latest/api/settings/ (`settings.kubernetes.*` at
 * .../api/settings/kubernetes/, `settings.cloudformation.*` at .../api/settings/cloudformation/), the aws-k8s-*
 * variants, as of Bottlerocket 1.5x. Key names and types are the reference's; the checks are this project's
 * (bottlerocket-rules.ts). A key a newer Bottlerocket takes and this table lacks is refused as unknown: add it here, with
 * its type from the same reference.
 */

/** A setting's TOML type. `table` is a table whose own keys this table does not check (a map of identifiers). */
export type BottlerocketKind =
  | 'string'
  /** An https:// URL (api-server). */
  | 'url'
  /** Base64 of the bytes (cluster-certificate: the PEM). */
  | 'base64'
  /** An IPv4 or IPv6 address, or a list of them (cluster-dns-ip). */
  | 'ip-or-ips'
  | 'ip'
  /** A TOML integer, at least 0. */
  | 'unsigned'
  /** A TOML integer. */
  | 'integer'
  /** An integer 0-100. */
  | 'percent'
  | 'boolean'
  /** A Kubernetes duration in Go syntax (`30s`, `1m30s`). */
  | 'duration'
  /** A Kubernetes quantity (`100Mi`, `500m`). */
  | 'quantity'
  | 'strings'
  /** A table of label keys to label values (node-labels). */
  | 'labels'
  /** A table of taint keys to a list of `value:Effect` strings (or one such string, which Bottlerocket also reads). */
  | 'taints'
  /** A table of resource names (cpu, memory, ephemeral-storage) to quantities (kube-reserved, system-reserved). */
  | 'reserved'
  /** A table of eviction signals to thresholds, a quantity or a percentage (eviction-hard, eviction-soft). */
  | 'eviction'
  /** A table of eviction signals to durations (eviction-soft-grace-period). */
  | 'eviction-durations'
  | 'table';

/** `settings.kubernetes.*` of the reference, by key. */
export const KUBERNETES_SETTINGS: Readonly<Record<string, BottlerocketKind>> = {
  'allowed-unsafe-sysctls': 'strings',
  'api-server': 'url',
  'authentication-mode': 'string',
  'bootstrap-token': 'string',
  'cloud-provider': 'string',
  'cluster-certificate': 'base64',
  'cluster-dns-ip': 'ip-or-ips',
  'cluster-domain': 'string',
  'cluster-name': 'string',
  'container-log-max-files': 'integer',
  'container-log-max-size': 'quantity',
  'container-log-max-workers': 'integer',
  'container-log-monitor-interval': 'duration',
  'cpu-cfs-quota-enforced': 'boolean',
  'cpu-manager-policy': 'string',
  'cpu-manager-policy-options': 'strings',
  'cpu-manager-reconcile-period': 'duration',
  'credential-providers': 'table',
  'device-ownership-from-security-context': 'boolean',
  'event-burst': 'integer',
  'event-qps': 'integer',
  'eviction-hard': 'eviction',
  'eviction-max-pod-grace-period': 'unsigned',
  'eviction-soft': 'eviction',
  'eviction-soft-grace-period': 'eviction-durations',
  'hostname-override': 'string',
  'hostname-override-source': 'string',
  'ids-per-pod': 'integer',
  'image-gc-high-threshold-percent': 'percent',
  'image-gc-low-threshold-percent': 'percent',
  'image-maximum-gc-age': 'duration',
  'image-minimum-gc-age': 'duration',
  'kube-api-burst': 'integer',
  'kube-api-qps': 'integer',
  'kube-reserved': 'reserved',
  'kubelet-extra-config': 'base64',
  'log-level': 'unsigned',
  'max-parallel-image-pulls': 'integer',
  'max-pods': 'unsigned',
  'memory-manager-policy': 'string',
  'memory-manager-reserved-memory': 'table',
  'memory-swap-behavior': 'string',
  'node-ip': 'ip',
  'node-labels': 'labels',
  'node-taints': 'taints',
  'pod-infra-container-image': 'string',
  'pod-pids-limit': 'integer',
  'provider-id': 'string',
  'registry-burst': 'integer',
  'registry-qps': 'integer',
  'reserved-cpus': 'string',
  'seccomp-default': 'boolean',
  'server-certificate': 'base64',
  'server-key': 'base64',
  'server-tls-bootstrap': 'boolean',
  'shutdown-grace-period': 'duration',
  'shutdown-grace-period-for-critical-pods': 'duration',
  'single-process-oom-kill': 'boolean',
  'standalone-mode': 'boolean',
  'static-pods': 'table',
  'static-pods-enabled': 'boolean',
  'system-reserved': 'reserved',
  'topology-manager-policy': 'string',
  'topology-manager-policy-options': 'table',
  'topology-manager-scope': 'string',
};

/** What an aws-k8s-* node needs to join its EKS cluster (the reference's "Settings needed for aws-k8s-* variants"). */
export const REQUIRED_KUBERNETES_SETTINGS = ['api-server', 'cluster-certificate', 'cluster-name'] as const;

/** `settings.cloudformation.*` of the reference: both names are required when should-signal is true. */
export const CLOUDFORMATION_SETTINGS: Readonly<Record<string, BottlerocketKind>> = {
  'should-signal': 'boolean',
  'stack-name': 'string',
  'logical-resource-id': 'string',
};

/** The tables under `settings` an eks-bottlerocket config may write: the two above. Any other is refused. */
export const SETTINGS_TABLES: Readonly<Record<string, Readonly<Record<string, BottlerocketKind>>>> = {
  kubernetes: KUBERNETES_SETTINGS,
  cloudformation: CLOUDFORMATION_SETTINGS,
};

/** The resources kube-reserved and system-reserved take. */
export const RESERVED_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'] as const;

/** The kubelet's eviction signals, which eviction-hard, eviction-soft and eviction-soft-grace-period are keyed by. */
export const EVICTION_SIGNALS = [
  'memory.available',
  'nodefs.available',
  'nodefs.inodesFree',
  'imagefs.available',
  'imagefs.inodesFree',
  'pid.available',
] as const;

/** The taint effects of Kubernetes. */
export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
