import * as fs from 'node:fs';
import { CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { FileStore } from '../../lib/adapters/stores/file-store';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { MOTO_REGION } from '../helpers/moto';
import {
  AWS_FLAGS,
  cli,
  motoCluster,
  pooledMotoCluster,
  stackOf,
  startWorld,
  stateFile,
  stopWorld,
  World,
  writeCluster,
} from './harness';

// Against moto: `delete` of a cluster whose pools have stacks of their own deletes them first, then the shared stack;
// `delete --pool` deletes the stack of one pool removed from the object, and nothing else.

let world: World;
beforeAll(async () => {
  world = await startWorld();
}, 120_000);
afterAll(() => stopWorld(world));

const NAME = 'moto-pools';
const SHARED = workerStackName(NAME);
const SPOT = poolStackName(NAME, 'spot');
/** A stack with nothing in it but a wait condition handle (moto creates it at once). */
const TEMPLATE = JSON.stringify({ Resources: { Handle: { Type: 'AWS::CloudFormation::WaitConditionHandle' } } });

test('`delete <name>`: the stack of each pool recorded in status.pools first, then the shared stack, each said', async () => {
  // GIVEN a cluster's shared stack and its spot pool's stack, recorded in the status, and the object then removed
  for (const StackName of [SHARED, SPOT])
    await world.cfn.send(new CreateStackCommand({ StackName, TemplateBody: TEMPLATE }));
  const file = writeCluster(world, motoCluster(world, NAME));
  const store = new FileStore({ clustersDir: world.dir });
  const rec = await store.get(NAME);
  await store.writeStatus(
    NAME,
    { conditions: [], pools: [{ name: 'spot', stackName: SPOT, conditions: [] }] },
    rec?.resourceVersion ?? '',
  );
  fs.rmSync(file);

  // WHEN delete runs with --yes and the region
  const run = await cli(['delete', NAME, '--yes', '--region', MOTO_REGION, '--clusters', world.dir, ...AWS_FLAGS]);

  // THEN both stacks are gone, the pool's said first (it imports the shared stack's exports)
  expect(run.code).toBe(0);
  const lines = run.out.trimEnd().split('\n');
  expect(lines[0]).toBe(`${SPOT}\tdeleted`);
  expect(lines.at(-1)).toBe(`${SHARED}\tdeleted`);
  for (const s of [SPOT, SHARED]) {
    const after = await stackOf(world, s);
    expect(after === undefined || after.StackStatus === 'DELETE_COMPLETE').toBe(true);
  }
  // AND the status is cleared
  expect(stateFile(world, NAME).status).toBeUndefined();
}, 120_000);

test('`delete <name> --pool <pool>`: exactly that removed pool’s stack goes, and its status entry; the others stay', async () => {
  // GIVEN a cluster whose pool spot was removed from the object (its stack and entry still there), beside a pool gpu
  const name = 'moto-pool-gone';
  const [shared, spot, gpu] = [workerStackName(name), poolStackName(name, 'spot'), poolStackName(name, 'gpu')];
  for (const StackName of [shared, spot, gpu])
    await world.cfn.send(new CreateStackCommand({ StackName, TemplateBody: TEMPLATE }));
  writeCluster(
    world,
    pooledMotoCluster(world, name, 'spot', (raw) => {
      raw.spec.pools = [raw.spec.pools[0]];
    }),
  );
  const store = new FileStore({ clustersDir: world.dir });
  const rec = await store.get(name);
  const entry = (pool: string, stackName: string) => ({ name: pool, stackName, conditions: [] });
  await store.writeStatus(
    name,
    { conditions: [], pools: [entry('spot', spot), entry('gpu', gpu)] },
    rec?.resourceVersion ?? '',
  );

  // WHEN delete runs for the pool spot
  const run = await cli(['delete', name, '--pool', 'spot', '--yes', '--clusters', world.dir, ...AWS_FLAGS]);

  // THEN spot's stack is gone, and only it; its entry is gone, gpu's stays
  expect({ code: run.code, out: run.out, err: run.err }).toEqual({ code: 0, out: `${spot}\tdeleted\n`, err: '' });
  const after = await stackOf(world, spot);
  expect(after === undefined || after.StackStatus === 'DELETE_COMPLETE').toBe(true);
  for (const s of [shared, gpu]) expect((await stackOf(world, s))?.StackStatus).toBe('CREATE_COMPLETE');
  expect(stateFile(world, name).status.pools.map((p: { name: string }) => p.name)).toEqual(['gpu']);
}, 120_000);
