import { getCondition } from '../../lib/model/cluster/status';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { kubeForFile } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { objectNamed } from '../adapters/stores/store-contract';
import { cli } from './harness';
import { Json } from '../helpers/json';

// README: "a name used in two of them would give both objects one stack, so both are refused (Stalled, InvalidSpec,
// naming the other) until one is renamed". Against the real API server, through `reconcile --once -A` (the daemon's
// reconcile of a name goes through the same store record). No AWS: a refused object never reaches it, and the
// objects name a template the daemon does not have, so that once the name is unique the object is still refused
// (for its template), without a stack.

const kube = kubeForFile();
const admin = (): KubeClient => kube.current.admin;
const NAME = 'twin';
const twin = (maxSize = 30) =>
  objectNamed(NAME, (r) => {
    r.spec.cloudConfig.template = 'no-such-template';
    r.spec.pool.maxSize = maxSize;
  });
const reconcile = () =>
  cli([
    'reconcile',
    '--once',
    '--store',
    'kubernetes',
    '--kubeconfig',
    kube.current.api.kubeconfig,
    '--all-namespaces',
    '--synth-threads',
    '0',
  ]);
const object = async (ns: string) =>
  (await admin().request<KubeWorkerCluster & { status?: Json }>('GET', objectPath(ns, NAME))).body;
const events = async (ns: string) => {
  const { body } = await admin().request<{
    items: {
      reason: string;
      message: string;
      type: string;
      involvedObject: { name: string; kind: string; uid?: string };
    }[];
  }>('GET', `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${NAME}`);
  return body.items.filter((e) => e.involvedObject.kind === 'WorkerCluster').map((e) => [e.type, e.reason, e.message]);
};

test('a name in two namespaces: both objects are Stalled (InvalidSpec) naming the other namespace, each at its own generation, each with a Warning event; edits to either are looked at; once one is gone, the other is reconciled on its own', async () => {
  // GIVEN the same name in two namespaces
  const [a, b] = [await kube.current.namespace('team-a'), await kube.current.namespace('team-b')];
  await applyObject(admin(), a, twin());
  await applyObject(admin(), b, twin());

  // WHEN the reconciler passes over every namespace
  const first = await reconcile();

  // THEN each object says it is refused, naming both namespaces, at its generation; and each has the event
  expect(first.code).toBe(1);
  for (const ns of [a, b]) {
    const o = await object(ns);
    const stalled = getCondition(o.status, 'Stalled');
    expect({
      ns,
      status: stalled?.status,
      reason: stalled?.reason,
      observedGeneration: stalled?.observedGeneration,
    }).toEqual({ ns, status: 'True', reason: 'InvalidSpec', observedGeneration: o.metadata.generation });
    expect(stalled!.message).toContain('namespaces team-a, team-b');
    expect(o.status.observedGeneration).toBe(o.metadata.generation);
    expect(await events(ns)).toEqual([['Warning', 'Stalled', expect.stringContaining('namespaces team-a, team-b')]]);
  }

  // WHEN the second object is edited, and the reconciler passes again
  await applyObject(admin(), b, twin(25));
  const edited = await object(b);
  expect(edited.metadata.generation).toBe(2);
  await reconcile();

  // THEN the edit is looked at: its status follows its generation (still refused), and no event repeats
  const after = await object(b);
  expect([
    after.status.observedGeneration,
    getCondition(after.status, 'Stalled')?.observedGeneration,
    getCondition(after.status, 'Stalled')?.reason,
  ]).toEqual([2, 2, 'InvalidSpec']);
  expect((await events(a)).length + (await events(b)).length).toBe(2);

  // WHEN the first object is deleted, and the reconciler passes again
  await admin().request('DELETE', objectPath(a, NAME));
  await reconcile();

  // THEN the remaining one is reconciled on its own: refused for its own problem now, not for its name
  const alone = getCondition((await object(b)).status, 'Stalled')!;
  expect(alone.reason).toBe('InvalidSpec');
  expect(alone.message).not.toContain('team-a');
  expect(alone.message).toContain('no-such-template');
}, 120_000);
