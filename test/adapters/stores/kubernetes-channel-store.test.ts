import { KubeApiError } from '../../../lib/core/errors';
import { runCli } from '../../../lib/adapters/cli/program';
import { ChannelPins, validateChannelObject } from '../../../lib/engines/channels';
import { KubernetesChannelStore } from '../../../lib/adapters/stores/kubernetes-channel-store';
import { KubeClient } from '../../../lib/platform/kube/client';
import {
  channelCollectionPath,
  channelObjectPath,
  KubeImageChannel,
} from '../../../lib/platform/kube/channel-resource';
import { ClusterRecord } from '../../../lib/model/ports/cluster-store';
import { haltRelease, resumeRelease } from '../../../lib/model/channel/channel-status';
import { FakeImageSource } from '../../fakes/fake-image-source';
import { kubeForFile } from '../../helpers/kube-crd';
import { Json } from '../../helpers/json';

/**
 * WorkerImageChannel custom resources (lib/platform/kube/channel-crd.ts) on a real kube-apiserver: the Kubernetes
 * store's channels, their releases in the status subresource, the CRD refusing what validate refuses with the same
 * message, and the daemon's refresh writing what it read there.
 */
const k = kubeForFile();
let n = 0;
const PARAM = '/org/images/al2023';

const channel = (name: string, spec: Json = {}): Json => ({
  apiVersion: 'worker-stacks.io/v1alpha1',
  kind: 'WorkerImageChannel',
  metadata: { name },
  spec: { source: { ssmParameter: PARAM }, architecture: 'x86_64', ...spec },
});

async function create(namespace: string, body: Json): Promise<KubeImageChannel> {
  return (await k.current.admin.request<KubeImageChannel>('POST', channelCollectionPath(namespace), body)).body;
}

const store = (namespace?: string) =>
  new KubernetesChannelStore({
    client: KubeClient.fromOptions({ kubeconfig: k.current.api.kubeconfig }),
    namespace,
    ownsClient: true,
  });

const record = (name: string): ClusterRecord => ({
  name,
  source: `workercluster/${name}`,
  raw: { metadata: { name }, spec: { region: 'us-east-1', pool: { imageChannel: 'al2023' } } },
  parseProblems: [],
  generation: 1,
  resourceVersion: '1',
});

test("the daemon's refresh records a release in the channel's status subresource, and a store reads it back", async () => {
  // GIVEN a channel custom resource and an SSM source naming an image
  const namespace = await k.current.namespace(`channels-${++n}`);
  await create(namespace, channel('al2023'));
  const source = new FakeImageSource();
  source.setParameter('us-east-1', PARAM, 'ami-0123456789abcdef0');
  source.addImage('us-east-1', {
    imageId: 'ami-0123456789abcdef0',
    name: 'al2023-v1',
    architecture: 'x86_64',
    ownerId: '137112412989',
    ownerAlias: 'amazon',
  });
  const s = store(namespace);
  try {
    // WHEN a pass refreshes the channels of a cluster that names it
    const pins = new ChannelPins({ store: s, source, now: () => new Date('2026-11-28T10:00:00Z') });
    const r = await pins.refresh([record('c1')]);
    // THEN the release is recorded on the object's status, and the pin is its image
    expect(r.recorded).toEqual(['al2023: al2023-v1 (us-east-1)']);
    const { body } = await k.current.admin.request<KubeImageChannel>('GET', channelObjectPath(namespace, 'al2023'));
    expect(body.status).toMatchObject({
      releases: [{ release: 'al2023-v1', images: { 'us-east-1': { imageId: 'ami-0123456789abcdef0' } } }],
    });
    expect(pins.resolver()('al2023', 'us-east-1')).toMatchObject({ release: 'al2023-v1' });
    // AND the status is the daemon's alone: a new process reads the same releases
    const again = await store(namespace).load();
    expect(again.problems).toEqual([]);
    expect(again.channels.map((c) => [c.name, c.source, c.status.releases.map((x) => x.release)])).toEqual([
      ['al2023', 'WorkerImageChannel/al2023', ['al2023-v1']],
    ]);
    // WHEN a halt is written, then lifted (a key removed: the whole status is replaced, not merged)
    const loaded = (await s.load()).channels[0];
    await s.writeStatus('al2023', haltRelease(loaded.status, 'al2023-v1', 'canary failed', '2026-11-28T11:00:00Z'));
    const halted = (await s.load()).channels[0].status;
    await s.writeStatus('al2023', resumeRelease(halted, 'al2023-v1', '2026-11-28T12:00:00Z')!);
    // THEN the halt is gone and the resume recorded
    const resumed = (await s.load()).channels[0].status.releases[0];
    expect({ halted: resumed.halted, resumedAt: resumed.resumedAt }).toEqual({
      halted: undefined,
      resumedAt: '2026-11-28T12:00:00Z',
    });
  } finally {
    s.close();
  }
});

test.each([
  [
    'a source of both kinds',
    'spec.source',
    { source: { ssmParameter: PARAM, images: [{ release: 'a', imageIds: { 'us-east-1': 'ami-0123456789abcdef0' } }] } },
  ],
  [
    'a hold with clusters and a selector',
    'spec.holds[0]',
    { holds: [{ release: 'a', clusters: ['c1'], selector: {} }] },
  ],
  [
    'a list release without a region',
    'spec.source.images[0].imageIds',
    { source: { images: [{ release: 'a', imageIds: {} }] } },
  ],
])('the API server refuses %s, as validate does, at %s', async (_what, at, spec) => {
  // GIVEN a channel object validate refuses
  const namespace = await k.current.namespace(`channels-${++n}`);
  const body = channel('bad', spec);
  const refused = validateChannelObject(body, 'WorkerImageChannel/bad').problems;
  expect(refused.map((p) => p.path)).toContain(at);
  // WHEN it is created
  const e = await create(namespace, body).then(
    () => undefined,
    (x: unknown) => x,
  );
  // THEN the API server refuses it, naming the field (and the rule, where validate's message names one)
  expect(e).toBeInstanceOf(KubeApiError);
  const message = (e as KubeApiError).message;
  expect(message).toContain(at);
  for (const p of refused.filter((x) => x.path === at && /\(rule /.test(x.message)))
    expect(message).toContain(p.message);
});

test('with every namespace read, a channel name two namespaces define pins nothing and says why', async () => {
  // GIVEN the same channel name in two namespaces
  const a = await k.current.namespace(`channels-${++n}`);
  const b = await k.current.namespace(`channels-${++n}`);
  await create(a, channel('twice'));
  await create(b, channel('twice'));
  // WHEN every namespace is read
  const s = store(undefined);
  try {
    const loaded = await s.load();
    // THEN the name is a problem and the channel has no spec (its pools are refused)
    expect(loaded.problems).toEqual([
      expect.objectContaining({
        file: 'WorkerImageChannel/twice',
        path: 'metadata.name',
        message: expect.stringMatching(new RegExp(`defined in namespaces ${a}, ${b}; with --all-namespaces`)),
      }),
    ]);
    expect(loaded.channels.find((c) => c.name === 'twice')?.spec).toBeUndefined();
  } finally {
    s.close();
  }
});

test('channels status and resume work against the custom resources (--store kubernetes)', async () => {
  // GIVEN a channel whose one release a failed roll halted, as the daemon recorded it in the status
  const namespace = await k.current.namespace(`channels-${++n}`);
  await create(namespace, channel('al2023'));
  const s = store(namespace);
  const release = {
    release: 'al2023-v1',
    firstSeen: '2026-11-28T10:00:00Z',
    images: { 'us-east-1': { imageId: 'ami-0123456789abcdef0' } },
  };
  try {
    await s.load();
    await s.writeStatus('al2023', {
      sourceKind: 'ssmParameter',
      releases: [{ ...release, halted: { at: '2026-11-28T11:00:00Z', reason: 'the roll of c1 to it failed' } }],
      problems: [],
    });
  } finally {
    s.close();
  }
  const flags = ['--store', 'kubernetes', '--kubeconfig', k.current.api.kubeconfig, '-n', namespace];
  const cli = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
    return { code, out: out.join(''), err: err.join('') };
  };
  // WHEN channels status reads it
  const shown = await cli(['channels', 'status', ...flags]);
  // THEN it shows the release halted
  expect(shown).toMatchObject({
    code: 0,
    out: expect.stringMatching(
      /channel al2023\n {2}release al2023-v1 .*HALTED 2026-11-28T11:00:00Z: the roll of c1 to it failed/,
    ),
  });
  // WHEN the halt is lifted by the CLI
  const resumed = await cli(['channels', 'resume', 'al2023', 'al2023-v1', ...flags]);
  // THEN the object's status has no halt and records the resume
  expect(resumed.code).toBe(0);
  const { body } = await k.current.admin.request<KubeImageChannel>('GET', channelObjectPath(namespace, 'al2023'));
  const after = (body.status as { releases: Json[] }).releases[0];
  expect({ halted: after.halted, resumed: typeof after.resumedAt }).toEqual({ halted: undefined, resumed: 'string' });
});
