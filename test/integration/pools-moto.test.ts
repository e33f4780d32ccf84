import { getCondition } from '../../lib/model/cluster/schema/status';
import { renderCluster } from '../../lib/model/cluster/derive';
import { validateCluster } from '../../lib/model/cluster/validate';
import { listTemplates } from '../../lib/model/cloudconfig/templates';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { Json } from '../helpers/json';
import {
  AWS_FLAGS,
  cli,
  pooledMotoCluster,
  stackActivity,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from './harness';
import { defaultTemplates } from '../../lib/platform/files/template-directory';

// Issue 23 end to end: the reconciler (the real CLI, file store) against moto (the wrapper) with a cluster of two
// pools: `default` in the shared stack and `spot` in its own stack. Each pool's checksum is recorded from its own
// stack; an edit of one pool's labels updates that pool's stack only. The pool's stack imports the shared stack's
// exports, so it waits for the shared stack's create (WaitingForSharedStack) within the same --once run.

const NAME = 'moto-pools';
const SHARED = workerStackName(NAME);
const SPOT = poolStackName(NAME, 'spot');
let world: World;

beforeAll(async () => {
  // The wrapper: exports of change-set stacks, ImportValue resolved in them, stacks in progress for a while as in AWS.
  world = await startWorld({ inProgressSeconds: 2 });
}, 120_000);
afterAll(() => stopWorld(world));

const pooled = (spotLabel: string): Json => pooledMotoCluster(world, NAME, spotLabel);

/** Each pool's checksum, as the reconciler derives it. */
function checksums(raw: unknown): Record<string, string> {
  const v = validateCluster(raw, { file: NAME, templates: listTemplates(defaultTemplates()) });
  if (!v.cluster) throw new Error(`invalid: ${JSON.stringify(v.problems)}`);
  const r = renderCluster(v.cluster, NAME, defaultTemplates());
  if (!('configs' in r)) throw new Error(`does not render: ${JSON.stringify(r.problems)}`);
  return Object.fromEntries([...r.configs].map(([pool, c]) => [pool, c.checksum]));
}

const spotEntry = (status: Json): Json => (status.pools as Json[]).find((p: Json) => p.name === 'spot');

test('two pools: each stack created and recorded; a label edit of one pool updates its stack only', async () => {
  // GIVEN a cluster of two pools, reconciled once
  const first = pooled('spot');
  const want = checksums(first);
  expect(want.default).not.toBe(want.spot);
  writeCluster(world, first);
  const created = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect({ code: created.code, out: created.out }).toEqual({ code: 0, out: expect.any(String) });

  // THEN both stacks exist, each pool's checksum is recorded from its own stack, and the cluster is Ready 2/2
  let status = stateFile(world, NAME).status;
  expect(status.cloudConfigChecksum).toBe(want.default);
  expect(spotEntry(status)).toMatchObject({ stackName: SPOT, cloudConfigChecksum: want.spot });
  expect(status.poolsReady).toBe('2/2');
  expect(getCondition(status, 'Ready')?.status).toBe('True');
  const sharedBefore = await stackActivity(world, SHARED);
  const spotBefore = await stackActivity(world, SPOT);
  expect(spotBefore.status).toMatch(/_COMPLETE$/);

  // WHEN only the spot pool's label changes, and the reconciler runs again
  const edited = pooled('spot-v2');
  const next = checksums(edited);
  expect(next.default).toBe(want.default);
  expect(next.spot).not.toBe(want.spot);
  writeCluster(world, edited);
  const updated = await cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);
  expect({ code: updated.code, out: updated.out }).toEqual({ code: 0, out: expect.any(String) });

  // THEN the spot pool's stack was updated and records the new checksum; the shared stack was not synthesized or
  // updated (moto's ListChangeSets lists every stack's change sets, so its events and the reconciler's log say it)
  status = stateFile(world, NAME).status;
  expect(spotEntry(status).cloudConfigChecksum).toBe(next.spot);
  expect(status.cloudConfigChecksum).toBe(want.default);
  expect(status.poolsReady).toBe('2/2');
  expect((await stackActivity(world, SPOT)).events).toBeGreaterThan(spotBefore.events);
  expect((await stackActivity(world, SHARED)).events).toBe(sharedBefore.events);
  const synthesized = updated.logs
    .split('\n')
    .filter((l) => l.includes('"msg":"synthesized"'))
    .map((l) => (JSON.parse(l) as { stack: string }).stack);
  expect(synthesized).toEqual([SPOT]);
}, 300_000);
