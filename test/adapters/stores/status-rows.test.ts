import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { runCli } from '../../../lib/adapters/cli/program';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { statusRows } from '../../../lib/adapters/stores/status-rows';
import { Condition, PoolStatus } from '../../../lib/model/cluster/schema/status';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/** `worker-stacks status` shows each pool with a stack of its own on a row of its own, under its cluster's row. */

const AT = '2026-01-01T00:00:00.000Z';
const ready = (status: 'True' | 'False', reason: string, message: string): Condition => ({
  type: 'Ready',
  status,
  reason,
  message,
  lastTransitionTime: AT,
  observedGeneration: 1,
});

/** The example staging-us1 with two pools (system, spot), and a status that says spot failed. */
async function clustersDir(): Promise<string> {
  const dir = tempDir('status-pools');
  const raw: Json = parse(fs.readFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), 'utf8'));
  raw.spec.pools = [
    { ...raw.spec.pool, name: 'system' },
    { ...raw.spec.pool, name: 'spot' },
  ];
  delete raw.spec.pool;
  fs.writeFileSync(path.join(dir, 'staging-us1.yaml'), stringify(raw));
  const store = new FileStore({ clustersDir: dir });
  const rec = await store.get('staging-us1');
  const pools: PoolStatus[] = [
    {
      name: 'system',
      stackName: 'WorkerStack-staging-us1-Pool-system',
      stackStatus: 'UPDATE_COMPLETE',
      observedGeneration: 1,
      conditions: [ready('True', 'StackUpdated', 'ok')],
    },
    {
      name: 'spot',
      stackName: 'WorkerStack-staging-us1-Pool-spot',
      stackStatus: 'UPDATE_ROLLBACK_COMPLETE',
      observedGeneration: 1,
      conditions: [ready('False', 'UpdateRolledBack', 'the spot update rolled back')],
      controller: { failures: 1 },
    },
  ];
  await store.writeStatus(
    'staging-us1',
    {
      stackStatus: 'UPDATE_COMPLETE',
      observedGeneration: 1,
      conditions: [ready('False', 'PoolsNotReady', 'pools not ready: spot (UpdateRolledBack)')],
      pools,
      poolsReady: '2/3',
    },
    rec?.resourceVersion ?? '',
  );
  return dir;
}

test('the rows carry each pool: its stack, status, Ready and reason, and its own desired checksum', async () => {
  // GIVEN a cluster with two pools in stacks of their own
  const dir = await clustersDir();

  // WHEN the status rows are read
  const [row] = await statusRows(dir, DEFAULT_TEMPLATES_DIR);

  // THEN each pool is a row of its own, with its own desired config
  expect(
    (row.pools ?? []).map((p) => ({
      pool: p.pool,
      stack: p.stack,
      status: p.stackStatus,
      ready: p.ready,
      reason: p.reason,
    })),
  ).toEqual([
    {
      pool: 'system',
      stack: 'WorkerStack-staging-us1-Pool-system',
      status: 'UPDATE_COMPLETE',
      ready: 'True',
      reason: 'StackUpdated',
    },
    {
      pool: 'spot',
      stack: 'WorkerStack-staging-us1-Pool-spot',
      status: 'UPDATE_ROLLBACK_COMPLETE',
      ready: 'False',
      reason: 'UpdateRolledBack',
    },
  ]);
  expect(row.pools?.[0].desiredChecksum).toMatch(/^[0-9a-f]{64}$/);
  // AND the shared stack's row says the first pool's config (the one its ConfigChecksum output carries)
  expect(row.desiredChecksum).toBe(row.pools?.[0].desiredChecksum);
});

test('the table: a row per pool under its cluster (cluster/pool), and a line saying why a pool is not settled', async () => {
  // GIVEN a cluster with two pools in stacks of their own
  const dir = await clustersDir();

  // WHEN the table is printed
  let out = '';
  const code = await runCli(['status', '--clusters', dir], { out: (t) => (out += t), err: () => undefined });

  // THEN the cluster's row, then one per pool, then the failing pool's reason
  expect(code).toBe(0);
  const rows = out
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s{2,}/));
  expect(rows.slice(1, 4).map((r) => [r[1], r[7], r[8], r[9]])).toEqual([
    ['staging-us1', 'UPDATE_COMPLETE', 'False', 'PoolsNotReady'],
    ['staging-us1/system', 'UPDATE_COMPLETE', 'True', 'StackUpdated'],
    ['staging-us1/spot', 'UPDATE_ROLLBACK_COMPLETE', 'False', 'UpdateRolledBack'],
  ]);
  expect(out).toContain('staging-us1/spot: the spot update rolled back (failures 1)');
  expect(out).not.toContain('staging-us1/system:');
});
