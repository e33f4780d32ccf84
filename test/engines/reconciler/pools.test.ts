import * as fs from 'node:fs';
import { getCondition, PoolStatus } from '../../../lib/model/cluster/schema/status';
import { poolStackName, workerStackName } from '../../../lib/core/naming';
import { ReconcilerDeps } from '../../../lib/engines/reconciler/workflow/context';
import { Controller } from '../../../lib/engines/reconciler/runtime/controller';
import { DerivedCache } from '../../../lib/model/cluster/derived-cache';
import { ClusterStore } from '../../../lib/model/ports/cluster-store';
import { STACK_FINALIZER } from '../../../lib/platform/kube/resource';
import { fail, stuck } from '../../fakes/fake-cloudformation';
import { Harness, LAUNCH_TEMPLATE_FAILURE } from '../../fakes/harness';
import { Json } from '../../helpers/json';
import { SimPublisher, simSynthesizer } from '../../sim/sim-synth';

/**
 * A cluster with pools in stacks of their own (issue 23): the workflow runs once per stack, the shared stack first;
 * each pool's stack has its own checksum, inputs, failures and conditions (status.pools[]), rolls on its own, and
 * never holds another back; the top level says Ready only when every stack is.
 */

const CLUSTER = 'pools-us1';
const SHARED = workerStackName(CLUSTER);
const SYSTEM = poolStackName(CLUSTER, 'system');
const SPOT = poolStackName(CLUSTER, 'spot');

let h: Harness;
let deps: ReconcilerDeps;
beforeEach(() => {
  h = new Harness({ clusters: [] });
  h.addCluster(CLUSTER, (raw) => {
    const spec: Json = raw.spec;
    const pool: Json = spec.pool;
    delete spec.pool;
    spec.pools = [
      { ...pool, name: 'system' },
      { ...pool, name: 'spot', labels: { 'node.example.com/spot': 'true' } },
    ];
  });
  // The simulator's synthesis: one template per stack (SynthesizeOptions.stackName), with its pool's checksum.
  const publisher = new SimPublisher();
  deps = h.deps({ synthesizer: simSynthesizer, aws: () => ({ cfn: h.cfn, publisher }) });
});
afterEach(() => h.cleanup());

const pool = (name: string): PoolStatus | undefined => h.status(CLUSTER).pools?.find((p) => p.name === name);
const ready = (p: { conditions: PoolStatus['conditions'] } | undefined) =>
  p && getCondition({ conditions: p.conditions }, 'Ready')?.status;
const setPool = (name: string, mutate: (p: Json) => void) =>
  h.edit(CLUSTER, (raw) => {
    const pools: Json[] = raw.spec.pools;
    mutate(pools.find((p) => p.name === name));
  });

test('every stack of the cluster is created, the shared one first, and each records the checksum its own stack reports', async () => {
  // GIVEN a new cluster with two pools (system, spot), neither named default

  // WHEN it is reconciled until it settles
  const outcome = await h.reconcile(CLUSTER, {}, deps);

  // THEN three stacks exist, each carrying the config its unit recorded, and every unit is Ready
  expect(outcome.result).toBe('applied');
  const s = h.status(CLUSTER);
  expect(s.stackName).toBe(SHARED);
  expect(s.cloudConfigChecksum).toBe(h.cfn.peek(SHARED)?.outputs.ConfigChecksum);
  expect(
    (s.pools ?? []).map((p) => ({
      name: p.name,
      stackName: p.stackName,
      live: p.cloudConfigChecksum === h.cfn.peek(p.stackName)?.outputs.ConfigChecksum,
      desired: p.desiredChecksum === p.cloudConfigChecksum,
      ready: ready(p),
      observedGeneration: p.observedGeneration,
    })),
  ).toEqual([
    { name: 'system', stackName: SYSTEM, live: true, desired: true, ready: 'True', observedGeneration: 1 },
    { name: 'spot', stackName: SPOT, live: true, desired: true, ready: 'True', observedGeneration: 1 },
  ]);
  // AND each pool has its own config (spot's labels are its own), and the cluster is Ready with 3/3
  expect(pool('system')?.cloudConfigChecksum).not.toBe(pool('spot')?.cloudConfigChecksum);
  expect({ ready: ready(s), poolsReady: s.poolsReady }).toEqual({ ready: 'True', poolsReady: '3/3' });
});

test("no status write says the cluster Ready while a pool is not, not even the one before a pool's ExecuteChangeSet", async () => {
  // GIVEN a new cluster with pools, and every status write watched
  const writes = jest.spyOn(deps.store, 'writeStatus');

  // WHEN it is reconciled until it settles (the shared stack, then each pool's stack created)
  await h.reconcile(CLUSTER, {}, deps);

  // THEN each write with the top level Ready=True has every pool Ready=True
  const written = writes.mock.calls.map((c) => c[1]);
  const readyTop = written.filter((s) => getCondition(s, 'Ready')?.status === 'True');
  expect(readyTop.length).toBeGreaterThan(0);
  for (const s of readyTop)
    expect(['system', 'spot'].map((p) => ready(s.pools?.find((x) => x.name === p)))).toEqual(['True', 'True']);
  // AND the write before each pool's execution says which pool the cluster waits for, with the shared stack complete
  const beforeSpot = written.find(
    (s) =>
      getCondition({ conditions: s.pools?.find((x) => x.name === 'spot')?.conditions ?? [] }, 'Ready')?.reason ===
      'ChangeSetExecuting',
  );
  expect(beforeSpot?.stackStatus).toBe('CREATE_COMPLETE');
  expect(getCondition(beforeSpot, 'Ready')).toMatchObject({ status: 'False', reason: 'PoolsNotReady' });
  expect(getCondition(beforeSpot, 'Ready')?.message).toMatch(/spot \(ChangeSetExecuting\)/);
});

test('the pools wait for the shared stack while it is created (their stacks import its values)', async () => {
  // GIVEN a new cluster with pools

  // WHEN it is reconciled once
  const outcome = await h.step(CLUSTER, {}, deps);

  // THEN the shared stack is being created and each pool says it waits for it, without touching its own stack
  expect(outcome.result).toBe('waiting');
  expect(h.cfn.peek(SHARED)?.status).toBe('CREATE_IN_PROGRESS');
  expect(h.cfn.peek(SYSTEM)).toBeUndefined();
  expect(h.cfn.peek(SPOT)).toBeUndefined();
  expect(
    ['system', 'spot'].map((p) => getCondition({ conditions: pool(p)?.conditions ?? [] }, 'Progressing')?.reason),
  ).toEqual(['WaitingForSharedStack', 'WaitingForSharedStack']);
  expect(h.status(CLUSTER).poolsReady).toBe('0/3');
});

test.each([
  ["spot's labels", 'spot', (p: Json) => (p.labels = { 'node.example.com/spot': 'yes' }), [SPOT]],
  [
    "system's labels (the shared stack reports the first pool's config)",
    'system',
    (p: Json) => (p.labels = { tier: 'system' }),
    [SHARED, SYSTEM],
  ],
] as const)('a change to %s rolls that pool only', async (_what, name, mutate, rolled) => {
  // GIVEN a settled cluster with pools
  await h.reconcile(CLUSTER, {}, deps);
  const before = Object.fromEntries(
    [SHARED, SYSTEM, SPOT].map((n) => [n, h.cfn.peek(n)?.outputs.ConfigChecksum] as const),
  );

  // WHEN one pool's labels change and the cluster is reconciled
  setPool(name, mutate);
  const outcome = await h.reconcile(CLUSTER, {}, deps);

  // THEN only the stacks carrying that pool's config carry a new checksum
  expect(outcome.result).toBe('applied');
  const changed = [SHARED, SYSTEM, SPOT].filter((n) => h.cfn.peek(n)?.outputs.ConfigChecksum !== before[n]);
  expect(changed).toEqual([...rolled]);
  expect(h.status(CLUSTER).poolsReady).toBe('3/3');
});

test.each([
  // maxConcurrentPools, the system pool's edit, whether its stack starts while spot rolls, the edit
  [1, 'maxSize (no roll)', true, (p: Json): void => void (p.maxSize = 6)],
  [1, 'labels (a roll)', false, (p: Json): void => void (p.labels = { tier: 'system' })],
  [2, 'labels (a roll)', true, (p: Json): void => void (p.labels = { tier: 'system' })],
] as const)(
  'spot rolling, maxConcurrentPools %s: an edit of the system pool (%s) starts at once: %s',
  async (max, _what, starts, mutate) => {
    // GIVEN a settled cluster whose spot pool is rolling (its update does not end)
    await h.reconcile(CLUSTER, {}, deps);
    h.edit(CLUSTER, (raw) => {
      raw.spec.rollout = { ...raw.spec.rollout, maxConcurrentPools: max };
    });
    await h.reconcile(CLUSTER, {}, deps);
    h.cfn.script(SPOT, stuck());
    setPool('spot', (p) => (p.labels = { 'node.example.com/spot': 'yes' }));
    await h.step(CLUSTER, {}, deps);
    expect(h.cfn.peek(SPOT)?.status).toBe('UPDATE_IN_PROGRESS');

    // WHEN the system pool is edited and the cluster reconciled once
    setPool('system', mutate);
    const outcome = await h.step(CLUSTER, {}, deps);

    // THEN the system pool's stack starts now or waits, as the bound says; spot goes on rolling either way
    expect(outcome.result).toBe('waiting');
    expect(h.cfn.peek(SYSTEM)?.status).toBe(starts ? 'UPDATE_IN_PROGRESS' : 'CREATE_COMPLETE');
    expect(getCondition({ conditions: pool('system')?.conditions ?? [] }, 'Progressing')?.reason).toBe(
      starts ? 'ChangeSetExecuting' : 'WaitingForPools',
    );
    expect(h.cfn.peek(SPOT)?.status).toBe('UPDATE_IN_PROGRESS');
  },
);

test('a failing pool: its failure is its own; the other pool applies, and the cluster is not Ready, naming it', async () => {
  // GIVEN a settled cluster, and a spot update that rolls back
  await h.reconcile(CLUSTER, {}, deps);
  h.cfn.script(SPOT, fail(LAUNCH_TEMPLATE_FAILURE));

  // WHEN both pools are edited and the cluster reconciled until it settles
  setPool('spot', (p) => (p.labels = { 'node.example.com/spot': 'yes' }));
  setPool('system', (p) => (p.maxSize = 6));
  await h.reconcile(CLUSTER, {}, deps);

  // THEN spot counts its own failure (Degraded, rolled back), the system pool and the shared stack are Ready
  const spot = pool('spot');
  expect({
    failures: spot?.controller?.failures,
    degraded: getCondition({ conditions: spot?.conditions ?? [] }, 'Degraded')?.reason,
    system: ready(pool('system')),
    systemFailures: pool('system')?.controller?.failures ?? 0,
    sharedFailures: h.status(CLUSTER).controller?.failures ?? 0,
  }).toEqual({ failures: 1, degraded: 'UpdateRolledBack', system: 'True', systemFailures: 0, sharedFailures: 0 });
  expect(h.cfn.peek(SYSTEM)?.status).toBe('UPDATE_COMPLETE');
  // AND the top level says which pool is not Ready
  const top = getCondition(h.status(CLUSTER), 'Ready');
  expect({ status: top?.status, reason: top?.reason, poolsReady: h.status(CLUSTER).poolsReady }).toEqual({
    status: 'False',
    reason: 'PoolsNotReady',
    poolsReady: '2/3',
  });
  expect(top?.message).toContain('spot (');
});

test("CloudFormation's refusal to remove an export still imported is a wait, not a failure", async () => {
  // GIVEN a settled cluster, and a shared-stack update that CloudFormation refuses because a pool imports an export
  await h.reconcile(CLUSTER, {}, deps);
  h.cfn.script(
    SHARED,
    fail({
      logicalId: SHARED,
      resourceType: 'AWS::CloudFormation::Stack',
      reason: `Export ${SHARED}:SecurityGroupId cannot be deleted as it is in use by ${SPOT}`,
    }),
  );

  // WHEN the shared stack is changed and its update ends refused
  setPool('system', (p) => (p.labels = { tier: 'system' }));
  await h.step(CLUSTER, {}, deps);
  h.cfn.advance(5000);
  const outcome = await h.step(CLUSTER, {}, deps);

  // THEN nothing is counted as a failure: the shared stack waits for the others, and tries again after a backoff
  const s = h.status(CLUSTER);
  expect({
    result: outcome.result,
    failures: s.controller?.failures ?? 0,
    progressing: getCondition(s, 'Progressing')?.reason,
    degraded: getCondition(s, 'Degraded')?.status,
  }).toEqual({ result: 'waiting', failures: 0, progressing: 'WaitingForImports', degraded: 'False' });
});

test('a single-pool object keeps its status as before: no pools, no poolsReady', async () => {
  // GIVEN the example's single-pool object
  const single = new Harness();
  try {
    // WHEN it is reconciled until it settles
    await single.reconcile();

    // THEN its status has none of the pools' fields
    expect(Object.keys(single.status())).not.toEqual(expect.arrayContaining(['pools']));
    expect(single.status().poolsReady).toBeUndefined();
  } finally {
    single.cleanup();
  }
});

/** A store that shows the object deleted, with the stack finalizer held until the reconciler removes it. */
function deleting(inner: ClusterStore, removed: string[]): ClusterStore {
  return {
    ...inner,
    list: () => inner.list(),
    get: async (n) => {
      const r = await inner.get(n);
      return r && { ...r, finalizers: removed.length ? [] : [STACK_FINALIZER], deletionRequested: true };
    },
    writeStatus: (n, s, v) => inner.writeStatus(n, s, v),
    setFinalizer: (_n, f, present) => {
      if (!present) removed.push(f);
      return Promise.resolve();
    },
  };
}

test('Delete: the pools’ own stacks are deleted first, then the shared stack, then the finalizer goes', async () => {
  // GIVEN a settled cluster with pools and spec.deletionPolicy Delete
  h.edit(CLUSTER, (raw) => (raw.spec.deletionPolicy = 'Delete'));
  await h.reconcile(CLUSTER, {}, deps);
  const removed: string[] = [];
  const gone = { ...deps, store: deleting(deps.store, removed) };

  // WHEN the object is deleted and reconciled once
  const first = await h.step(CLUSTER, {}, gone);

  // THEN the first pool's stack is being deleted, the shared stack is not touched yet
  expect(first.result).toBe('waiting');
  expect([SYSTEM, SPOT, SHARED].map((n) => h.cfn.peek(n)?.status)).toEqual([
    'DELETE_IN_PROGRESS',
    'CREATE_COMPLETE',
    'CREATE_COMPLETE',
  ]);

  // WHEN reconciled until it settles
  const last = await h.reconcile(CLUSTER, {}, gone);

  // THEN every stack is gone, the shared one last, and the finalizer is removed
  expect(last.result).toBe('deleted');
  expect([SYSTEM, SPOT, SHARED].map((n) => h.cfn.peek(n))).toEqual([undefined, undefined, undefined]);
  expect(removed).toEqual([STACK_FINALIZER]);
});

test('--concurrency counts stacks: with one slot, one pool rolls and the other waits for the slot; every slot goes back', async () => {
  // GIVEN a settled cluster whose pools may both roll at once (maxConcurrentPools 2), and a controller with one slot
  h.edit(CLUSTER, (raw) => (raw.spec.rollout = { ...raw.spec.rollout, maxConcurrentPools: 2 }));
  await h.reconcile(CLUSTER, {}, deps);
  const controller = new Controller(deps, { concurrency: 1 });

  // WHEN both pools' labels change and the controller makes one pass
  setPool('system', (p) => (p.labels = { tier: 'system' }));
  setPool('spot', (p) => (p.labels = { 'node.example.com/spot': 'yes' }));
  h.cfn.script(SYSTEM, stuck());
  h.cfn.script(SHARED, stuck());
  await controller.runPass();

  // THEN one stack holds the one slot (the shared stack, first), and the pools wait for it
  expect(controller.slots.names()).toEqual(new Set([CLUSTER]));
  expect(
    ['system', 'spot'].map((p) => getCondition({ conditions: pool(p)?.conditions ?? [] }, 'Progressing')?.reason),
  ).toEqual(['WaitingForSlot', 'WaitingForSlot']);

  // WHEN the shared stack's update ends, and the controller passes again
  h.cfn.release(SHARED);
  await controller.runPass();

  // THEN the system pool's stack has the slot (keyed cluster/pool), spot still waits
  expect(controller.slots.names()).toEqual(new Set([`${CLUSTER}/system`]));
  expect(h.cfn.peek(SPOT)?.status).toBe('CREATE_COMPLETE');

  // WHEN the system pool's roll ends and the controller runs until the cluster settles
  h.cfn.release(SYSTEM);
  await controller.runUntilSettled({
    deadlineMs: 60_000,
    now: () => h.clock.ms,
    sleep: (ms) => {
      h.cfn.advance(ms);
      return Promise.resolve();
    },
  });

  // THEN every stack is on its config and no slot is held
  expect(h.status(CLUSTER).poolsReady).toBe('3/3');
  expect(controller.slots.size).toBe(0);
});

test('a pool removed from the object: its own stack is deleted, its entry goes, and no other stack is touched', async () => {
  // GIVEN a settled cluster with pools system and spot
  await h.reconcile(CLUSTER, {}, deps);
  const before = [SHARED, SYSTEM].map((n) => h.cfn.peek(n)?.lastUpdated);

  // WHEN spot is removed from the object and the cluster is reconciled until it settles
  h.edit(CLUSTER, (raw) => {
    const pools: Json[] = raw.spec.pools;
    raw.spec.pools = pools.filter((p) => p.name !== 'spot');
  });
  const outcome = await h.reconcile(CLUSTER, {}, deps);

  // THEN spot's stack is gone and so is its entry; the shared and system stacks were not updated
  expect(outcome.result).toBe('unchanged');
  expect(h.cfn.peek(SPOT)).toBeUndefined();
  expect((h.status(CLUSTER).pools ?? []).map((p) => p.name)).toEqual(['system']);
  expect([SHARED, SYSTEM].map((n) => h.cfn.peek(n)?.lastUpdated)).toEqual(before);
  expect(h.status(CLUSTER).poolsReady).toBe('2/2');
});

test("an invalid edit of a cluster with pools keeps every pool's entry and the n/m as they were", async () => {
  // GIVEN a settled cluster with pools
  await h.reconcile(CLUSTER, {}, deps);
  const before = h.status(CLUSTER);

  // WHEN its pools are made unreadable (not a list) and it is reconciled
  h.edit(CLUSTER, (raw) => (raw.spec.pools = 'system, spot'));
  const outcome = await h.step(CLUSTER, {}, deps);

  // THEN it is invalid, and what is recorded of each pool is left alone
  expect(outcome.result).toBe('invalid');
  expect({ pools: h.status(CLUSTER).pools, poolsReady: h.status(CLUSTER).poolsReady }).toEqual({
    pools: before.pools,
    poolsReady: '3/3',
  });
});

test('an unchanged cluster with pools: a second pass of the daemon writes nothing, synthesizes nothing, and lists once', async () => {
  // GIVEN a cluster with pools applied by a daemon (its derived cache lives as long as the process)
  const daemon = { ...deps, derived: new DerivedCache() };
  await h.pass({}, daemon);
  const writes = h.statusWrites;
  h.cfn.resetCalls();
  let synths = 0;
  const counting = {
    ...daemon,
    synthesizer: (c: Parameters<typeof simSynthesizer>[0], o: Parameters<typeof simSynthesizer>[1]) => {
      synths++;
      return simSynthesizer(c, o);
    },
  };

  // WHEN the same process passes again
  const { outcomes } = await h.pass({}, counting);

  // THEN every stack is unchanged from the one listing: no write, no synthesis, no change set, no describe
  expect(outcomes.get(CLUSTER)?.result).toBe('unchanged');
  expect({
    writes: h.statusWrites - writes,
    synths,
    changeSets: h.cfn.count('createChangeSet'),
    describes: h.cfn.count('describeStack'),
    listings: h.cfn.count('listStacks'),
  }).toEqual({ writes: 0, synths: 0, changeSets: 0, describes: 0, listings: 1 });
});

test('a pool that stopped (its retries spent): the top level is Stalled too, with its reason, naming the pool', async () => {
  // GIVEN a settled cluster, one attempt per input, and a spot update that rolls back
  await h.reconcile(CLUSTER, {}, deps);
  const once = { ...deps, maxUpdateAttempts: 1 };
  h.cfn.script(SPOT, fail(LAUNCH_TEMPLATE_FAILURE));

  // WHEN spot is edited and the cluster reconciled until it settles
  setPool('spot', (p) => (p.labels = { 'node.example.com/spot': 'yes' }));
  await h.reconcile(CLUSTER, {}, once);

  // THEN spot is Stalled, and so is the top level, with spot's reason and a message naming it
  expect(getCondition({ conditions: pool('spot')?.conditions ?? [] }, 'Stalled')?.status).toBe('True');
  const top = getCondition(h.status(CLUSTER), 'Stalled');
  expect({ status: top?.status, reason: top?.reason }).toEqual({ status: 'True', reason: 'UpdateFailed' });
  expect(top?.message).toMatch(/^pool spot: /);
  // AND another pass changes nothing (the same words, the same time of transition)
  const writes = h.statusWrites;
  await h.step(CLUSTER, {}, once);
  expect(h.statusWrites).toBe(writes);
});

test("each stack's assembly is removed once published: a pool's stack leaves nothing in the work dir either", async () => {
  // GIVEN the cluster with pools, synthesized by the real CDK synthesis (each stack's assembly in the work dir)
  const real = h.deps();

  // WHEN it is reconciled until it settles
  expect((await h.reconcile(CLUSTER, {}, real)).result).toBe('applied');

  // THEN no assembly is left behind, neither the shared stack's nor a pool's (the work dir may be memory)
  expect(fs.existsSync(real.workDir) ? fs.readdirSync(real.workDir) : []).toEqual([]);
});
