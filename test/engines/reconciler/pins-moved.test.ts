import { ChannelSpec } from '../../../lib/model/channel/channel-schema';
import { ChannelStatus, haltRelease, recordRelease } from '../../../lib/model/channel/channel-status';
import { ImageResolver, imageResolver } from '../../../lib/model/channel/image-pins';
import { Harness } from '../../fakes/harness';

/**
 * A pass refreshes the image channels' pins while reconciles of the pass before may still be in hand: one that read
 * the pins before a halt must not execute the release just halted (the simulator's [channel-halts] found it did). It
 * looks again, before any change set is executed, with the pins of now.
 */

const SPEC: ChannelSpec = {
  source: { ssmParameter: '/org/al2023/image_id' },
  architecture: 'x86_64',
  owners: ['amazon'],
  skipReleases: [],
  holds: [],
};
const R1 = 'ami-00000000000000001';
const R2 = 'ami-00000000000000002';
let status: ChannelStatus = recordRelease(
  { releases: [], problems: [] },
  'v1',
  'us-east-1',
  { imageId: R1 },
  '2026-11-01T00:00:00.000Z',
);
status = recordRelease(status, 'v2', 'us-east-1', { imageId: R2 }, '2026-11-20T00:00:00.000Z');
const resolverOf = (s: ChannelStatus): ImageResolver => imageResolver([{ name: 'al2023', spec: SPEC, status: s }]);

let h: Harness;
beforeEach(() => {
  h = new Harness();
  h.edit('staging-us1', (raw) => {
    const pool = (raw as { spec: { pool: Record<string, unknown> } }).spec.pool;
    delete pool.machineImage;
    pool.imageChannel = 'al2023';
  });
});
afterEach(() => h.cleanup());

test.each([
  { what: 'pins moved under it (v2 halted meanwhile)', moved: true, executes: 0 },
  { what: 'pins unchanged', moved: false, executes: 1 },
])('a reconcile whose $what: executes $executes', async ({ moved, executes }) => {
  // GIVEN a cluster on a channel whose newest release v2 is pinned when its reconcile starts
  let pins = resolverOf(status);
  const deps = h.deps({ images: () => pins });
  // WHEN the pass halts v2 just before this reconcile would execute (or nothing happens)
  const outcome = await h.step(
    'staging-us1',
    {
      hooks: {
        before: (task) => {
          if (task === 'execute' && moved)
            pins = resolverOf(haltRelease(status, 'v2', 'the roll of canary failed', 'now'));
          return undefined;
        },
      },
    },
    deps,
  );
  // THEN no change set is executed on the pins read before; the cluster is looked at again at once
  expect(h.cfn.count('executeChangeSet')).toBe(executes);
  if (moved)
    expect(outcome).toMatchObject({
      result: 'waiting',
      requeueAfterMs: 0,
      message: expect.stringMatching(/pins changed/),
    });
});
