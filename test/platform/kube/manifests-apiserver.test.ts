import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CRD_NAME } from '../../../lib/platform/kube/crd';
import { POLICY_CRD_NAME } from '../../../lib/platform/kube/policy-crd';
import { DEFAULT_NAMESPACE, LEASE_NAME, NAME } from '../../../lib/platform/kube/manifests';
import { rawExample, REPO } from '../../helpers/clusters';
import { KubeApiServer, startKubeApiServer } from '../../helpers/kube-apiserver';
import { create, Impersonate, kubeRequest, waitEstablished } from '../../helpers/kube-rest';

/**
 * deploy/ against the real kube-apiserver v1.37.2: every object passes a server-side dry run (admission, schema
 * and PodSecurity "restricted" included), the CRD and RBAC are applied for real, and the ServiceAccount's
 * identity (impersonated, as the API server sees the pod's token) can do what the daemon does and nothing more.
 */
import { Json } from '../../helpers/json';
let api: KubeApiServer;

const files = ['crd.yaml', 'namespace.yaml', 'rbac.yaml', 'deployment.yaml'];
const objects: Json[] = files.flatMap((f) =>
  parseAllDocuments(fs.readFileSync(path.join(REPO, 'deploy', f), 'utf8')).map((d) => d.toJS()),
);
const byKind = (kind: string) => objects.filter((o) => o.kind === kind);

/** The daemon's pod, as the API server authenticates its ServiceAccount token. */
const SA: Impersonate = {
  user: `system:serviceaccount:${DEFAULT_NAMESPACE}:${NAME}`,
  groups: ['system:serviceaccounts', `system:serviceaccounts:${DEFAULT_NAMESPACE}`, 'system:authenticated'],
};
const asSa = (method: string, p: string, body?: unknown, contentType?: string) =>
  kubeRequest(api, method, p, body, api.adminToken, contentType, SA);

const WC = '/apis/worker-stacks.io/v1alpha1/namespaces/team-a/workerclusters';
const WRP = '/apis/worker-stacks.io/v1alpha1/namespaces/team-a/workerrolloutpolicies';
const LEASES = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;

beforeAll(async () => {
  api = await startKubeApiServer();
  // The namespace first: a namespaced dry run needs it (NamespaceLifecycle admission).
  for (const ns of [...byKind('Namespace'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }]) {
    const r = await create(api, ns);
    if (r.status !== 201) throw new Error(`namespace refused: ${JSON.stringify(r.body)}`);
  }
}, 120_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await api?.stop();
});

test.each(objects.map((o) => [`${o.kind} ${o.metadata.name}`, o] as const))(
  'server-side dry run of %s is accepted, without warnings',
  async (_name, obj) => {
    // WHEN
    const r =
      obj.kind === 'Namespace'
        ? await kubeRequest(
            api,
            'PATCH',
            `/api/v1/namespaces/${obj.metadata.name}?dryRun=All&fieldManager=test&fieldValidation=Strict`,
            obj,
            api.adminToken,
            'application/apply-patch+yaml',
          )
        : await create(api, obj, { dryRun: true });
    // THEN (a Deployment that broke PodSecurity "restricted" would come back with a warning)
    expect({ status: r.status, body: r.status < 300 ? 'ok' : r.body }).toEqual({
      status: r.status < 300 ? r.status : 201,
      body: 'ok',
    });
    expect(r.warnings).toEqual([]);
  },
);

test('the dry run would say so if the Deployment broke PodSecurity "restricted" (a root container with capabilities)', async () => {
  // GIVEN the Deployment, made to run as root with its capabilities kept
  const bad = JSON.parse(JSON.stringify(byKind('Deployment')[0]));
  delete bad.spec.template.spec.securityContext.runAsNonRoot;
  delete bad.spec.template.spec.containers[0].securityContext.capabilities;
  // WHEN
  const r = await create(api, bad, { dryRun: true });
  // THEN
  expect(r.warnings.join('\n')).toMatch(
    /would violate PodSecurity .*restricted:latest.*unrestricted capabilities.*runAsNonRoot != true/s,
  );
});

describe('applied for real', () => {
  beforeAll(async () => {
    const kinds = [
      'CustomResourceDefinition',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
      'Role',
      'RoleBinding',
    ];
    for (const o of kinds.flatMap(byKind)) {
      const r = await create(api, o);
      if (r.status !== 201) throw new Error(`${o.kind} ${o.metadata.name} refused: ${JSON.stringify(r.body)}`);
    }
    await waitEstablished(api, CRD_NAME);
    await waitEstablished(api, POLICY_CRD_NAME);
    const wc = { ...rawExample('prod-eu1'), metadata: { name: 'prod-eu1', namespace: 'team-a' } };
    const r = await create(api, wc);
    if (r.status !== 201) throw new Error(`example refused: ${JSON.stringify(r.body)}`);
    const policy = {
      apiVersion: 'worker-stacks.io/v1alpha1',
      kind: 'WorkerRolloutPolicy',
      metadata: { name: 'fleet', namespace: 'team-a' },
      spec: { waves: [{ name: 'canary', selector: { matchLabels: { ring: 'canary' } } }] },
    };
    const p = await create(api, policy);
    if (p.status !== 201) throw new Error(`policy refused: ${JSON.stringify(p.body)}`);
    // The admission policy is enforced once the API server has loaded and type-checked it: wait for that.
    for (let i = 0; ; i++) {
      const p = await asSa('PATCH', `${WC}/prod-eu1`, { spec: { paused: true } }, 'application/merge-patch+json');
      if (p.status === 403) break;
      if (p.status === 200)
        await kubeRequest(
          api,
          'PATCH',
          `${WC}/prod-eu1`,
          { spec: { paused: null } },
          api.adminToken,
          'application/merge-patch+json',
        );
      if (i > 100) throw new Error(`the admission policy is not enforced: ${JSON.stringify(p.body)}`);
      await new Promise((res) => setTimeout(res, 200));
    }
    // And the Lease policy (the daemon creates only its own Leases).
    for (let i = 0; ; i++) {
      const p = await asSa('POST', LEASES(DEFAULT_NAMESPACE), {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'probe' },
      });
      if (p.status === 403) break;
      if (p.status === 201) await kubeRequest(api, 'DELETE', `${LEASES(DEFAULT_NAMESPACE)}/probe`);
      if (i > 100) throw new Error(`the Lease admission policy is not enforced: ${JSON.stringify(p.body)}`);
      await new Promise((res) => setTimeout(res, 200));
    }
  }, 60_000);

  test('the ServiceAccount lists, watches and gets WorkerClusters in any namespace', async () => {
    // WHEN
    const list = await asSa('GET', '/apis/worker-stacks.io/v1alpha1/workerclusters');
    const get = await asSa('GET', `${WC}/prod-eu1`);
    const watch = await asSa('GET', '/apis/worker-stacks.io/v1alpha1/workerclusters?watch=true&timeoutSeconds=1');
    // THEN
    expect([list.status, get.status, watch.status]).toEqual([200, 200, 200]);
    expect(list.body.items.map((i: Json) => i.metadata.name)).toEqual(['prod-eu1']);
  });

  test('the ServiceAccount lists and watches WorkerRolloutPolicies in any namespace, and records events on them', async () => {
    // WHEN
    const list = await asSa('GET', '/apis/worker-stacks.io/v1alpha1/workerrolloutpolicies');
    const watch = await asSa(
      'GET',
      '/apis/worker-stacks.io/v1alpha1/workerrolloutpolicies?watch=true&timeoutSeconds=1',
    );
    const event = await asSa('POST', '/api/v1/namespaces/team-a/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'fleet.wave', namespace: 'team-a' },
      involvedObject: {
        apiVersion: 'worker-stacks.io/v1alpha1',
        kind: 'WorkerRolloutPolicy',
        name: 'fleet',
        namespace: 'team-a',
        uid: list.body.items[0].metadata.uid,
      },
      reason: 'WaveStarted',
      message: 'wave canary (1 of 2) started',
      type: 'Normal',
      source: { component: 'worker-stacks' },
    });
    // THEN
    expect([list.status, watch.status, event.status]).toEqual([200, 200, 201]);
    expect(list.body.items.map((i: Json) => i.metadata.name)).toEqual(['fleet']);
  });

  test.each([
    ['get one (the list + watch cache is all the daemon reads)', 'GET', `${WRP}/fleet`, undefined],
    [
      "patch one (pause and resume are the user's, with the user's rights)",
      'PATCH',
      `${WRP}/fleet`,
      { spec: { paused: true } },
    ],
    [
      'create one',
      'POST',
      WRP,
      {
        apiVersion: 'worker-stacks.io/v1alpha1',
        kind: 'WorkerRolloutPolicy',
        metadata: { name: 'other', namespace: 'team-a' },
        spec: { waves: [{ name: 'a', selector: {} }] },
      },
    ],
    ['delete one', 'DELETE', `${WRP}/fleet`, undefined],
  ])('the ServiceAccount cannot %s of the WorkerRolloutPolicies (403)', async (_what, method, p, body) => {
    // WHEN
    const r = await asSa(method, p, body, method === 'PATCH' ? 'application/merge-patch+json' : undefined);
    // THEN
    expect({ status: r.status, reason: r.body.reason }).toEqual({ status: 403, reason: 'Forbidden' });
  });

  test('the ServiceAccount writes the status subresource, with resourceVersion (a stale one is a conflict)', async () => {
    // GIVEN
    const cur = (await asSa('GET', `${WC}/prod-eu1`)).body;
    const status = {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'StackComplete',
          message: 'ok',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          observedGeneration: 1,
        },
      ],
      observedGeneration: 1,
      desiredChecksumShort: 'abcdef012345',
    };
    // WHEN
    const put = await asSa('PUT', `${WC}/prod-eu1/status`, { ...cur, status });
    const stale = await asSa('PUT', `${WC}/prod-eu1/status`, { ...cur, status: { ...status, observedGeneration: 2 } });
    const patch = await asSa(
      'PATCH',
      `${WC}/prod-eu1/status`,
      { status: { stackStatus: 'UPDATE_COMPLETE' } },
      'application/merge-patch+json',
    );
    // THEN
    expect(put.status).toBe(200);
    expect(put.body.status.desiredChecksumShort).toBe('abcdef012345');
    expect(stale.status).toBe(409);
    expect(patch.status).toBe(200);
    expect(patch.body.metadata.generation).toBe(1); // a status write is no spec change
  });

  test.each([
    ['write the spec (PUT)', 'PUT', `${WC}/prod-eu1`, 'object'],
    ['write the spec (PATCH)', 'PATCH', `${WC}/prod-eu1`, { spec: { paused: true } }],
    ['delete an object', 'DELETE', `${WC}/prod-eu1`, undefined],
    ['create an object', 'POST', WC, 'new'],
    ['read Secrets', 'GET', '/api/v1/namespaces/team-a/secrets', undefined],
    [
      'create a Lease outside its namespace',
      'POST',
      LEASES('team-a'),
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE_NAME } },
    ],
    [
      'update another Lease in its namespace',
      'PUT',
      `${LEASES(DEFAULT_NAMESPACE)}/someone-else`,
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'someone-else' } },
    ],
    // RBAC cannot limit create to a name: the admission policy worker-stacks-daemon-leases does.
    [
      'create another Lease in its namespace',
      'POST',
      LEASES(DEFAULT_NAMESPACE),
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'kube-controller-manager' } },
    ],
  ])('the ServiceAccount cannot %s (403)', async (_what, method, p, body) => {
    // GIVEN
    const cur = (await kubeRequest(api, 'GET', `${WC}/prod-eu1`)).body;
    const payload =
      body === 'object'
        ? { ...cur, spec: { ...cur.spec, paused: true } }
        : body === 'new'
          ? { ...cur, metadata: { name: 'other', namespace: 'team-a' } }
          : body;
    // WHEN
    const r = await asSa(method, p, payload, method === 'PATCH' ? 'application/merge-patch+json' : undefined);
    // THEN
    expect({ status: r.status, reason: r.body.reason }).toEqual({ status: 403, reason: 'Forbidden' });
  });

  test('the ServiceAccount adds and removes its finalizer (a JSON patch of metadata.finalizers), which the admission policy lets through', async () => {
    // WHEN
    const add = await asSa(
      'PATCH',
      `${WC}/prod-eu1`,
      [{ op: 'add', path: '/metadata/finalizers', value: ['worker-stacks.io/stack'] }],
      'application/json-patch+json',
    );
    const remove = await asSa(
      'PATCH',
      `${WC}/prod-eu1`,
      [
        { op: 'test', path: '/metadata/finalizers', value: ['worker-stacks.io/stack'] },
        { op: 'remove', path: '/metadata/finalizers' },
      ],
      'application/json-patch+json',
    );
    // THEN
    expect([add.status, remove.status]).toEqual([200, 200]);
    expect(add.body.metadata.finalizers).toEqual(['worker-stacks.io/stack']);
    expect(remove.body.metadata.finalizers).toBeUndefined();
  });

  test.each([
    [
      'adds a finalizer of another controller',
      [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/other'] }],
      'adds or removes only its own finalizer worker-stacks.io/stack',
    ],
    [
      'adds its own finalizer and another one',
      [{ op: 'add', path: '/metadata/finalizers', value: ['worker-stacks.io/stack', 'example.com/other'] }],
      'adds or removes only its own finalizer worker-stacks.io/stack',
    ],
    [
      'sets ownerReferences',
      [
        {
          op: 'add',
          path: '/metadata/ownerReferences',
          value: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: '6e2a5a3e-0000-4000-8000-000000000001' }],
        },
      ],
      'never writes ownerReferences',
    ],
  ])(
    'the admission policy refuses (403, naming the rule) when the ServiceAccount %s',
    async (_what, patch, message) => {
      // WHEN
      const r = await asSa('PATCH', `${WC}/prod-eu1`, patch, 'application/json-patch+json');
      // THEN
      expect({ status: r.status, message: String(r.body.message).includes(message) }).toEqual({
        status: 403,
        message: true,
      });
    },
  );

  test("the ServiceAccount cannot remove another controller's finalizer (403), while it may remove its own beside it", async () => {
    // GIVEN an object held by another controller's finalizer and by the daemon's (set by the admin)
    await kubeRequest(
      api,
      'PATCH',
      `${WC}/prod-eu1`,
      [{ op: 'add', path: '/metadata/finalizers', value: ['example.com/other', 'worker-stacks.io/stack'] }],
      api.adminToken,
      'application/json-patch+json',
    );
    // WHEN the daemon removes the other's, then its own
    const foreign = await asSa(
      'PATCH',
      `${WC}/prod-eu1`,
      [{ op: 'replace', path: '/metadata/finalizers', value: ['worker-stacks.io/stack'] }],
      'application/json-patch+json',
    );
    const own = await asSa(
      'PATCH',
      `${WC}/prod-eu1`,
      [{ op: 'replace', path: '/metadata/finalizers', value: ['example.com/other'] }],
      'application/json-patch+json',
    );
    await kubeRequest(
      api,
      'PATCH',
      `${WC}/prod-eu1`,
      [{ op: 'remove', path: '/metadata/finalizers' }],
      api.adminToken,
      'application/json-patch+json',
    );
    // THEN
    expect([foreign.status, own.status]).toEqual([403, 200]);
    expect(own.body.metadata.finalizers).toEqual(['example.com/other']);
  });

  test('the ServiceAccount lists the Leases of its namespace (the other shards and their scopes)', async () => {
    // WHEN
    const r = await asSa('GET', LEASES(DEFAULT_NAMESPACE));
    // THEN
    expect(r.status).toBe(200);
  });

  test('the admission policy names the rule when the ServiceAccount patches a label', async () => {
    // WHEN
    const r = await asSa(
      'PATCH',
      `${WC}/prod-eu1`,
      { metadata: { labels: { tier: 'canary' } } },
      'application/merge-patch+json',
    );
    // THEN
    expect(r.status).toBe(403);
    expect(r.body.message).toContain('the worker-stacks daemon never writes labels');
  });

  test('the ServiceAccount takes and renews its Lease in its own namespace', async () => {
    // WHEN
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: LEASE_NAME, namespace: DEFAULT_NAMESPACE },
      spec: { holderIdentity: 'pod-a', leaseDurationSeconds: 15 },
    };
    const created = await asSa('POST', LEASES(DEFAULT_NAMESPACE), lease);
    const got = await asSa('GET', `${LEASES(DEFAULT_NAMESPACE)}/${LEASE_NAME}`);
    const renewed = await asSa('PUT', `${LEASES(DEFAULT_NAMESPACE)}/${LEASE_NAME}`, {
      ...got.body,
      spec: { ...got.body.spec, renewTime: '2026-01-01T00:00:00.000000Z' },
    });
    // THEN
    expect([created.status, got.status, renewed.status]).toEqual([201, 200, 200]);
  });

  test('the ServiceAccount records events on the objects', async () => {
    // WHEN
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'prod-eu1.roll', namespace: 'team-a' },
      involvedObject: {
        apiVersion: 'worker-stacks.io/v1alpha1',
        kind: 'WorkerCluster',
        name: 'prod-eu1',
        namespace: 'team-a',
      },
      reason: 'RollStarted',
      message: 'config changed',
      type: 'Normal',
      source: { component: 'worker-stacks' },
    };
    const r = await asSa('POST', '/api/v1/namespaces/team-a/events', event);
    const patched = await asSa(
      'PATCH',
      '/api/v1/namespaces/team-a/events/prod-eu1.roll',
      { count: 2 },
      'application/merge-patch+json',
    );
    // THEN
    expect([r.status, patched.status]).toEqual([201, 200]);
  });

  test('SubjectAccessReview agrees: finalizers update yes, patch yes (the policy narrows it), update and delete no', async () => {
    // GIVEN
    const review = (resource: string, subresource: string, verb: string) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: SA.user,
        groups: SA.groups,
        resourceAttributes: {
          group: 'worker-stacks.io',
          resource,
          subresource,
          verb,
          namespace: 'team-a',
          name: 'prod-eu1',
        },
      },
    });
    // WHEN
    const answers = await Promise.all([
      create(api, review('workerclusters', 'finalizers', 'update')),
      create(api, review('workerclusters', '', 'patch')),
      create(api, review('workerclusters', '', 'update')),
      create(api, review('workerclusters', '', 'delete')),
    ]);
    // THEN
    expect(answers.map((a) => a.body.status.allowed)).toEqual([true, true, false, false]);
  });
});
