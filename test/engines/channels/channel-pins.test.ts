import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChannelPins, FileChannelStore } from '../../../lib/engines/channels';
import { ClusterRecord } from '../../../lib/model/ports/cluster-store';
import { FakeImageSource } from '../../fakes/fake-image-source';

const PARAM = '/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id';
const AL2023 = (imageId: string, name: string, extra: object = {}) => ({
  imageId,
  name,
  architecture: 'x86_64',
  ownerId: '602401143452',
  ownerAlias: 'amazon',
  creationDate: '2026-11-20T00:00:00.000Z',
  ...extra,
});

function channelFile(dir: string, name: string, spec: string): void {
  fs.mkdirSync(path.join(dir, 'image-channels'), { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'image-channels', `${name}.yaml`),
    `apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerImageChannel\nmetadata: { name: ${name} }\nspec:\n${spec}`,
  );
}

const record = (name: string, region: string, channel: string): ClusterRecord => ({
  name,
  source: `clusters/${name}.yaml`,
  raw: { spec: { region, pool: { imageChannel: channel } } },
  parseProblems: [],
  generation: 1,
  resourceVersion: '1',
});

let dir: string;
let source: FakeImageSource;
let now: Date;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'channels-'));
  channelFile(dir, 'al2023', `  source: { ssmParameter: ${PARAM} }\n  architecture: x86_64\n`);
  source = new FakeImageSource();
  now = new Date('2026-11-28T10:00:00Z');
  for (const region of ['us-east-1', 'eu-west-1']) {
    source.setParameter(region, PARAM, region === 'us-east-1' ? 'ami-0000000000000000a' : 'ami-0000000000000000b');
    source.addImage(
      region,
      AL2023(
        region === 'us-east-1' ? 'ami-0000000000000000a' : 'ami-0000000000000000b',
        'amazon-eks-node-al2023-x86_64-standard-1.33-v20261120',
      ),
    );
  }
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const pinsOf = () => new ChannelPins({ store: new FileChannelStore({ clustersDir: dir }), source, now: () => now });

test('a pass reads each channel once per region, whatever the number of clusters, and pins one release everywhere', async () => {
  // GIVEN 50 clusters on one channel in two regions
  const records = Array.from({ length: 50 }, (_, i) => record(`c${i}`, i % 2 ? 'us-east-1' : 'eu-west-1', 'al2023'));
  const pins = pinsOf();
  // WHEN a pass refreshes the channels
  const r = await pins.refresh(records);
  // THEN the parameter was read twice (once per region) and the release is recorded with each region's image
  expect(source.parameterReads).toBe(2);
  expect(r.recorded).toEqual([
    'al2023: amazon-eks-node-al2023-x86_64-standard-1.33-v20261120 (eu-west-1)',
    'al2023: amazon-eks-node-al2023-x86_64-standard-1.33-v20261120 (us-east-1)',
  ]);
  expect(pins.resolver()('al2023', 'us-east-1')).toMatchObject({ imageId: 'ami-0000000000000000a' });
  expect(pins.resolver()('al2023', 'eu-west-1')).toMatchObject({ imageId: 'ami-0000000000000000b' });
  // AND the census (the metrics) counts them all as waiting for it: none has a live stack read yet
  expect(r.census).toEqual([
    {
      channel: 'al2023',
      release: 'amazon-eks-node-al2023-x86_64-standard-1.33-v20261120',
      state: 'waits',
      clusters: 50,
    },
  ]);
  expect(r.health).toEqual([{ channel: 'al2023', newestHalted: false, problems: 0 }]);
});

test('a channel no cluster names is not read', async () => {
  // GIVEN clusters on no channel
  // WHEN a pass refreshes
  const r = await pinsOf().refresh([record('c', 'us-east-1', 'other')]);
  // THEN the al2023 source was never read
  expect(source.parameterReads).toBe(0);
  expect(r.reads).toBe(0);
});

test.each([
  [
    'an untrusted owner',
    AL2023('ami-0000000000000000c', 'evil', { ownerId: '999999999999', ownerAlias: undefined }),
    /owned by 999999999999, which the channel does not trust/,
  ],
  [
    'the wrong architecture',
    AL2023('ami-0000000000000000c', 'arm', { architecture: 'arm64' }),
    /is arm64, the channel is x86_64/,
  ],
  ['an image that does not exist', undefined, /ami-0000000000000000c does not exist in us-east-1/],
])(
  'a new image of %s is refused: the pin stays on the last good release and the status says why',
  async (_what, image, message) => {
    // GIVEN a channel with one good release recorded
    const pins = pinsOf();
    const records = [record('c', 'us-east-1', 'al2023')];
    await pins.refresh(records);
    // WHEN its parameter moves to a bad image
    source.setParameter('us-east-1', PARAM, 'ami-0000000000000000c');
    if (image) source.addImage('us-east-1', image);
    const r = await pins.refresh(records);
    // THEN nothing is recorded, the pool keeps its release, and the channel's status (on disk) has the problem
    expect(r.recorded).toEqual([]);
    expect(r.problems).toEqual([expect.stringMatching(message)]);
    expect(pins.resolver()('al2023', 'us-east-1')).toMatchObject({ imageId: 'ami-0000000000000000a' });
    const status = JSON.parse(fs.readFileSync(path.join(dir, 'image-channels', '.status', 'al2023.json'), 'utf8'));
    expect(status.problems).toEqual([{ region: 'us-east-1', message: expect.stringMatching(message) }]);
  },
);

test('a new release of the source is recorded once and becomes the pin; a restart reads the same pins from disk', async () => {
  // GIVEN a channel read once
  const records = [record('c', 'us-east-1', 'al2023')];
  await pinsOf().refresh(records);
  // WHEN AWS publishes a new image and a new process (a restart) refreshes twice
  source.setParameter('us-east-1', PARAM, 'ami-0000000000000000d');
  source.addImage(
    'us-east-1',
    AL2023('ami-0000000000000000d', 'amazon-eks-node-al2023-x86_64-standard-1.33-v20261127', {
      deprecationTime: '2028-11-27T00:00:00.000Z',
    }),
  );
  const restarted = pinsOf();
  const first = await restarted.refresh(records);
  const second = await restarted.refresh(records);
  // THEN the release is recorded by the first read only, and pinned with its deprecation time and parameter version
  expect(first.recorded).toEqual(['al2023: amazon-eks-node-al2023-x86_64-standard-1.33-v20261127 (us-east-1)']);
  expect(second.recorded).toEqual([]);
  expect(restarted.resolver()('al2023', 'us-east-1')).toEqual({
    channel: 'al2023',
    release: 'amazon-eks-node-al2023-x86_64-standard-1.33-v20261127',
    imageId: 'ami-0000000000000000d',
    architecture: 'x86_64',
    deprecationTime: '2028-11-27T00:00:00.000Z',
  });
});

test('a channel whose source changes kind is refused, and so are the pools on it (nothing rolls)', async () => {
  // GIVEN a channel with a release from its SSM parameter
  const records = [record('c', 'us-east-1', 'al2023')];
  await pinsOf().refresh(records);
  // WHEN its source becomes a list
  channelFile(
    dir,
    'al2023',
    `  source:\n    images: [{ release: own-1, imageIds: { us-east-1: ami-0000000000000000e } }]\n  architecture: x86_64\n`,
  );
  const pins = pinsOf();
  const r = await pins.refresh(records);
  // THEN the refresh names the rule and nothing new is read or pinned
  expect(r.problems).toEqual([expect.stringContaining('the source changed from ssmParameter to images')]);
  expect(r.recorded).toEqual([]);
  expect(pins.resolver()('al2023', 'us-east-1')).toEqual({
    problem: expect.stringContaining('its source changed from ssmParameter to images'),
    rule: 'channel-source',
  });
});

test('an invalid channel file is a problem with its file and field path, and its pools are refused', async () => {
  // GIVEN a channel with both sources
  channelFile(dir, 'both', `  source: { ssmParameter: /x, images: [] }\n  architecture: sparc\n`);
  const pins = pinsOf();
  // WHEN a pass refreshes
  const r = await pins.refresh([record('c', 'us-east-1', 'both')]);
  // THEN every problem is named, and a pool on it gets the channel's refusal
  expect(r.problems.join('\n')).toMatch(/image-channels\/both\.yaml: spec\.architecture/);
  expect(r.problems.join('\n')).toMatch(/image-channels\/both\.yaml: spec\.source\.images/);
  expect(pins.resolver()('both', 'us-east-1')).toEqual({
    problem: expect.stringContaining('does not validate'),
    rule: 'image-channel',
  });
});

test.each([
  ['within the notice', '2026-12-05T00:00:00.000Z', /deprecates at 2026-12-05/],
  ['already past', '2026-11-01T00:00:00.000Z', /was deprecated at 2026-11-01/],
  ['far away', '2027-06-01T00:00:00.000Z', undefined],
])(
  'a pinned image whose deprecation time is %s is warned of before a launch fails on it',
  async (_what, when, message) => {
    // GIVEN the pinned image has an EC2 deprecation time
    source.addImage(
      'us-east-1',
      AL2023('ami-0000000000000000a', 'amazon-eks-node-al2023-x86_64-standard-1.33-v20261120', {
        deprecationTime: when,
      }),
    );
    // WHEN a pass refreshes (now is 2026-11-28)
    const r = await pinsOf().refresh([record('c', 'us-east-1', 'al2023')]);
    // THEN a warning names the channel, region, image and what to do, and only when it is near or past
    expect(r.warnings).toEqual(message ? [expect.stringMatching(message)] : []);
    expect(r.problems).toEqual([]);
  },
);

test('a channel status that is not what the daemon wrote is a problem naming its file, not a crash', async () => {
  // GIVEN a truncated status file
  fs.mkdirSync(path.join(dir, 'image-channels', '.status'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'image-channels', '.status', 'al2023.json'), '{"releases": [');
  // WHEN the channels are loaded
  const loaded = new FileChannelStore({ clustersDir: dir, relativeTo: dir }).loadSync();
  // THEN the file is named with what to do, and the channel has no release (its pools are refused, nothing rolls)
  expect(loaded.problems).toEqual([
    expect.objectContaining({
      file: 'image-channels/.status/al2023.json',
      message: expect.stringContaining('run worker-stacks channels refresh'),
    }),
  ]);
  expect(loaded.channels[0].status.releases).toEqual([]);
});
