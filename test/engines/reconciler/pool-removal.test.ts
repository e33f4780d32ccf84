import { getCondition, PoolStatus } from '../../../lib/model/cluster/schema/status';
import { poolStackName, workerStackName } from '../../../lib/core/naming';
import { ReconcilerDeps } from '../../../lib/engines/reconciler/workflow/context';
import { complete, fail, stuck } from '../../fakes/fake-cloudformation';
import { Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';
import { Json } from '../../helpers/json';
import { SimPublisher, simSynthesizer } from '../../sim/sim-synth';

/**
 * Issue 33, finding 3: removing a pool terminates its nodes when its stack is deleted, so the reconciler deletes a
 * removed pool's stack as it rolls a pool: once every other stack of the cluster is settled and Ready (a pool added in
 * the same change, as in a rename, created and Ready first), counted against spec.rollout.maxConcurrentPools, and
 * saying on the removed pool's entry what it waits for (WaitingToRemovePool), never blocking.
 */

const CLUSTER = 'pools-eu1';
const SHARED = workerStackName(CLUSTER);
const SPOT = poolStackName(CLUSTER, 'spot');
const ARM = poolStackName(CLUSTER, 'arm');
const SPOT2 = poolStackName(CLUSTER, 'spot2');

let h: Harness;
let deps: ReconcilerDeps;
beforeEach(() => {
  h = new Harness({ clusters: [] });
  // The pools system (the shared stack reports its config), spot and arm, none named default.
  h.addCluster(CLUSTER, (raw) => {
    const spec: Json = raw.spec;
    const pool: Json = spec.pool;
    delete spec.pool;
    spec.pools = [
      { ...pool, name: 'system' },
      { ...pool, name: 'spot', labels: { 'node.example.com/spot': 'true' } },
      { ...pool, name: 'arm', labels: { 'node.example.com/arm': 'true' } },
    ];
  });
  const publisher = new SimPublisher();
  deps = h.deps({ synthesizer: simSynthesizer, aws: () => ({ cfn: h.cfn, publisher }) });
});
afterEach(() => h.cleanup());

const entry = (name: string): PoolStatus | undefined => h.status(CLUSTER).pools?.find((p) => p.name === name);
const progressing = (name: string) => getCondition({ conditions: entry(name)?.conditions ?? [] }, 'Progressing');
const edit = (mutate: (pools: Json[], raw: Json) => Json[] | undefined) =>
  h.edit(CLUSTER, (raw) => {
    const next = mutate(raw.spec.pools as Json[], raw);
    if (next) raw.spec.pools = next;
  });
const without =
  (...names: string[]) =>
  (pools: Json[]): Json[] =>
    pools.filter((p) => !names.includes(p.name));
const labelled = (pools: Json[], name: string, value: string) =>
  (pools.find((p) => p.name === name).labels = { tier: value });

test.each([
  // what else is under way, how it is set up, what the removal names, how it ends
  [
    'arm rolling (its update in progress)',
    (pools: Json[]) => labelled(pools, 'arm', 'rolled'),
    () => h.cfn.script(ARM, stuck()),
    /pool arm \(UPDATE_IN_PROGRESS\) is settled and Ready$/,
    () => h.cfn.release(ARM),
  ],
  [
    'the shared stack and system rolling',
    (pools: Json[]) => labelled(pools, 'system', 'rolled'),
    () => h.cfn.script(SHARED, stuck()),
    /the shared stack WorkerStack-pools-eu1 \(UPDATE_IN_PROGRESS\)/,
    () => h.cfn.release(SHARED),
  ],
  [
    'arm not Ready (its update failed for good)',
    (pools: Json[]) => labelled(pools, 'arm', 'broken'),
    () => h.cfn.setDefault(ARM, fail(LAUNCH_TEMPLATE_FAILURE)),
    /pool arm \(Ready=False: UpdateFailed\) is settled and Ready$/,
    () => {
      h.cfn.setDefault(ARM, complete());
      edit((pools) => void (pools.find((p) => p.name === 'arm').labels = { 'node.example.com/arm': 'true' }));
    },
  ],
] as const)(
  'a removed pool’s stack waits while %s, and is deleted once the cluster has settled',
  async (_what, change, setUp, names, end) => {
    // GIVEN a settled cluster of the pools system, spot and arm
    await h.reconcile(CLUSTER, {}, deps);
    setUp();

    // WHEN spot is removed in the same change as the other, and the cluster reconciled (for a while)
    edit((pools) => {
      change(pools);
      return without('spot')(pools);
    });
    const first = await h.step(CLUSTER, {}, deps);
    for (let i = 0; i < 6; i++) {
      h.cfn.advance(5000);
      await h.step(CLUSTER, {}, deps);
    }

    // THEN spot's stack and nodes are still there, its entry says what it waits for, and the reconcile never blocked
    expect(first).toMatchObject({ result: 'waiting', requeueAfterMs: expect.any(Number) });
    expect(h.cfn.peek(SPOT)?.status).toBe('CREATE_COMPLETE');
    expect(progressing('spot')).toMatchObject({ status: 'True', reason: 'WaitingToRemovePool' });
    expect(progressing('spot')?.message).toMatch(
      /^pool spot was removed from the object: its stack WorkerStack-pools-eu1-Pool-spot is deleted, its nodes terminated, once /,
    );
    expect(progressing('spot')?.message).toMatch(names);

    // WHEN what held it ends and the cluster is reconciled until it settles
    end();
    await h.reconcile(CLUSTER, {}, deps);

    // THEN spot's stack is gone, and so is its entry; the others are Ready
    expect(h.cfn.peek(SPOT)).toBeUndefined();
    expect((h.status(CLUSTER).pools ?? []).map((p) => p.name)).toEqual(['system', 'arm']);
    expect(h.status(CLUSTER).poolsReady).toBe('3/3');
  },
);

test.each([
  // how the new pool's create goes, whether the old pool's stack is deleted, what the old pool's entry then says
  ['completes', complete(2), true],
  ['rolls back every time', fail(LAUNCH_TEMPLATE_FAILURE), false],
] as const)(
  'a rename (spot → spot2): the new pool’s stack is created and Ready before the old one is deleted; its create %s',
  async (_what, create, deleted) => {
    // GIVEN a settled cluster, and each DeleteStack call noting where spot2's stack is then
    await h.reconcile(CLUSTER, {}, deps);
    h.cfn.setDefault(SPOT2, create);
    const spot2AtDelete: string[] = [];
    const deleteStack = h.cfn.deleteStack.bind(h.cfn);
    jest.spyOn(h.cfn, 'deleteStack').mockImplementation((stack, token) => {
      if (stack === h.cfn.peek(SPOT)?.id) spot2AtDelete.push(h.cfn.peek(SPOT2)?.status ?? 'absent');
      return deleteStack(stack, token);
    });

    // WHEN spot is renamed spot2 (same spec) and the cluster reconciled once
    edit((pools) => void (pools.find((p) => p.name === 'spot').name = 'spot2'));
    await h.step(CLUSTER, {}, deps);

    // THEN spot2's stack is being created, and spot's waits for it
    expect(h.cfn.peek(SPOT2)?.status).toBe('CREATE_IN_PROGRESS');
    expect(h.cfn.peek(SPOT)?.status).toBe('CREATE_COMPLETE');
    expect(progressing('spot')?.reason).toBe('WaitingToRemovePool');
    expect(progressing('spot')?.message).toMatch(/once pool spot2 \([\w :]+\) is created and Ready first$/);

    // WHEN it is reconciled until it settles
    await h.reconcile(CLUSTER, {}, deps);

    // THEN spot's stack was deleted only once spot2's was created and Ready; or, spot2 failing, it is still there
    expect(spot2AtDelete).toEqual(deleted ? ['CREATE_COMPLETE'] : []);
    expect(h.cfn.peek(SPOT)?.status).toBe(deleted ? undefined : 'CREATE_COMPLETE');
    if (deleted) expect((h.status(CLUSTER).pools ?? []).map((p) => p.name)).toEqual(['system', 'arm', 'spot2']);
    else expect(progressing('spot')?.message).toMatch(/once pool spot2 \([\w :]+\) is created and Ready first$/);
  },
);

test.each([
  // maxConcurrentPools, whether arm's roll starts while spot's stack is being deleted
  [1, false],
  [2, true],
] as const)(
  'a removal counts against maxConcurrentPools %s: a pool’s roll starts while it deletes: %s',
  async (max, starts) => {
    // GIVEN a settled cluster, and spot removed: its stack is being deleted (the deletion does not end)
    edit((_pools, raw) => void (raw.spec.rollout = { ...raw.spec.rollout, maxConcurrentPools: max }));
    await h.reconcile(CLUSTER, {}, deps);
    h.cfn.script(SPOT, stuck());
    edit(without('spot'));
    await h.step(CLUSTER, {}, deps);
    expect(h.cfn.peek(SPOT)?.status).toBe('DELETE_IN_PROGRESS');

    // WHEN arm's labels change (a roll) and the cluster is reconciled once
    edit((pools) => void labelled(pools, 'arm', 'rolled'));
    const outcome = await h.step(CLUSTER, {}, deps);

    // THEN arm rolls now or waits for spot, as the bound says; spot's deletion goes on either way
    expect(outcome.result).toBe('waiting');
    expect(h.cfn.peek(ARM)?.status).toBe(starts ? 'UPDATE_IN_PROGRESS' : 'CREATE_COMPLETE');
    expect(progressing('arm')?.reason).toBe(starts ? 'ChangeSetExecuting' : 'WaitingForPools');
    if (!starts) expect(progressing('arm')?.message).toMatch(/spot \(being removed\) is rolling/);
    expect(h.cfn.peek(SPOT)?.status).toBe('DELETE_IN_PROGRESS');
  },
);

test.each([
  // maxConcurrentPools, arm's stack while spot's is being deleted
  [1, 'CREATE_COMPLETE'],
  [2, 'DELETE_IN_PROGRESS'],
] as const)(
  'two pools removed at once, maxConcurrentPools %s: the second one’s stack is %s while the first is deleted',
  async (max, arm) => {
    // GIVEN a settled cluster, and deletions that do not end
    edit((_pools, raw) => void (raw.spec.rollout = { ...raw.spec.rollout, maxConcurrentPools: max }));
    await h.reconcile(CLUSTER, {}, deps);
    h.cfn.script(SPOT, stuck());
    if (arm === 'DELETE_IN_PROGRESS') h.cfn.script(ARM, stuck());

    // WHEN spot and arm are removed together and the cluster is reconciled, then again a poll later
    edit(without('spot', 'arm'));
    await h.step(CLUSTER, {}, deps);
    const once = [h.cfn.peek(SPOT)?.status, h.cfn.peek(ARM)?.status];
    h.cfn.advance(5000);
    await h.step(CLUSTER, {}, deps);

    // THEN spot's stack is being deleted, and arm's waits its turn or goes too, as the bound says, at each look
    expect(once).toEqual(['DELETE_IN_PROGRESS', arm]);
    expect([h.cfn.peek(SPOT)?.status, h.cfn.peek(ARM)?.status]).toEqual(['DELETE_IN_PROGRESS', arm]);
    if (arm === 'CREATE_COMPLETE') {
      expect(progressing('arm')?.reason).toBe('WaitingToRemovePool');
      expect(progressing('arm')?.message).toMatch(
        /once spot \(being removed\) is no longer rolling \(spec.rollout.maxConcurrentPools 1\)$/,
      );
    }

    // WHEN the deletions end and the cluster is reconciled until it settles
    h.cfn.release(SPOT);
    if (arm === 'DELETE_IN_PROGRESS') h.cfn.release(ARM);
    await h.reconcile(CLUSTER, {}, deps);

    // THEN both stacks are gone
    expect([h.cfn.peek(SPOT), h.cfn.peek(ARM)]).toEqual([undefined, undefined]);
    expect((h.status(CLUSTER).pools ?? []).map((p) => p.name)).toEqual(['system']);
  },
);

test('the shared stack waiting for a removed pool’s stack to stop importing its export does not hold that removal back', async () => {
  // GIVEN a settled cluster, and CloudFormation refusing the shared stack's update while spot's stack imports from it
  await h.reconcile(CLUSTER, {}, deps);
  const refused = fail({
    logicalId: SHARED,
    resourceType: 'AWS::CloudFormation::Stack',
    reason: `Export ${SHARED}:SecurityGroupId cannot be deleted as it is in use by ${SPOT}`,
  });
  h.cfn.setDefault(SHARED, refused);

  // WHEN spot is removed with a change to the shared stack, and the cluster reconciled, the refusal ending with spot's stack
  edit((pools) => {
    pools[0].maxSize = Number(pools[0].maxSize) + 1;
    return without('spot')(pools);
  });
  for (let i = 0; i < 40 && h.cfn.peek(SPOT); i++) {
    await h.step(CLUSTER, {}, deps);
    h.cfn.advance(5000);
  }
  const spotWhileRefused = h.cfn.peek(SPOT)?.status;
  h.cfn.setDefault(SHARED, complete());
  await h.reconcile(CLUSTER, {}, deps);

  // THEN spot's stack went while the shared stack waited for it, and then the shared stack applied
  expect(spotWhileRefused).toBeUndefined();
  expect(h.cfn.peek(SPOT)).toBeUndefined();
  expect(getCondition(h.status(CLUSTER), 'Ready')?.status).toBe('True');
  expect(h.status(CLUSTER).poolsReady).toBe('3/3');
});
