import { GROUP, PLURAL, workerClusterCrd } from './crd';
import { POLICY_PLURAL, rolloutPolicyCrd } from './policy-crd';

/**
 * The manifests that run `worker-stacks reconcile --watch --store kubernetes` in a management cluster, generated
 * from code so that deploy/*.yaml cannot drift from the CRD, the ops server's paths or the CLI's flags (a test
 * compares the committed files with this output). Least privilege: the daemon reads WorkerClusters, writes only
 * their status subresource and events, reads WorkerRolloutPolicies (list + watch, nothing else), and holds a Lease in
 * its own namespace; it cannot write a spec or delete.
 */

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
}

export const NAME = 'worker-stacks';
export const DEFAULT_NAMESPACE = 'worker-stacks';
export const DEFAULT_OPS_PORT = 8080;
/** The Lease the replicas elect a leader on, in the daemon's namespace (lib/kube/leader-election.ts's default name). */
export const LEASE_NAME = 'worker-stacks';

const LABELS = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': NAME };
const SELECTOR = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/component': 'reconciler' };

/** ClusterRole of the daemon: what the Kubernetes store, events and deletion need, and nothing else. */
export function clusterRole(): Json {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: NAME, labels: LABELS },
    rules: [
      // list + watch (the store's cache), get (a reconcile re-reads one object). No create, update or delete: the
      // spec is the user's. patch: the finalizer of deletionPolicy Delete is a JSON patch of metadata.finalizers,
      // which RBAC cannot tell from a spec patch; daemonAdmissionPolicy() refuses every other change.
      { apiGroups: [GROUP], resources: [PLURAL], verbs: ['get', 'list', 'watch', 'patch'] },
      // Status only through the subresource, with resourceVersion.
      { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ['update', 'patch'] },
      // deletionPolicy: Delete keeps the object until its stack is gone.
      { apiGroups: [GROUP], resources: [`${PLURAL}/finalizers`], verbs: ['update'] },
      // The rollout policies: the daemon's list + watch cache is all it reads (an event names the policy by the uid
      // the list gave). `rollout pause|resume` patches spec.paused as the user who runs it, never as the daemon.
      { apiGroups: [GROUP], resources: [POLICY_PLURAL], verbs: ['list', 'watch'] },
      // Events on the objects (kubectl describe wc, kubectl describe wrp).
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  };
}

/** Role in the daemon's namespace: the leader-election Lease. `create` cannot be limited to a name (RBAC), get/update can. */
export function leaseRole(namespace: string): Json {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: `${NAME}-leader-election`, namespace, labels: LABELS },
    rules: [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] },
    ],
  };
}

/**
 * What RBAC cannot say: the daemon may patch an object only to add or remove its finalizer. A ValidatingAdmissionPolicy
 * (admissionregistration.k8s.io/v1, Kubernetes 1.30+) refuses any other change it makes to the object itself: its
 * spec, labels and annotations must stay as they were. Status writes go to the subresource, which this does not match.
 */
export function daemonAdmissionPolicy(namespace: string): Json[] {
  const name = `${NAME}-daemon-writes-finalizers-only`;
  const same = (field: string) => `(has(object.${field}) ? object.${field} : {}) == (has(oldObject.${field}) ? oldObject.${field} : {})`;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels: LABELS },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], resources: [PLURAL], operations: ['UPDATE'] }] },
        matchConditions: [{ name: 'the-daemon', expression: `request.userInfo.username == 'system:serviceaccount:${namespace}:${NAME}'` }],
        validations: [
          { expression: same('spec'), message: 'the worker-stacks daemon never writes a spec (it patches only its finalizer)', reason: 'Forbidden' },
          { expression: same('metadata.labels'), message: 'the worker-stacks daemon never writes labels (it patches only its finalizer)', reason: 'Forbidden' },
          { expression: same('metadata.annotations'), message: 'the worker-stacks daemon never writes annotations (it patches only its finalizer)', reason: 'Forbidden' },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name, labels: LABELS },
      spec: { policyName: name, validationActions: ['Deny'] },
    },
  ];
}

/**
 * Aggregated into the built-in view/edit roles, so people see and edit WorkerClusters and WorkerRolloutPolicies (pause
 * and resume are edits) with the roles they have in a namespace.
 */
function userRoles(): Json[] {
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${NAME}-view`, labels: { ...LABELS, 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [{ apiGroups: [GROUP], resources: [PLURAL, `${PLURAL}/status`, POLICY_PLURAL], verbs: ['get', 'list', 'watch'] }],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${NAME}-edit`, labels: { ...LABELS, 'rbac.authorization.k8s.io/aggregate-to-edit': 'true', 'rbac.authorization.k8s.io/aggregate-to-admin': 'true' } },
      rules: [{ apiGroups: [GROUP], resources: [PLURAL, POLICY_PLURAL], verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'] }],
    },
  ];
}

function binding(kind: 'ClusterRoleBinding' | 'RoleBinding', role: string, namespace: string): Json {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name: role, ...(kind === 'RoleBinding' ? { namespace } : {}), labels: LABELS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: NAME, namespace }],
  };
}

function deployment(o: Required<Omit<ManifestOptions, 'roleArn'>>): Json {
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({ httpGet: { path, port: 'ops' }, periodSeconds, timeoutSeconds: 2, failureThreshold });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: o.namespace, labels: LABELS },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: SELECTOR },
      // A new replica is up before an old one goes; the Lease moves to whichever leads next.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: {
          labels: { ...LABELS, ...SELECTOR },
          annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(o.opsPort), 'prometheus.io/path': '/metrics' },
        },
        spec: {
          serviceAccountName: NAME,
          // Longer than reconcile's --grace-seconds: work in hand writes its status before the kill.
          terminationGracePeriodSeconds: 40,
          securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532, seccompProfile: { type: 'RuntimeDefault' } },
          affinity: {
            podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: SELECTOR } } }] },
          },
          containers: [
            {
              name: 'reconciler',
              image: o.image,
              imagePullPolicy: 'IfNotPresent',
              args: ['reconcile', '--watch', '--store', 'kubernetes', '--all-namespaces', '--port', String(o.opsPort), '--bind', '0.0.0.0', '--grace-seconds', '20'],
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
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, privileged: false, capabilities: { drop: ['ALL'] } },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
        },
      },
    },
  };
}

/** Every object, in the order `kubectl apply -f` must create them, grouped by the deploy/ file that holds them. */
export function deployManifests(opts: ManifestOptions): Record<string, Json[]> {
  const o = {
    namespace: opts.namespace ?? DEFAULT_NAMESPACE,
    image: opts.image ?? `worker-stacks:${opts.version}`,
    replicas: opts.replicas ?? 2,
    opsPort: opts.opsPort ?? DEFAULT_OPS_PORT,
    version: opts.version,
  };
  const serviceAccount: Json = {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: NAME, namespace: o.namespace, labels: LABELS, ...(opts.roleArn ? { annotations: { 'eks.amazonaws.com/role-arn': opts.roleArn } } : {}) },
  };
  return {
    'crd.yaml': [workerClusterCrd(), rolloutPolicyCrd()],
    'namespace.yaml': [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace, labels: { ...LABELS, 'pod-security.kubernetes.io/enforce': 'restricted' } } }],
    'rbac.yaml': [
      serviceAccount,
      clusterRole(),
      binding('ClusterRoleBinding', NAME, o.namespace),
      ...daemonAdmissionPolicy(o.namespace),
      leaseRole(o.namespace),
      binding('RoleBinding', `${NAME}-leader-election`, o.namespace),
      ...userRoles(),
    ],
    'deployment.yaml': [
      deployment(o),
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: NAME, namespace: o.namespace, labels: LABELS },
        spec: { maxUnavailable: 1, selector: { matchLabels: SELECTOR } },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: `${NAME}-metrics`, namespace: o.namespace, labels: LABELS },
        spec: { selector: SELECTOR, ports: [{ name: 'metrics', port: o.opsPort, targetPort: 'ops', protocol: 'TCP' }] },
      },
    ],
  };
}
