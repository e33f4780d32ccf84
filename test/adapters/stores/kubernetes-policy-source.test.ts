import { runCli } from '../../../lib/adapters/cli/program';
import { KubeApiError } from '../../../lib/core/errors';
import { KubeClient } from '../../../lib/platform/kube/client';
import { KubeRolloutPolicy, policyCollectionPath, policyObjectPath } from '../../../lib/platform/kube/policy-resource';
import { policyEvent } from '../../../lib/engines/rollout/policy-events';
import { KubernetesPolicySource } from '../../../lib/adapters/stores/kubernetes-policy-source';
import { Json } from '../../helpers/json';
import { kubeForFile } from '../../helpers/kube-crd';
import { policyNamed, policySourceContract, UserPolicy } from '../../engines/rollout/policy-source-contract';

/**
 * KubernetesPolicySource against a real kube-apiserver and etcd with the generated WorkerRolloutPolicy CRD: the
 * policy-source contract (a user creates, replaces and deletes objects as `kubectl apply` does), then what only
 * this source does: events on the policy object, and policies of several namespaces.
 */
const k = kubeForFile(); // both CRDs, as deploy/crd.yaml
let n = 0;

/** Creates, or replaces (with the version read), as `kubectl apply` does. */
async function apply(namespace: string, raw: UserPolicy): Promise<KubeRolloutPolicy> {
  const body = { ...raw, metadata: { ...raw.metadata, namespace } };
  try {
    return (await k.current.admin.request<KubeRolloutPolicy>('POST', policyCollectionPath(namespace), body)).body;
  } catch (e) {
    if (!(e instanceof KubeApiError && e.statusCode === 409)) throw e;
  }
  const { body: cur } = await k.current.admin.request<KubeRolloutPolicy>(
    'GET',
    policyObjectPath(namespace, raw.metadata.name),
  );
  return (
    await k.current.admin.request<KubeRolloutPolicy>('PUT', policyObjectPath(namespace, raw.metadata.name), {
      ...body,
      metadata: { ...body.metadata, resourceVersion: cur.metadata.resourceVersion },
    })
  ).body;
}

const client = () => KubeClient.fromOptions({ kubeconfig: k.current.api.kubeconfig });

policySourceContract('kubernetes', async () => {
  const namespace = await k.current.namespace(`policies-${++n}`);
  const source = new KubernetesPolicySource({ client: client(), namespace, ownsClient: true });
  return {
    source,
    put: async (raw: UserPolicy) => {
      await apply(namespace, raw);
    },
    remove: async (name: string) => {
      await k.current.admin.request('DELETE', policyObjectPath(namespace, name));
    },
    sourceOf: (name: string) => `WorkerRolloutPolicy/${name}`,
    async dispose() {
      source.close();
      await k.current.admin.request('DELETE', `/api/v1/namespaces/${namespace}`);
    },
  };
});

test("an event lands on the policy object: kubectl describe wrp lists it (reason, type, message, the policy's uid)", async () => {
  // GIVEN a policy, and a source watching it (as the daemon's)
  const namespace = await k.current.namespace('policy-events');
  const created = await apply(namespace, policyNamed('fleet'));
  const source = new KubernetesPolicySource({ client: client(), namespace, ownsClient: true });
  const stop = source.watch(() => undefined);
  try {
    await source.load();
    // WHEN a wave halts
    await source.emit(
      { name: 'fleet', namespace },
      policyEvent('WaveHalted', 'wave early (2 of 3) is halted: the roll of canary-0 failed', 'early'),
    );
    await source.flush();
    // THEN the event is on the object, as kubectl describe finds it
    const q = new URLSearchParams({
      fieldSelector: 'involvedObject.kind=WorkerRolloutPolicy,involvedObject.name=fleet',
    });
    const { body } = await k.current.admin.request<{ items: Json[] }>(
      'GET',
      `/api/v1/namespaces/${namespace}/events?${q.toString()}`,
    );
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      type: 'Warning',
      reason: 'WaveHalted',
      message: 'wave early (2 of 3) is halted: the roll of canary-0 failed',
      involvedObject: {
        kind: 'WorkerRolloutPolicy',
        name: 'fleet',
        namespace,
        uid: created.metadata.uid,
        apiVersion: 'worker-stacks.io/v1alpha1',
      },
      source: { component: 'worker-stacks' },
    });
  } finally {
    stop();
    source.close();
  }
});

test('every namespace: each policy carries its namespace and is named with it; a name in two namespaces needs namespace/name', async () => {
  // GIVEN a policy "shared" in two namespaces (other tests' namespaces may still be terminating), one of them invalid for the daemon
  const a = await k.current.namespace('team-a');
  const b = await k.current.namespace('team-b');
  await apply(a, policyNamed('shared'));
  await apply(
    b,
    policyNamed('shared', (p) => (p.spec.waves[1].maintenanceWindows[0].timeZone = 'Berlin')),
  );
  const source = new KubernetesPolicySource({ client: client(), ownsClient: true });
  try {
    // WHEN
    const { policies, problems } = await source.load();
    // THEN the valid one governs team-a; the problem holds the rolls of team-b only
    expect(
      policies.filter((p) => p.namespace === a || p.namespace === b).map((p) => `${p.namespace} ${p.source}`),
    ).toEqual([`${a} WorkerRolloutPolicy/${a}/shared`]);
    expect(
      problems.filter((p) => p.namespace === a || p.namespace === b).map((p) => `${p.namespace} ${p.file}: ${p.path}`),
    ).toEqual([`${b} WorkerRolloutPolicy/${b}/shared: spec.waves[1].maintenanceWindows[0].timeZone`]);
    // and pausing "shared" is ambiguous: which one is said
    await expect(source.setPaused('shared', true)).rejects.toThrow(
      `rollout policy shared is in several namespaces (${a}, ${b})`,
    );
  } finally {
    source.close();
  }
});

test('rollout pause, status and resume --store kubernetes act on the WorkerRolloutPolicy objects (name, or namespace/name)', async () => {
  // GIVEN a policy
  const namespace = await k.current.namespace('rollout-cli');
  await apply(namespace, policyNamed('fleet'));
  const cli = async (...args: string[]) => {
    let out = '';
    const code = await runCli([...args, '--store', 'kubernetes', '--kubeconfig', k.current.api.kubeconfig], {
      out: (t) => (out += t),
      err: (t) => (out += t),
    });
    return { code, out };
  };
  const paused = async () =>
    (await k.current.admin.request<KubeRolloutPolicy>('GET', policyObjectPath(namespace, 'fleet'))).body.spec?.paused;
  // WHEN paused by name in its namespace, THEN the object says so, and so does rollout status
  expect((await cli('rollout', 'pause', 'fleet', '-n', namespace)).code).toBe(0);
  expect(await paused()).toBe(true);
  const status = await cli('rollout', 'status', '-n', namespace);
  expect(status.out).toContain(
    `policy fleet (WorkerRolloutPolicy/fleet): PAUSED (worker-stacks rollout resume ${namespace}/fleet)`,
  );
  // WHEN resumed as namespace/name, THEN the field is gone
  expect((await cli('rollout', 'resume', `${namespace}/fleet`)).code).toBe(0);
  expect(await paused()).toBeUndefined();
  // WHEN an unknown policy is paused, THEN exit 2, naming it
  const nope = await cli('rollout', 'pause', 'nope', '-n', namespace);
  expect(nope.code).toBe(2);
  expect(nope.out).toContain(`no rollout policy nope (WorkerRolloutPolicy) in namespace ${namespace}`);
});

test('no WorkerRolloutPolicy CRD in the API server (404): no policy, as with no policy directory', async () => {
  // GIVEN an API server that does not serve the resource
  const notServed = {
    request: async (method: string, p: string) =>
      Promise.reject(
        new KubeApiError(404, 'NotFound', 'the server could not find the requested resource', `${method} ${p}`),
      ),
  } as unknown as KubeClient;
  const source = new KubernetesPolicySource({ client: notServed, namespace: 'platform' });
  // WHEN
  const loaded = await source.load();
  // THEN
  expect(loaded).toEqual({ policies: [], problems: [] });
  await expect(source.setPaused('fleet', true)).rejects.toThrow(
    'no rollout policy fleet (WorkerRolloutPolicy) in namespace platform',
  );
});
