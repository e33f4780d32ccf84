import { channelWaves, formatChannelWaves } from '../../../lib/engines/channels/channel-waves';
import { rolloutReport } from '../../../lib/engines/rollout/report';
import { partDigest } from '../../../lib/engines/stacks/roll-key';
import { ChannelSpec } from '../../../lib/model/channel/channel-schema';
import { ChannelStatus, haltRelease } from '../../../lib/model/channel/channel-status';
import { KnownChannel } from '../../../lib/model/channel/image-pins';
import { ClusterRecord } from '../../../lib/model/ports/cluster-store';
import { fleet, member, T0 } from '../rollout/fixtures';

const SPEC: ChannelSpec = {
  source: { ssmParameter: '/org/al2023' },
  architecture: 'x86_64',
  owners: ['amazon'],
  skipReleases: [],
  holds: [],
};
const ami = (n: number) => `ami-0000000000000000${n}`;
const STATUS: ChannelStatus = {
  releases: [1, 2].map((n) => ({
    release: `r${n}`,
    firstSeen: '2029-12-01T00:00:00.000Z',
    images: { 'us-east-1': { imageId: ami(n) } },
  })),
  problems: [],
};

/** A cluster on the channel in ring `ring`, whose live stack runs image `runs` (by its live roll key), if any. */
function record(name: string, ring: string | undefined, runs?: number, channel = 'al2023'): ClusterRecord {
  return {
    name,
    source: `clusters/${name}.yaml`,
    raw: {
      metadata: { name, labels: ring ? { ring } : {} },
      spec: { region: 'us-east-1', pool: { imageChannel: channel } },
    },
    parseProblems: [],
    generation: 1,
    resourceVersion: '1',
    status:
      runs === undefined
        ? undefined
        : {
            conditions: [],
            controller: {
              rollKeys: {
                inputs: 'i',
                stack: 's',
                live: {
                  key: 'rk2:x',
                  parts: { 'launchTemplate.ImageId': partDigest(ami(runs)), 'launchTemplate.UserData': 'u' },
                },
              },
            },
          },
  };
}

/** c1 in the canary ring, e1 and e2 early, r1 in the remainder (the fixtures' policy). */
function report(records: ClusterRecord[], channel: Partial<KnownChannel> = {}) {
  const f = fleet(
    records.map((r) => member(r.name, (r.raw as { metadata: { labels: { ring?: string } } }).metadata.labels.ring)),
  );
  const known: KnownChannel = { name: 'al2023', spec: SPEC, status: STATUS, ...channel };
  return channelWaves(f, rolloutReport(f, new Date(T0)), records, [known]);
}

test('per wave, in rollout order: who runs the pin, who waits for it and why, who has not been read', () => {
  // GIVEN the canary on r2, one early cluster still on r1, one never reconciled, and one in the remainder on r1
  const records = [
    record('e1', 'early', 1),
    record('c1', 'canary', 2),
    record('e2', 'early'),
    record('r1', undefined, 1),
  ];
  // WHEN the channel's waves are reported
  const [c] = report(records);
  // THEN the waves come in the policy's order with each cluster's state
  expect(c.newest).toBe('r2');
  expect(
    c.waves.map((w) => [w.wave, w.clusters.map((l) => `${l.cluster}:${l.state}:${l.runs ?? '-'}->${l.pinned}`)]),
  ).toEqual([
    ['canary', ['c1:runs:r2->r2']],
    ['early', ['e1:waits:r1->r2', 'e2:unknown:-->r2']],
    ['remainder', ['r1:waits:r1->r2']],
  ]);
  // AND a waiting cluster says why, as rollout status does for the policy
  expect(c.waves[1].clusters[0].why).toMatch(/^(waiting|next|halted)/);
  expect(formatChannelWaves(report(records))).toMatch(
    /channel al2023: newest release r2\n {2}wave canary \(policy fleet\): 1 run r2\n {2}wave early \(policy fleet\): 1 wait for r2, 1 pinned to r2, not read yet\n {4}e1: runs r1, waits for r2: /,
  );
});

test.each<[string, Partial<KnownChannel>, string[]]>([
  [
    'a wave held at r1 runs its pin',
    { spec: { ...SPEC, holds: [{ release: 'r1', selector: { matchLabels: { ring: 'early' } } }] } },
    ['e1:runs:r1:spec.holds[0]'],
  ],
  [
    'promoted by hand to r1: the whole channel is pinned to r1',
    { spec: { ...SPEC, promotedRelease: 'r1' } },
    ['e1:runs:r1:-'],
  ],
  ['a halted r2: pinned back to r1', { status: haltRelease(STATUS, 'r2', 'canary failed', 'now') }, ['e1:runs:r1:-']],
])('%s', (_what, channel, expected) => {
  // GIVEN an early cluster on r1
  // WHEN reported with the channel's ceiling
  const [c] = report([record('e1', 'early', 1)], channel);
  // THEN it runs its pin (and says what holds it)
  expect(
    c.waves.flatMap((w) => w.clusters.map((l) => `${l.cluster}:${l.state}:${l.pinned}:${l.heldBy ?? '-'}`)),
  ).toEqual(expected);
});

test('a cluster whose pin is refused shows the reason; a channel no cluster names is not reported', () => {
  // GIVEN a cluster held at a release never recorded, and a second channel no one names
  const spec = { ...SPEC, holds: [{ release: 'r9', clusters: ['e1'] }] };
  const f = fleet([member('e1', 'early')]);
  const records = [record('e1', 'early', 1)];
  const channels: KnownChannel[] = [
    { name: 'al2023', spec, status: STATUS },
    { name: 'unused', spec: SPEC, status: STATUS },
  ];
  // WHEN reported
  const out = channelWaves(f, rolloutReport(f, new Date(T0)), records, channels);
  // THEN only the named channel, its cluster unpinned with the rule's message
  expect(out.map((c) => c.channel)).toEqual(['al2023']);
  expect(out[0].waves[0].clusters[0]).toMatchObject({
    state: 'unpinned',
    runs: 'r1',
    why: expect.stringMatching(/rule channel-holds/),
  });
});
