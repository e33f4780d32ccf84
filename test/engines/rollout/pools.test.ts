import { renderPools } from '../../../lib/model/cloudconfig/render';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { ClusterRecord, ClusterStore } from '../../../lib/model/ports/cluster-store';
import { memberSpec, RolloutCoordinator } from '../../../lib/engines/rollout/coordinator';
import { RolloutPolicySource } from '../../../lib/engines/rollout/policy-source';
import { fleetMember, onDesired, pendingRoll, rolling, settledSince } from '../../../lib/engines/rollout/fleet';
import { decide } from '../../../lib/engines/rollout/gate';
import { combinedChecksum } from '../../../lib/engines/rollout/pool-checksums';
import { example, rawExample, validated } from '../../helpers/clusters';
import { fleet, member, settledOnNew, T0 } from './fixtures';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../../../lib/platform/files/template-directory';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- raw objects reshaped freely

/** staging-us1 with three pools: system (on-demand), spot, and arm64; `change` reshapes the raw object first. */
function pooled(change: (raw: Json) => void = () => undefined): WorkerCluster {
  return validated(pooledRaw(change), 'clusters/staging-us1.yaml');
}

function pooledRaw(change: (raw: Json) => void = () => undefined): Json {
  const raw = rawExample('staging-us1') as Json;
  const pool = raw.spec.pool as Json;
  delete raw.spec.pool;
  raw.spec.pools = [
    { ...pool, name: 'system', labels: { 'node-role.example.com/system': 'true' } },
    {
      ...pool,
      name: 'spot',
      instanceTypes: ['m6i.large', 'm5.large'],
      capacity: { onDemandBaseCapacity: 0, onDemandPercentageAboveBaseCapacity: 0 },
    },
    {
      ...pool,
      name: 'arm',
      architecture: 'arm64',
      instanceTypes: ['m7g.large'],
      machineImage: 'ami-0a1b2c3d4e5f60718',
    },
  ];
  change(raw);
  return raw;
}

const spot = (raw: Json) => (raw.spec.pools as Json[]).find((p) => p.name === 'spot') as Json;

/** A record of the cluster with a status recorded on the given checksums (default pool: top level; others: status.pools). */
function record(
  c: WorkerCluster,
  live: Record<string, string>,
  stackStatus: Record<string, string> = {},
): ClusterRecord {
  const pools = Object.entries(live)
    .filter(([name]) => name !== 'default')
    .map(([name, checksum]) => ({
      name,
      stackName: `WorkerStack-${c.metadata.name}-Pool-${name}`,
      cloudConfigChecksum: checksum,
      stackStatus: stackStatus[name] ?? 'UPDATE_COMPLETE',
    }));
  return {
    name: c.metadata.name,
    source: `clusters/${c.metadata.name}.yaml`,
    parseProblems: [],
    generation: 1,
    resourceVersion: '1',
    status: {
      ...(live.default ? { cloudConfigChecksum: live.default } : {}),
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'UpToDate',
          message: 'ok',
          lastTransitionTime: new Date(T0 - 86_400_000).toISOString(),
          observedGeneration: 1,
        },
      ],
      // status.pools is the reconciler's (POOLS.md decision 3); the gate reads it as recorded.
      ...({ pools } as object),
    },
  };
}

const sharedStack = {
  name: 'WorkerStack-staging-us1',
  id: 'arn:stack/WorkerStack-staging-us1',
  status: 'UPDATE_COMPLETE',
  outputs: {},
};

function checksums(c: WorkerCluster): Map<string, string> {
  return new Map([...renderPools(c, defaultTemplates())].map(([name, cfg]) => [name, cfg.checksum]));
}

describe('a cluster of several pools in the fleet rollout', () => {
  const settled = pooled();
  const live = Object.fromEntries(checksums(settled));

  test('settled on every pool: no pending roll, and settled for the soak', () => {
    // GIVEN
    const configs = renderPools(settled, defaultTemplates());
    // WHEN
    const m = fleetMember(record(settled, live), memberSpec(settled, configs), undefined, sharedStack);
    // THEN
    expect(onDesired(m)).toBe(true);
    expect(pendingRoll(m)).toBe(false);
    expect(settledSince(m)).toBeDefined();
  });

  test('a label change of one pool is a pending roll of the cluster, and waits for the earlier wave', () => {
    // GIVEN the spot pool's label changes; the canary cluster has not rolled yet
    const changed = pooled((r) => (spot(r).labels = { 'example.com/spot': 'true' }));
    const configs = renderPools(changed, defaultTemplates());
    const m = { ...fleetMember(record(changed, live), memberSpec(changed, configs), undefined, sharedStack) };
    const f = fleet([member('c1', 'canary', { template: m.template }), { ...m, labels: { ring: 'early' } }]);
    // WHEN
    const d = decide(m.name, f, new Date(T0));
    // THEN
    expect(pendingRoll(m)).toBe(true);
    expect(d).toMatchObject({ go: false, reason: 'WaitingForWave' });
  });

  test('a roll of one pool in progress is the cluster rolling; the earlier wave settled lets the change go', () => {
    // GIVEN the spot pool's stack is in progress
    const changed = pooled((r) => (spot(r).labels = { 'example.com/spot': 'true' }));
    const configs = renderPools(changed, defaultTemplates());
    const busy = fleetMember(
      record(settled, live, { spot: 'UPDATE_IN_PROGRESS' }),
      memberSpec(settled, configs),
      undefined,
      sharedStack,
    );
    const m = fleetMember(record(changed, live), memberSpec(changed, configs), undefined, sharedStack);
    // WHEN
    const canary = member('c1', 'canary', { ...settledOnNew(3 * 3600_000), template: m.template });
    const d = decide(m.name, fleet([canary, { ...m, labels: { ring: 'early' } }]), new Date(T0));
    // THEN
    expect(rolling(busy)).toBe(true);
    expect(busy.poolsRolling).toEqual(['spot']);
    expect(d.go).toBe(true);
  });

  test('a pool without a recorded live config (a new pool stack) is left out of both sides', () => {
    // GIVEN only system and spot are live; arm is being created
    const configs = renderPools(settled, defaultTemplates());
    const some = { system: live.system, spot: live.spot };
    // WHEN
    const m = fleetMember(record(settled, some), memberSpec(settled, configs), undefined, sharedStack);
    // THEN
    expect(m.desired).toBe(combinedChecksum(new Map(Object.entries(some))));
    expect(onDesired(m)).toBe(true);
  });

  test('a single-pool cluster compares its own checksum, unchanged', () => {
    // GIVEN
    const c = example('staging-us1');
    // WHEN
    const m = fleetMember(record(c, { default: 'a'.repeat(64) }), memberSpec(c), 'b'.repeat(64), sharedStack);
    // THEN
    expect([m.desired, m.live]).toEqual(['b'.repeat(64), 'a'.repeat(64)]);
  });

  test.each<[string, boolean, (raw: Json) => void]>([
    ['every pool as recorded', true, () => undefined],
    ['a new label in the spot pool', false, (r) => (spot(r).labels = { 'example.com/spot': 'true' })],
  ])('the coordinator renders every pool of the object: %s → on desired = %s', async (_what, settledNow, change) => {
    // GIVEN the object (perhaps changed) in a store, its status recorded on the settled pools
    const raw = pooledRaw(change);
    const r = { ...record(settled, live), raw, contentHash: JSON.stringify(raw) };
    const store = { list: () => Promise.resolve([r]), get: () => Promise.resolve(r) } as unknown as ClusterStore;
    const policies = {
      load: () => Promise.resolve({ policies: [], problems: [] }),
      setPaused: () => Promise.resolve(),
    } satisfies RolloutPolicySource;
    const coordinator = new RolloutCoordinator({
      store,
      policies,
      stackOf: () => Promise.resolve(sharedStack),
      templatesDir: DEFAULT_TEMPLATES_DIR,
      code: 'test',
      now: () => new Date(T0),
    });
    // WHEN
    const m = (await coordinator.snapshot(true)).members.get('staging-us1');
    // THEN
    expect(m && onDesired(m)).toBe(settledNow);
    expect(m && pendingRoll(m)).toBe(!settledNow);
  });
});
