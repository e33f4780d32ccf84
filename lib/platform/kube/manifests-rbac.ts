import { GROUP, PLURAL } from './crd';
import { LabelSelector } from './label-selector';
import { POLICY_PLURAL } from './policy-crd';
import { CHANNEL_PLURAL } from './channel-crd';
import { STACK_FINALIZER } from './resource';
import { DEFAULT_LEASE, shardLeaseName } from './shards';

/**
 * The RBAC of `worker-stacks manifests` (lib/platform/kube/manifests.ts puts it in rbac.yaml): the daemon's ClusterRole, its
 * Lease Role, the admission policies that say what RBAC cannot, and the roles of the people who edit the objects.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a manifest is free-form Kubernetes data, written here whole and only serialized (tests read into it)
type Json = Record<string, any>;

/** One shard of `manifests --shard <name>=<selector>`. */
export interface ShardSpec {
  /** DNS label: the Deployment `worker-stacks-<name>` and the Lease `worker-stacks-<name>`. */
  readonly name: string;
  /** Label selector, as `-l` takes it. */
  readonly selector: string;
}

export const NAME = 'worker-stacks';
export const DEFAULT_NAMESPACE = 'worker-stacks';
export const DEFAULT_OPS_PORT = 8080;
/** The Lease the replicas elect a leader on, in the daemon's namespace, without shards (lib/platform/kube/shards.ts). @internal exported for the manifests tests */
export const LEASE_NAME = DEFAULT_LEASE;
/** The label of a shard's pods. */
export const SHARD_LABEL = 'worker-stacks.io/shard';

export const LABELS = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/part-of': NAME };
export const SELECTOR = { 'app.kubernetes.io/name': NAME, 'app.kubernetes.io/component': 'reconciler' };

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
      // The image channels: listed once a pass; what the daemon read of each source goes to the status subresource
      // (a JSON patch of the whole status). The spec is the user's.
      { apiGroups: [GROUP], resources: [CHANNEL_PLURAL], verbs: ['list'] },
      { apiGroups: [GROUP], resources: [`${CHANNEL_PLURAL}/status`], verbs: ['patch'] },
      // Events on the objects (kubectl describe wc, kubectl describe wrp).
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  };
}

/** The Leases of these shards (the fleet's one Lease without shards). */
export function leaseNames(shards: readonly ShardSpec[] = []): string[] {
  return shards.length
    ? shards.map((s) => shardLeaseName({ shard: s.name, selector: LabelSelector.parse(s.selector) }))
    : [LEASE_NAME];
}

/**
 * Role in the daemon's namespace: the Leases of its shards. get and update are limited to those names; `create`
 * cannot be (RBAC cannot check the name of an object that does not exist yet), so daemonLeasePolicy() refuses the
 * daemon's create of any other name. list: a starting shard reads the other shards' scopes from their Leases.
 */
export function leaseRole(namespace: string, shards: readonly ShardSpec[] = []): Json {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: `${NAME}-leader-election`, namespace, labels: LABELS },
    rules: [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'list'] },
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: leaseNames(shards),
        verbs: ['get', 'update'],
      },
    ],
  };
}

/**
 * A ValidatingAdmissionPolicy that denies (fails closed) and its binding: what every policy of the manifests is.
 * `resources` is the rule's resources of `apiGroup`; `spec` the rest of the policy (conditions, validations).
 */
function denyingPolicy(
  name: string,
  match: { readonly apiGroup: string; readonly resources: readonly string[]; readonly operations: readonly string[] },
  spec: Json,
): Json[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name, labels: LABELS },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [match.apiGroup],
              apiVersions: ['*'],
              resources: [...match.resources],
              operations: [...match.operations],
            },
          ],
        },
        ...spec,
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

/** What RBAC cannot say about Leases: the daemon creates (and updates) only its shards' Leases, by name. */
export function daemonLeasePolicy(namespace: string, shards: readonly ShardSpec[] = []): Json[] {
  const names = leaseNames(shards);
  return denyingPolicy(
    `${NAME}-daemon-leases`,
    { apiGroup: 'coordination.k8s.io', resources: ['leases'], operations: ['CREATE', 'UPDATE'] },
    {
      matchConditions: [{ name: 'the-daemon', expression: daemonUser(namespace) }],
      validations: [
        {
          expression: `object.metadata.namespace == '${namespace}' && object.metadata.name in [${names.map((n) => `'${n}'`).join(', ')}]`,
          message: `the worker-stacks daemon holds only the Leases of its shards (${names.join(', ')}) in ${namespace}`,
          reason: 'Forbidden',
        },
      ],
    },
  );
}

function daemonUser(namespace: string): string {
  return `request.userInfo.username == 'system:serviceaccount:${namespace}:${NAME}'`;
}

/**
 * What RBAC cannot say: the daemon may patch an object only to add or remove its own finalizer. A
 * ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes 1.30+) refuses any other change it makes to
 * the object itself: its spec, labels, annotations, ownerReferences and every other finalizer must stay as they were.
 * Status writes go to the subresource, which this does not match.
 */
export function daemonAdmissionPolicy(namespace: string): Json[] {
  const name = `${NAME}-daemon-writes-finalizers-only`;
  const same = (field: string, empty = '{}') =>
    `(has(object.${field}) ? object.${field} : ${empty}) == (has(oldObject.${field}) ? oldObject.${field} : ${empty})`;
  const others = (o: string) =>
    `(has(${o}.metadata.finalizers) ? ${o}.metadata.finalizers : []).filter(f, f != '${STACK_FINALIZER}')`;
  return denyingPolicy(
    name,
    { apiGroup: GROUP, resources: [PLURAL], operations: ['UPDATE'] },
    {
      matchConditions: [{ name: 'the-daemon', expression: daemonUser(namespace) }],
      validations: [
        {
          expression: same('spec'),
          message: 'the worker-stacks daemon never writes a spec (it patches only its finalizer)',
          reason: 'Forbidden',
        },
        {
          expression: same('metadata.labels'),
          message: 'the worker-stacks daemon never writes labels (it patches only its finalizer)',
          reason: 'Forbidden',
        },
        {
          expression: same('metadata.annotations'),
          message: 'the worker-stacks daemon never writes annotations (it patches only its finalizer)',
          reason: 'Forbidden',
        },
        {
          expression: `${others('object')} == ${others('oldObject')}`,
          message: `the worker-stacks daemon adds or removes only its own finalizer ${STACK_FINALIZER}`,
          reason: 'Forbidden',
        },
        {
          expression: same('metadata.ownerReferences', '[]'),
          message: 'the worker-stacks daemon never writes ownerReferences (it patches only its finalizer)',
          reason: 'Forbidden',
        },
      ],
    },
  );
}

/** The Namespace annotation that binds a namespace to the AWS accounts its WorkerClusters may name. @internal exported for the manifests tests */
export const ACCOUNTS_ANNOTATION = 'worker-stacks.io/accounts';

/**
 * Which AWS accounts a namespace's WorkerClusters may deploy into. Anyone who can edit a WorkerCluster chooses its
 * `spec.account`, and the daemon's deployer roles reach every bootstrapped account: so a namespace is bound to its
 * accounts by an annotation on the Namespace itself (`worker-stacks.io/accounts: "111111111111,222222222222"`),
 * which only those who may update Namespaces (cluster admins; not the namespace's own editors) can set. A create or
 * an update that names another account is refused by the API server. With `requireBinding`, a namespace without the
 * annotation may name no account at all; without it, an unannotated namespace is not restricted (the default keeps
 * existing namespaces working).
 */
export function namespaceAccountsPolicy(requireBinding: boolean): Json[] {
  const name = `${NAME}-namespace-accounts`;
  const annotated = `has(namespaceObject.metadata.annotations) && '${ACCOUNTS_ANNOTATION}' in namespaceObject.metadata.annotations`;
  const allowed = `namespaceObject.metadata.annotations['${ACCOUNTS_ANNOTATION}'].split(',').map(a, a.trim())`;
  return denyingPolicy(
    name,
    { apiGroup: GROUP, resources: [PLURAL], operations: ['CREATE', 'UPDATE'] },
    {
      // The annotation is read in the validation, not in a matchCondition: the API server evaluates matchConditions
      // without namespaceObject (apiserver policy/validating/validator.go), so there it is always empty.
      validations: [
        {
          expression: `${requireBinding ? `${annotated} && ` : `!(${annotated}) || `}${allowed}.exists(a, a == object.spec.account)`,
          messageExpression: `'spec.account: ' + object.spec.account + ' is not an account namespace ' + namespaceObject.metadata.name + ' may use (${ACCOUNTS_ANNOTATION}: ' + (${annotated} ? namespaceObject.metadata.annotations['${ACCOUNTS_ANNOTATION}'] : 'not set') + '; a cluster admin sets it on the Namespace)'`,
          reason: 'Forbidden',
        },
      ],
    },
  );
}

/**
 * Who may see and edit WorkerClusters and WorkerRolloutPolicies (pause and resume are edits). Not aggregated into the
 * built-in view/edit/admin roles unless asked: editing a WorkerCluster chooses an AWS account and a bootstrap secret
 * the daemon acts on, which is more than every namespace editor should get. Bind them with a RoleBinding per namespace.
 */
export function userRoles(aggregate: boolean): Json[] {
  const to = (...roles: string[]) =>
    aggregate ? Object.fromEntries(roles.map((r) => [`rbac.authorization.k8s.io/aggregate-to-${r}`, 'true'])) : {};
  return [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${NAME}-view`, labels: { ...LABELS, ...to('view') } },
      rules: [
        {
          apiGroups: [GROUP],
          resources: [PLURAL, `${PLURAL}/status`, POLICY_PLURAL, CHANNEL_PLURAL, `${CHANNEL_PLURAL}/status`],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `${NAME}-edit`, labels: { ...LABELS, ...to('edit', 'admin') } },
      rules: [
        {
          apiGroups: [GROUP],
          resources: [PLURAL, POLICY_PLURAL, CHANNEL_PLURAL],
          verbs: ['create', 'update', 'patch', 'delete', 'deletecollection'],
        },
      ],
    },
  ];
}

export function binding(kind: 'ClusterRoleBinding' | 'RoleBinding', role: string, namespace: string): Json {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name: role, ...(kind === 'RoleBinding' ? { namespace } : {}), labels: LABELS },
    roleRef: {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: kind === 'RoleBinding' ? 'Role' : 'ClusterRole',
      name: role,
    },
    subjects: [{ kind: 'ServiceAccount', name: NAME, namespace }],
  };
}
