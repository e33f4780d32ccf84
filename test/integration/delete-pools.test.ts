import * as fs from 'node:fs';
import { CreateStackCommand } from '@aws-sdk/client-cloudformation';
import { FileStore } from '../../lib/adapters/stores/file-store';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { MOTO_REGION } from '../helpers/moto';
import { AWS_FLAGS, cli, motoCluster, stackOf, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';

// Against moto: `delete` of a cluster whose pools have stacks of their own deletes them first, then the shared stack.

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
