import { getCondition } from '../../lib/model/cluster/schema/status';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { kubeForFile } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { objectNamed } from '../adapters/stores/store-contract';
import { cli } from './harness';
import { Json } from '../helpers/json';

// A name in two namespaces, with every namespace watched: one object holds the name (the one that has deployed its
// stack, else the older), the other is refused on its own (Stalled InvalidSpec, naming the holder), so a newcomer never
// stalls the object that holds the name (lib/adapters/stores/kubernetes-duplicates.ts). Against the real API server,
// through `reconcile --once -A`. No AWS: the objects name a template the daemon does not have, so the holder is refused
// for its template (nothing reaches AWS either way), which tells the two refusals apart.

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

test('a name in two namespaces: the older object holds it, the newcomer alone is refused naming it; an object that has deployed its stack holds it whatever its age; once the holder is gone the other is reconciled on its own', async () => {
  // GIVEN the same name in two namespaces: team-b's first, team-a's a second later (alphabetically first, but newer)
  const [a, b] = [await kube.current.namespace('team-a'), await kube.current.namespace('team-b')];
  await applyObject(admin(), b, twin());
  await new Promise((r) => setTimeout(r, 1100)); // creationTimestamp has whole seconds
  await applyObject(admin(), a, twin());

  // WHEN the reconciler passes over every namespace
  const first = await reconcile();

  // THEN the older object is reconciled for what it is (refused for its own template), the newer one for its name
  expect(first.code).toBe(1);
  const stalled = async (ns: string) => getCondition((await object(ns)).status, 'Stalled')!;
  expect((await stalled(b)).message).toContain('no-such-template');
  expect((await stalled(b)).message).not.toContain('held by');
  expect(await stalled(a)).toMatchObject({ status: 'True', reason: 'InvalidSpec', observedGeneration: 1 });
  expect((await stalled(a)).message).toContain(`held by the WorkerCluster ${b}/${NAME} (which is older)`);
  expect(await events(a)).toEqual([['Warning', 'Stalled', expect.stringContaining(`held by the WorkerCluster ${b}/`)]]);
  expect(await events(b)).toEqual([['Warning', 'Stalled', expect.stringContaining('no-such-template')]]);

  // WHEN the newer object's status says it has deployed its stack (as the reconciler records it), and a pass runs
  const newer = await object(a);
  await admin().request('PUT', objectPath(a, NAME, 'status'), {
    ...newer,
    status: {
      ...newer.status,
      stackName: `WorkerStack-${NAME}`,
      stackId: 'arn:aws:cloudformation:eu-west-1:111111111111:stack/WorkerStack-twin/1',
    },
  });
  await reconcile();

  // THEN it holds the name, and the older one is the one refused
  expect((await stalled(a)).message).toContain('no-such-template');
  expect((await stalled(b)).message).toContain(`held by the WorkerCluster ${a}/${NAME} (which has deployed its stack)`);

  // WHEN the holder is deleted, and the reconciler passes again
  await admin().request('DELETE', objectPath(a, NAME));
  await reconcile();

  // THEN the remaining one is reconciled on its own: refused for its own problem now, not for its name
  const alone = await stalled(b);
  expect(alone.reason).toBe('InvalidSpec');
  expect(alone.message).not.toContain('held by');
  expect(alone.message).toContain('no-such-template');
}, 120_000);
