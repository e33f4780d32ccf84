import { workerClusterCrd } from './crd';
import { LabelSelector } from './label-selector';
import {
  binding,
  clusterRole,
  daemonAdmissionPolicy,
  daemonLeasePolicy,
  namespaceAccountsPolicy,
  DEFAULT_NAMESPACE,
  DEFAULT_OPS_PORT,
  LABELS,
  leaseRole,
  NAME,
  SELECTOR,
  SHARD_LABEL,
  ShardSpec,
  userRoles,
} from './manifests-rbac';
import { rolloutPolicyCrd } from './policy-crd';
import { imageChannelCrd } from './channel-crd';
import { checkShards, imageReference } from './manifest-checks';

export * from './manifests-rbac';

/**
 * The manifests that run `worker-stacks reconcile --watch --store kubernetes` in a management cluster, generated
 * from code so that deploy/*.yaml cannot drift from the CRD, the ops server's paths or the CLI's flags (a test
 * compares the committed files with this output). Least privilege: the daemon reads WorkerClusters, writes only
 * their status subresource and events, reads WorkerRolloutPolicies (list + watch, nothing else), and holds only its
 * shards' Leases in its own namespace; it cannot write a spec or delete (lib/platform/kube/manifests-rbac.ts). One Deployment
 * for the whole fleet, or one per shard; the Helm chart renders the same objects from here.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest is free-form Kubernetes data, written here whole and only serialized (tests read into it)
type Json = Record<string, any>;

export interface ManifestOptions {
  /** Namespace of the daemon, its ServiceAccount and its Lease. @default worker-stacks */
  readonly namespace?: string;
  /** Container image (build it from the repository's Dockerfile and push it to your registry). @default worker-stacks:<package version> */
  readonly image?: string;
  /** IAM role for IRSA (`eks.amazonaws.com/role-arn` on the ServiceAccount). @default none: EKS Pod Identity or node credentials */
  readonly roleArn?: string;
  /** Daemon replicas; one leads, the others wait on the Lease. @default 2 */
  readonly replicas?: number;
  /** Port of /healthz, /readyz and /metrics (`reconcile --port`). @default 8080 */
  readonly opsPort?: number;
  /** The package version, for the default image tag. */
  readonly version: string;
  /**
   * The image's digest (`sha256:<64 hex>`): the container runs `<image>@<digest>`, exactly the bytes that were
   * pushed, whatever later happens to the tag. @default none: the tag alone
   */
  readonly imageDigest?: string;
  /**
   * Shards: one Deployment (and PodDisruptionBudget) per shard, `worker-stacks-<name>`, each running
   * `--shard <name> -l <selector>` with its own Lease; RBAC allows exactly those Leases. The selectors must be
   * disjoint (refused otherwise). @default none: one Deployment for the whole fleet, Lease worker-stacks
   */
  readonly shards?: readonly ShardSpec[];
  /**
   * Aggregate worker-stacks-view/-edit into the built-in view/edit/admin ClusterRoles, so that everyone who may edit
   * a namespace may edit its WorkerClusters (and so choose accounts and secrets). @default false: bind them explicitly
   */
  readonly aggregateToDefaultRoles?: boolean;
  /**
   * Refuse WorkerClusters in a namespace that has no `worker-stacks.io/accounts` annotation (see
   * namespaceAccountsPolicy). @default false: an unannotated namespace may name any account
   */
  readonly requireAccountBinding?: boolean;
  /** A NetworkPolicy for the daemon's pods (ingress: the ops port; egress: DNS and HTTPS). @default true */
  readonly networkPolicy?: boolean;
}

interface Resolved {
  readonly namespace: string;
  readonly image: string;
  readonly replicas: number;
  readonly opsPort: number;
}

/** The Deployment of the whole fleet, or of one shard (`worker-stacks-<shard>`, its own pods, `--shard` and `-l`). */
function deployment(o: Resolved, shard?: ShardSpec): Json {
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: 'ops' },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold,
  });
  const selector = shard ? { ...SELECTOR, [SHARD_LABEL]: shard.name } : SELECTOR;
  const shardArgs = shard ? ['--shard', shard.name, '--selector', LabelSelector.parse(shard.selector).toString()] : [];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: shard ? `${NAME}-${shard.name}` : NAME,
      namespace: o.namespace,
      labels: shard ? { ...LABELS, [SHARD_LABEL]: shard.name } : LABELS,
    },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: selector },
      // A new replica is up before an old one goes; the Lease moves to whichever leads next.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: {
          labels: { ...LABELS, ...selector },
          annotations: {
            'prometheus.io/scrape': 'true',
            'prometheus.io/port': String(o.opsPort),
            'prometheus.io/path': '/metrics',
          },
        },
        spec: {
          serviceAccountName: NAME,
          // Longer than reconcile's --grace-seconds: work in hand writes its status before the kill.
          terminationGracePeriodSeconds: 40,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            runAsGroup: 65532,
            fsGroup: 65532,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 100,
                  podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: selector } },
                },
              ],
            },
          },
          containers: [
            {
              name: 'reconciler',
              image: o.image,
              imagePullPolicy: 'IfNotPresent',
              args: [
                'reconcile',
                '--watch',
                '--store',
                'kubernetes',
                '--all-namespaces',
                '--port',
                String(o.opsPort),
                '--bind',
                '0.0.0.0',
                '--grace-seconds',
                '20',
                ...shardArgs,
              ],
              env: [
                // The Lease's holder identity and namespace (downward API).
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                // Synthesis writes its cloud assembly to the temp directory: the one writable place.
                { name: 'TMPDIR', value: '/tmp' },
                { name: 'HOME', value: '/tmp' },
                { name: 'AWS_STS_REGIONAL_ENDPOINTS', value: 'regional' },
              ],
              ports: [{ name: 'ops', containerPort: o.opsPort, protocol: 'TCP' }],
              // /healthz: the process serves. /readyz: a pass completed and it is not stopping; it does not depend on
              // leadership, so the waiting replica is Ready too.
              livenessProbe: probe('/healthz', 10, 3),
              readinessProbe: probe('/readyz', 5, 3),
              startupProbe: probe('/healthz', 2, 60),
              // Synthesis (CDK) is the peak: a worker thread per --synth-threads needs a few hundred MiB.
              resources: { requests: { cpu: '250m', memory: '768Mi' }, limits: { memory: '2Gi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                privileged: false,
                capabilities: { drop: ['ALL'] },
              },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
        },
      },
    },
  };
}

/**
 * The daemon's pods talk to the API server, AWS (HTTPS) and DNS, and are reached on the ops port only (probes,
 * Prometheus). The API server is reached through the `kubernetes` Service (443), which most network plugins see
 * after its translation to the endpoint's port: 443 (EKS) or 6443 (kubeadm).
 */
function networkPolicy(o: Resolved): Json {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: NAME, namespace: o.namespace, labels: LABELS },
    spec: {
      podSelector: { matchLabels: SELECTOR },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ protocol: 'TCP', port: o.opsPort }] }],
      egress: [
        {
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        {
          ports: [
            { protocol: 'TCP', port: 443 },
            { protocol: 'TCP', port: 6443 },
          ],
        },
      ],
    },
  };
}

/** Every object, in the order `kubectl apply -f` must create them, grouped by the deploy/ file that holds them. */
export function deployManifests(opts: ManifestOptions): Record<string, Json[]> {
  const shards = opts.shards ?? [];
  checkShards(shards);
  const o: Resolved = {
    namespace: opts.namespace ?? DEFAULT_NAMESPACE,
    image: imageReference(opts.image ?? `worker-stacks:${opts.version}`, opts.imageDigest),
    replicas: opts.replicas ?? 2,
    opsPort: opts.opsPort ?? DEFAULT_OPS_PORT,
  };
  const serviceAccount: Json = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: {
      name: NAME,
      namespace: o.namespace,
      labels: LABELS,
      ...(opts.roleArn ? { annotations: { 'eks.amazonaws.com/role-arn': opts.roleArn } } : {}),
    },
  };
  const pdb = (shard?: ShardSpec): Json => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: shard ? `${NAME}-${shard.name}` : NAME, namespace: o.namespace, labels: LABELS },
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: shard ? { ...SELECTOR, [SHARD_LABEL]: shard.name } : SELECTOR },
    },
  });
  const units: (ShardSpec | undefined)[] = shards.length ? [...shards] : [undefined];
  return {
    'crd.yaml': [workerClusterCrd(), rolloutPolicyCrd(), imageChannelCrd()],
    'namespace.yaml': [
      {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: o.namespace, labels: { ...LABELS, 'pod-security.kubernetes.io/enforce': 'restricted' } },
      },
    ],
    'rbac.yaml': [
      serviceAccount,
      clusterRole(),
      binding('ClusterRoleBinding', NAME, o.namespace),
      ...daemonAdmissionPolicy(o.namespace),
      leaseRole(o.namespace, shards),
      binding('RoleBinding', `${NAME}-leader-election`, o.namespace),
      ...daemonLeasePolicy(o.namespace, shards),
      ...namespaceAccountsPolicy(opts.requireAccountBinding ?? false),
      ...userRoles(opts.aggregateToDefaultRoles ?? false),
    ],
    'deployment.yaml': [
      ...units.flatMap((shard) => [deployment(o, shard), pdb(shard)]),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `${NAME}-metrics`, namespace: o.namespace, labels: LABELS },
        spec: { selector: SELECTOR, ports: [{ name: 'metrics', port: o.opsPort, targetPort: 'ops', protocol: 'TCP' }] },
      },
      ...(opts.networkPolicy === false ? [] : [networkPolicy(o)]),
    ],
  };
}
