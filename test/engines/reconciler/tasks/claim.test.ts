import { claimOf } from '../../../../lib/engines/reconciler/tasks/claim';
import { OWNER_TAG, poolStackName, stackOwner, workerStackName } from '../../../../lib/core/naming';
import { ClusterRecord, ClusterStore } from '../../../../lib/model/ports/cluster-store';
import { StackSummary } from '../../../../lib/model/ports/cloudformation-port';
import { getCondition } from '../../../../lib/model/cluster/schema/status';
import { ReconcilerDeps } from '../../../../lib/engines/reconciler/workflow/context';
import { STACK_FINALIZER } from '../../../../lib/platform/kube/resource';
import { Harness } from '../../../fakes/harness';
import { defaultAndSpot } from '../../../helpers/named-pools';
import { SimPublisher, simSynthesizer } from '../../../sim/sim-synth';

// One stack, one owner (lib/engines/reconciler/tasks/claim.ts): a stack whose owner tag names another object is never
// written to, deleted or recorded, whatever store, shard or namespace the object comes from.

const record = (namespace?: string): ClusterRecord => ({
  name: 'prod-eu1',
  source: 'x',
  ...(namespace ? { namespace } : {}),
  parseProblems: [],
  generation: 1,
  resourceVersion: '1',
});
const stack = (tags?: Record<string, string>): StackSummary => ({
  name: 'WorkerStack-prod-eu1',
  id: 'arn:stack/WorkerStack-prod-eu1/1',
  status: 'CREATE_COMPLETE',
  outputs: {},
  tags,
});
const A = stackOwner('prod-eu1', 'team-a');

test.each([
  ['tagged with this object', record('team-a'), stack({ [OWNER_TAG]: A }), {}, 'ours'],
  ['tagged with the same name in another namespace', record('team-b'), stack({ [OWNER_TAG]: A }), {}, 'refused'],
  [
    'tagged by a file-store object of the same name',
    record('team-a'),
    stack({ [OWNER_TAG]: 'file:prod-eu1' }),
    {},
    'refused',
  ],
  [
    'untagged, its id recorded by this object (made by an older release)',
    record('team-a'),
    stack({}),
    { stackId: 'arn:stack/WorkerStack-prod-eu1/1' },
    'adopt',
  ],
  [
    'untagged, another id recorded (the stack was made again by someone else)',
    record('team-a'),
    stack({}),
    { stackId: 'arn:stack/WorkerStack-prod-eu1/0' },
    'refused',
  ],
  ['untagged, never recorded by this custom resource', record('team-b'), stack({}), {}, 'refused'],
  ['untagged, an execution of this object under way', record('team-a'), stack({}), { executing: true }, 'adopt'],
  ['untagged, a file-store object (one directory, unique names)', record(), stack({}), {}, 'adopt'],
] as const)('%s', (_what, r, s, recorded, kind) => {
  // WHEN the claim is judged
  const verdict = claimOf(r, s, { executing: false, ...recorded });

  // THEN it is as the table says; a refusal names the owner and the fix
  expect(verdict.kind).toBe(kind);
  if (verdict.kind === 'refused') expect(verdict.message).toContain(`${OWNER_TAG}=${stackOwner(r.name, r.namespace)}`);
});

/** The harness's file store, its records as a Kubernetes store gives them: in a namespace. */
function inNamespace(store: ClusterStore, namespace: string): ClusterStore {
  return Object.assign(Object.create(store) as ClusterStore, {
    list: async () => (await store.list()).map((r) => ({ ...r, namespace })),
    get: async (n: string) => {
      const r = await store.get(n);
      return r && { ...r, namespace };
    },
  });
}

const CLUSTER = 'prod-eu1';
const SHARED = workerStackName(CLUSTER);
const SPOT = poolStackName(CLUSTER, 'spot');
let h: Harness;
/** Deps for the object as the Kubernetes store of `namespace` sees it (or the file store). */
let deps: (namespace?: string, over?: Partial<ReconcilerDeps>) => ReconcilerDeps;
beforeEach(() => {
  h = new Harness({ clusters: [] });
  h.addCluster(CLUSTER, defaultAndSpot);
  const publisher = new SimPublisher();
  deps = (namespace, over = {}) => {
    const base = h.deps({ synthesizer: simSynthesizer, aws: () => ({ cfn: h.cfn, publisher }), ...over });
    return namespace ? { ...base, store: inNamespace(base.store, namespace) } : base;
  };
});
afterEach(() => h.cleanup());

test('every stack the reconciler creates carries its object as owner, pools included', async () => {
  // GIVEN an object with a pool of its own, in namespace team-a

  // WHEN it is reconciled
  expect((await h.reconcile(CLUSTER, {}, deps('team-a'))).result).toBe('applied');

  // THEN both stacks name the object as their owner
  for (const name of [SHARED, SPOT]) expect(h.cfn.peek(name)?.tags).toMatchObject({ [OWNER_TAG]: A });
});

test("another object's stack of the same name is not written, not recorded, and its pools' stacks are not made", async () => {
  // GIVEN team A's stack, and team B's object of the same name (with a pool) in another namespace
  h.cfn.seed(SHARED, { status: 'CREATE_COMPLETE', tags: { [OWNER_TAG]: A } });

  // WHEN team B's object is reconciled
  const outcome = await h.reconcile(CLUSTER, {}, deps('team-b'));

  // THEN nothing was asked of CloudFormation, and team B's object says why, Stalled, without team A's stack
  expect(outcome.result).toBe('stalled');
  expect(h.cfn.requests).toEqual([]);
  expect(h.cfn.peek(SPOT)).toBeUndefined();
  const status = h.status(CLUSTER);
  expect(getCondition(status, 'Stalled')).toMatchObject({ status: 'True', reason: 'StackOwnedElsewhere' });
  expect(getCondition(status, 'Stalled')?.message).toContain(`belongs to ${A}`);
  expect(getCondition(status, 'Ready')?.status).toBe('False');
  expect(status.stackId).toBeUndefined();
  expect(status.pools ?? []).toEqual([]);

  // AND once an operator hands the stack over (its tag), team B's object takes it on its next reconcile
  h.cfn.setTags(SHARED, { [OWNER_TAG]: stackOwner(CLUSTER, 'team-b') });
  expect((await h.reconcile(CLUSTER, {}, deps('team-b'))).result).toBe('applied');
});

test("a pool's stack owned by another object is left alone, and the rest of the cluster goes on", async () => {
  // GIVEN team B's object, whose pool stack name is taken by team A's stack
  h.cfn.seed(SPOT, { status: 'CREATE_COMPLETE', tags: { [OWNER_TAG]: A } });

  // WHEN team B's object is reconciled
  await h.reconcile(CLUSTER, {}, deps('team-b'));

  // THEN its shared stack exists, the pool's stack was not written, and the pool says why
  expect(h.cfn.peek(SHARED)?.tags).toMatchObject({ [OWNER_TAG]: stackOwner(CLUSTER, 'team-b') });
  expect(h.cfn.requests.map((r) => r.stackName)).toEqual([SHARED]);
  const spot = h.status(CLUSTER).pools?.find((p) => p.name === 'spot');
  expect(getCondition({ conditions: spot!.conditions }, 'Stalled')?.reason).toBe('StackOwnedElsewhere');
});

test('a stack made by an older release (no owner tag) is adopted by the object that recorded it, and tagged at its next update', async () => {
  // GIVEN team A's cluster, created, whose stacks then lose their owner tag (as stacks an older release made)
  await h.reconcile(CLUSTER, {}, deps('team-a'));
  for (const name of [SHARED, SPOT]) h.cfn.setTags(name, {});

  // WHEN the object is edited and reconciled
  h.edit(CLUSTER, (raw) => (raw.spec.pools[0].maxSize = 29));
  const outcome = await h.reconcile(CLUSTER, {}, deps('team-a'));

  // THEN it was applied, and the shared stack carries the owner tag again
  expect(outcome.result).toBe('applied');
  expect(h.cfn.peek(SHARED)?.tags).toMatchObject({ [OWNER_TAG]: A });
});

test('an untagged stack this object never recorded is not adopted by a custom resource', async () => {
  // GIVEN a stack of the name without tags, and team B's new object
  h.cfn.seed(SHARED, { status: 'CREATE_COMPLETE' });

  // WHEN it is reconciled
  await h.reconcile(CLUSTER, {}, deps('team-b'));

  // THEN nothing was written, and the object names the tag an operator would set
  expect(h.cfn.requests).toEqual([]);
  expect(h.condition('Stalled', CLUSTER)).toMatchObject({ status: 'True', reason: 'StackNotAdopted' });
  expect(h.condition('Stalled', CLUSTER)?.message).toContain(`${OWNER_TAG}=${stackOwner(CLUSTER, 'team-b')}`);
});

test("deleting an object with deletionPolicy Delete never deletes another object's stack", async () => {
  // GIVEN team A's stack, and team B's object of the same name, deleted with deletionPolicy Delete and our finalizer
  h.cfn.seed(SHARED, { status: 'CREATE_COMPLETE', tags: { [OWNER_TAG]: A } });
  h.edit(CLUSTER, (raw) => (raw.spec.deletionPolicy = 'Delete'));
  const base = deps('team-b');
  const removed: string[] = [];
  const store: ClusterStore = Object.assign(Object.create(base.store) as ClusterStore, {
    get: async (n: string) => {
      const r = await base.store.get(n);
      return r && { ...r, deletionRequested: true, finalizers: [STACK_FINALIZER] };
    },
    setFinalizer: async (n: string, f: string, present: boolean) => {
      if (!present) removed.push(`${n}:${f}`);
    },
  });

  // WHEN it is reconciled
  const outcome = await h.reconcile(CLUSTER, {}, { ...base, store });

  // THEN team A's stack is untouched, and team B's object lets go (its finalizer is removed)
  expect(outcome.result).toBe('deleted');
  expect(h.cfn.peek(SHARED)?.status).toBe('CREATE_COMPLETE');
  expect(removed).toEqual([`${CLUSTER}:${STACK_FINALIZER}`]);
});
