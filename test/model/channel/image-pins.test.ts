import { rawExample, TEMPLATES } from '../../helpers/clusters';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { ChannelSpec } from '../../../lib/model/channel/channel-schema';
import { ChannelStatus, haltRelease, recordRelease } from '../../../lib/model/channel/channel-status';
import { imageResolver, KnownChannel, pickRelease, pinsKey } from '../../../lib/model/channel/image-pins';

const SPEC: ChannelSpec = {
  source: {
    ssmParameter: '/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id',
  },
  architecture: 'x86_64',
  owners: ['amazon'],
  skipReleases: [],
  holds: [],
};

function statusOf(...releases: [string, string, string][]): ChannelStatus {
  let s: ChannelStatus = { releases: [], problems: [] };
  releases.forEach(([release, region, imageId], i) => {
    s = recordRelease(s, release, region, { imageId }, `2026-11-2${i}T00:00:00.000Z`);
  });
  return s;
}

const R1 = ['al2023-v20261101', 'us-east-1', 'ami-00000000000000001'] as [string, string, string];
const R2 = ['al2023-v20261120', 'us-east-1', 'ami-00000000000000002'] as [string, string, string];

describe('pickRelease', () => {
  test.each([
    ['the newest release', statusOf(R1, R2), [], 'al2023-v20261120'],
    ['the one before a skipped release', statusOf(R1, R2), ['al2023-v20261120'], 'al2023-v20261101'],
    ['the one before a halted release', haltRelease(statusOf(R1, R2), R2[0], 'canary failed', 'now'), [], R1[0]],
    ['none when the only release is skipped', statusOf(R1), [R1[0]], undefined],
    ['none in a region without an image', statusOf(['x', 'eu-west-1', 'ami-00000000000000003']), [], undefined],
  ])('%s', (_what, status, skipReleases, expected) => {
    // GIVEN a channel with releases recorded
    const channel: KnownChannel = { name: 'al2023', spec: { ...SPEC, skipReleases }, status };
    // WHEN the release for us-east-1 is picked
    const picked = pickRelease(channel, 'us-east-1');
    // THEN it is the newest one neither skipped nor halted
    expect(picked?.release).toBe(expected);
  });

  test('a list channel pins only a release still listed', () => {
    // GIVEN a list channel whose newest recorded release was removed from the list
    const spec: ChannelSpec = {
      ...SPEC,
      source: { images: [{ release: R1[0], imageIds: { 'us-east-1': R1[2] } }] },
    };
    // WHEN the release is picked
    const picked = pickRelease({ name: 'own', spec, status: statusOf(R1, R2) }, 'us-east-1');
    // THEN the listed one is pinned
    expect(picked?.release).toBe(R1[0]);
  });
});

describe('holds and promotion: a ceiling on the release a cluster runs', () => {
  const R3 = ['al2023-v20261127', 'us-east-1', 'ami-00000000000000003'] as [string, string, string];
  const status = statusOf(R1, R2, R3);
  const canary = { name: 'canary-us1', labels: { wave: 'canary' } };
  const late = { name: 'prod-us1', labels: { wave: 'late' } };
  const held = (release: string) => ({ release, selector: { matchLabels: { wave: 'late' } } });
  test.each([
    ['no ceiling: the newest', {}, late, R3[0]],
    ['promoted by hand: that release', { promotedRelease: R2[0] }, late, R2[0]],
    ['promoted to a skipped release: the one before', { promotedRelease: R2[0], skipReleases: [R2[0]] }, late, R1[0]],
    ['a wave held by its selector', { holds: [held(R1[0])] }, late, R1[0]],
    [
      'a cluster the hold does not select: the promotion',
      { holds: [held(R1[0])], promotedRelease: R2[0] },
      canary,
      R2[0],
    ],
    ['a cluster held by name', { holds: [{ release: R2[0], clusters: ['canary-us1'] }] }, canary, R2[0]],
    [
      'the first hold that selects applies',
      { holds: [held(R1[0]), { release: R2[0], clusters: ['prod-us1'] }] },
      late,
      R1[0],
    ],
    ['a hold above the promotion: the hold', { holds: [held(R3[0])], promotedRelease: R1[0] }, late, R3[0]],
    ['a hold on a release not recorded: none', { holds: [held('al2023-v20990101')] }, late, undefined],
    [
      'no cluster named (a fleet-wide read): the promotion',
      { holds: [held(R1[0])], promotedRelease: R2[0] },
      undefined,
      R2[0],
    ],
  ])('%s', (_what, fields, cluster, expected) => {
    // GIVEN a channel of three releases whose spec caps some clusters
    const channel: KnownChannel = { name: 'al2023', spec: { ...SPEC, ...fields }, status };
    // WHEN the release of the cluster is picked
    const picked = pickRelease(channel, 'us-east-1', cluster);
    // THEN it is the newest eligible release at or before its ceiling
    expect(picked?.release).toBe(expected);
  });

  test('a halted held release pins the one before it: a hold is a ceiling, not a promise', () => {
    // GIVEN a wave held at R2, which a failed roll halted
    const channel: KnownChannel = {
      name: 'al2023',
      spec: { ...SPEC, holds: [held(R2[0])] },
      status: haltRelease(status, R2[0], 'failed', 'now'),
    };
    // WHEN the release is picked
    // THEN the wave is pinned to R1
    expect(pickRelease(channel, 'us-east-1', late)?.release).toBe(R1[0]);
  });

  test.each([
    ['spec.promotedRelease', { promotedRelease: 'v-none' }, 'channel-promotion'],
    ['spec.holds[0]', { holds: [held('v-none')] }, 'channel-holds'],
  ])('a ceiling naming no recorded release is a problem naming %s', (by, fields, rule) => {
    // GIVEN a channel whose spec names a release the daemon never recorded
    const resolve = imageResolver([{ name: 'al2023', spec: { ...SPEC, ...fields }, status }]);
    // WHEN a late cluster's pin is resolved
    const pin = resolve('al2023', 'us-east-1', late);
    // THEN the problem names the field, the recorded releases and the rule
    expect(pin).toEqual({
      problem: expect.stringContaining(`${by} names release "v-none", which is not recorded`),
      rule,
    });
    expect((pin as { problem: string }).problem).toMatch(new RegExp(`recorded: .*${R3[0]}.*\\(rule ${rule}\\)$`));
  });

  test('holds make the pins key differ per cluster: a held cluster is not synthesized again when the channel moves', () => {
    // GIVEN two clusters of the channel, one held
    const spec = { ...SPEC, holds: [held(R1[0])] };
    const raw = (name: string, wave: string) => ({
      metadata: { name, labels: { wave } },
      spec: { region: 'us-east-1', pool: { imageChannel: 'al2023' } },
    });
    const before = imageResolver([{ name: 'al2023', spec, status: statusOf(R1, R2) }]);
    const after = imageResolver([{ name: 'al2023', spec, status }]);
    // WHEN a new release is recorded
    // THEN the held cluster's key stays, the other's moves
    expect(pinsKey(raw('prod-us1', 'late'), after)).toBe(pinsKey(raw('prod-us1', 'late'), before));
    expect(pinsKey(raw('canary-us1', 'canary'), after)).not.toBe(pinsKey(raw('canary-us1', 'canary'), before));
  });
});

describe('validateCluster with image channels', () => {
  function onChannel(channel = 'al2023') {
    const raw = rawExample('staging-us1');
    delete raw.spec.pool.machineImage;
    raw.spec.pool.imageChannel = channel;
    return raw;
  }
  const resolver = imageResolver([{ name: 'al2023', spec: SPEC, status: statusOf(R1, R2) }]);

  test('a pool on a channel is pinned to its release: the AMI id synthesis reads', () => {
    // GIVEN a pool that names a channel with two releases
    // WHEN it is validated with the channel's pins
    const r = validateCluster(onChannel(), {
      file: 'clusters/staging-us1.yaml',
      templates: TEMPLATES,
      images: resolver,
    });
    // THEN its machine image is the newest release's AMI
    expect(r.problems).toEqual([]);
    expect(r.cluster?.spec.pool?.machineImage).toBe(R2[2]);
  });

  test.each([
    ['an unknown channel', onChannel('nope'), resolver, /no WorkerImageChannel named "nope" \(rule image-channel\)/],
    ['no channels read at all', onChannel(), undefined, /no WorkerImageChannel named "al2023"/],
    [
      'a channel without a release in the region',
      onChannel(),
      imageResolver([{ name: 'al2023', spec: SPEC, status: { releases: [], problems: [] } }]),
      /has no release for us-east-1 yet.*channels refresh/,
    ],
    [
      'a channel of another architecture',
      onChannel(),
      imageResolver([{ name: 'al2023', spec: { ...SPEC, architecture: 'arm64' }, status: statusOf(R1) }]),
      /is arm64, the pool runs x86_64/,
    ],
  ])('%s is refused on spec.pool.imageChannel', (_what, raw, images, message) => {
    // WHEN it is validated
    const r = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES, images });
    // THEN one problem names the field and the rule, by its id too
    expect(r.cluster).toBeUndefined();
    expect(r.problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: 'spec.pool.imageChannel',
        message: expect.stringMatching(message),
        rule: 'image-channel',
      },
    ]);
    expect(r.problems[0].message.split('(rule ').length).toBe(2);
    expect(r.problems[0].message).toMatch(/ \(rule image-channel\)$/);
  });

  test.each([
    ['both', (raw: { spec: { pool: Record<string, unknown> } }) => (raw.spec.pool.imageChannel = 'al2023')],
    ['neither', (raw: { spec: { pool: Record<string, unknown> } }) => delete raw.spec.pool.machineImage],
  ])('a pool with %s of machineImage and imageChannel is refused (rule image-source)', (_what, edit) => {
    // GIVEN a pool with both or neither
    const raw = rawExample('staging-us1');
    edit(raw);
    // WHEN it is validated
    const r = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES, images: resolver });
    // THEN the rule names the field
    expect(r.problems).toEqual([
      expect.objectContaining({
        path: 'spec.pool.machineImage',
        message: expect.stringContaining('(rule image-source)'),
      }),
    ]);
  });
});

describe('pinsKey', () => {
  test('changes with a new release of a channel the object names, not with another channel', () => {
    // GIVEN an object on channel al2023
    const raw = { spec: { region: 'us-east-1', pool: { imageChannel: 'al2023' } } };
    const before = imageResolver([
      { name: 'al2023', spec: SPEC, status: statusOf(R1) },
      { name: 'other', spec: SPEC, status: statusOf(R1) },
    ]);
    const otherMoved = imageResolver([
      { name: 'al2023', spec: SPEC, status: statusOf(R1) },
      { name: 'other', spec: SPEC, status: statusOf(R1, R2) },
    ]);
    const ownMoved = imageResolver([
      { name: 'al2023', spec: SPEC, status: statusOf(R1, R2) },
      { name: 'other', spec: SPEC, status: statusOf(R1) },
    ]);
    // WHEN its key is computed under each
    // THEN only its own channel's release changes it
    expect(pinsKey(raw, otherMoved)).toBe(pinsKey(raw, before));
    expect(pinsKey(raw, ownMoved)).not.toBe(pinsKey(raw, before));
    expect(pinsKey({ spec: { region: 'us-east-1', pool: {} } }, before)).toBe('');
  });
});
