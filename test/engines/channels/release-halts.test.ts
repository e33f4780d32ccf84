import { haltFailedReleases } from '../../../lib/engines/channels/release-halts';
import { ChannelSpec } from '../../../lib/model/channel/channel-schema';
import { ChannelStatus, resumeRelease } from '../../../lib/model/channel/channel-status';
import { ClusterRecord } from '../../../lib/model/ports/cluster-store';

const SPEC: ChannelSpec = {
  source: { ssmParameter: '/org/x' },
  architecture: 'x86_64',
  owners: ['amazon'],
  skipReleases: [],
  holds: [],
};
const image = (n: number) => ({ 'us-east-1': { imageId: `ami-0000000000000000${n}` } });
const STATUS: ChannelStatus = {
  releases: [
    { release: 'r1', firstSeen: '2026-11-01T00:00:00.000Z', images: image(1) },
    { release: 'r2', firstSeen: '2026-11-20T00:00:00.000Z', images: image(2) },
  ],
  problems: [],
};

function cluster(
  name: string,
  condition?: { type: string; reason: string; at: string },
  pendingRoll = 'image',
): ClusterRecord {
  return {
    name,
    source: `clusters/${name}.yaml`,
    raw: { spec: { region: 'us-east-1', pool: { imageChannel: 'c' } } },
    parseProblems: [],
    generation: 1,
    resourceVersion: '1',
    status: condition && {
      pendingRoll,
      conditions: [
        {
          type: condition.type,
          status: 'True',
          reason: condition.reason,
          message: 'stack UPDATE_ROLLBACK_COMPLETE',
          lastTransitionTime: condition.at,
          observedGeneration: 1,
        },
      ],
    },
  } as ClusterRecord;
}

const NOW = '2026-11-21T00:00:00.000Z';
const halts = (status: ChannelStatus, ...records: ClusterRecord[]) =>
  haltFailedReleases({ name: 'c', spec: SPEC, status }, status, records, NOW);

test.each([
  [
    'a roll that failed after the release appeared halts it',
    cluster('canary', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-20T01:00:00.000Z' }),
    ['r2 (canary)'],
  ],
  [
    'a failure before the release appeared halts the release pinned then',
    cluster('canary', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-19T00:00:00.000Z' }),
    ['r1 (canary)'],
  ],
  [
    'a failed roll of a config alone does not',
    cluster('canary', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-20T01:00:00.000Z' }, 'config'),
    [],
  ],
  [
    'a Degraded roll failure halts it too',
    cluster('canary', { type: 'Degraded', reason: 'UpdateFailed', at: '2026-11-20T01:00:00.000Z' }),
    ['r2 (canary)'],
  ],
  [
    'a stall that is not a failed roll does not',
    cluster('canary', { type: 'Stalled', reason: 'InvalidSpec', at: '2026-11-20T01:00:00.000Z' }),
    [],
  ],
  ['a cluster at rest does not', cluster('canary'), []],
])('%s', (_what, record, expected) => {
  // WHEN the failures of the channel's clusters are read
  const r = halts(STATUS, record);
  // THEN the release the cluster was pinned to when it failed is halted, with the cluster and why
  expect(r.halted).toEqual(expected);
  for (const h of expected)
    expect(r.status.releases.find((x) => x.release === h.split(' ')[0])?.halted).toEqual({
      at: NOW,
      reason: expect.stringMatching(/^the roll of canary to it failed: (Stalled|Degraded) Update/),
    });
});

test('a halt does not cascade: the failure that halted r2 never halts r1, which the clusters go back to', () => {
  // GIVEN r2 halted by a canary's failure
  const failed = cluster('canary', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-20T01:00:00.000Z' });
  const once = halts(STATUS, failed).status;
  // WHEN the same evidence is read again (the next pass, or a restarted daemon)
  const again = halts(once, failed);
  // THEN nothing more is halted: r1 stays the pin
  expect(again.halted).toEqual([]);
  expect(again.status.releases[0].halted).toBeUndefined();
});

test('a resumed release is halted again only by a failure after the resume', () => {
  // GIVEN r2 halted, then resumed by an operator at 12:00
  const failed = cluster('canary', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-20T01:00:00.000Z' });
  const resumed = resumeRelease(halts(STATUS, failed).status, 'r2', '2026-11-20T12:00:00.000Z')!;
  // WHEN the old failure is read, then a new one
  const old = halts(resumed, failed);
  const anew = halts(
    resumed,
    cluster('early', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-20T13:00:00.000Z' }),
  );
  // THEN only the new failure halts it
  expect(old.halted).toEqual([]);
  expect(anew.halted).toEqual(['r2 (early)']);
});

test('a held cluster whose roll failed halts the release it is held at, not the newest', () => {
  // GIVEN a cluster held at r1 by name, whose image roll failed after r2 appeared
  const held = cluster('prod', { type: 'Stalled', reason: 'UpdateRolledBack', at: '2026-11-20T01:00:00.000Z' });
  (held.raw as { metadata?: unknown }).metadata = { name: 'prod' };
  const spec = { ...SPEC, holds: [{ release: 'r1', clusters: ['prod'] }] };
  // WHEN the halts are read
  const r = haltFailedReleases({ name: 'c', spec, status: STATUS }, STATUS, [held], NOW);
  // THEN r1 is halted (the roll went to it), r2 is not
  expect(r.halted).toEqual(['r1 (prod)']);
  expect(r.status.releases.map((x) => [x.release, x.halted !== undefined])).toEqual([
    ['r1', true],
    ['r2', false],
  ]);
});

test.each([
  {
    what: "a stack whose image roll rolled back and retries it (the cluster's conditions about another stack)",
    unit: { stackStatus: 'UPDATE_ROLLBACK_COMPLETE', failures: 1, pendingRoll: 'image' },
    halted: ['r2 (canary)'],
  },
  {
    what: 'a pool stack so',
    unit: { stackStatus: 'UPDATE_ROLLBACK_COMPLETE', failures: 1, pendingRoll: 'image', pool: true },
    halted: ['r2 (canary)'],
  },
  {
    what: 'an image roll during a worker-stacks upgrade (its cause names the release first)',
    unit: {
      stackStatus: 'UPDATE_ROLLBACK_COMPLETE',
      failures: 1,
      pendingRoll: 'release 0.1.0 → 0.2.0: image, launch template',
    },
    halted: ['r2 (canary)'],
  },
  {
    what: 'a rolled-back stack with no failure counted (rolled back by someone else)',
    unit: { stackStatus: 'UPDATE_ROLLBACK_COMPLETE', failures: 0, pendingRoll: 'image' },
    halted: [],
  },
  {
    what: 'a failed roll of its config alone',
    unit: { stackStatus: 'UPDATE_ROLLBACK_COMPLETE', failures: 1, pendingRoll: 'config' },
    halted: [],
  },
  {
    what: 'a stack that completed',
    unit: { stackStatus: 'UPDATE_COMPLETE', failures: 1, pendingRoll: 'image' },
    halted: [],
  },
])('$what: halts $halted', ({ unit, halted }) => {
  // GIVEN the canary's stack facts, its roll started after r2 appeared, its conditions speaking of something else
  const facts = {
    stackStatus: unit.stackStatus,
    pendingRoll: unit.pendingRoll,
    lastConfigChangeTime: '2026-11-20T01:00:00.000Z',
    controller: { failures: unit.failures },
  };
  const record = cluster('canary', { type: 'Stalled', reason: 'DeleteFailed', at: '2026-11-20T02:00:00.000Z' });
  const status = record.status as unknown as Record<string, unknown>;
  const withFacts = {
    ...record,
    status: unit.pool
      ? { ...status, pendingRoll: undefined, pools: [{ name: 'spot', stackName: 'p', conditions: [], ...facts }] }
      : { ...status, ...facts },
  } as ClusterRecord;
  // WHEN the failures of the channel's clusters are read  THEN the release rolled to is halted (or none)
  expect(halts(STATUS, withFacts).halted).toEqual(halted);
});
