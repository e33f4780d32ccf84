import * as fs from 'node:fs';
import * as path from 'node:path';
import { GetCallerIdentityCommand, STSClient, STSServiceException } from '@aws-sdk/client-sts';
import { mockClient } from 'aws-sdk-client-mock';
import { runCli } from '../../../lib/adapters/cli/program';
import { FileStore } from '../../../lib/adapters/stores/file-store';
import { EXAMPLES_DIR, tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

/** Usage errors, AWS errors and the status table of the reconciler's commands, through the real CLI in-process. */

const run = async (argv: string[]) => {
  let out = '';
  let err = '';
  const code = await runCli(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
};

describe('number flags are checked before anything runs', () => {
  test.each([
    [['reconcile', '--once', '--concurrency', 'abc'], '--concurrency'],
    [['reconcile', '--once', '--concurrency', '0'], '--concurrency'],
    [['reconcile', '--watch', '--port', '70000'], '--port'],
    [['reconcile', '--once', '--poll-seconds', '1.5'], '--poll-seconds'],
    [['reconcile', '--watch', '--resync-minutes', '-3'], '--resync-minutes'],
    [['bootstrap', '--wait-timeout-minutes', 'soon'], '--wait-timeout-minutes'],
  ])('%j is a usage error naming %s', async (argv, flag) => {
    // WHEN
    const r = await run([...argv, '--clusters', EXAMPLES_DIR]);
    // THEN
    expect(r.code).toBe(2);
    expect(r.err).toContain(flag);
    expect(r.err).toMatch(/is not a whole number from \d+/);
  });

  test.each([
    [['reconcile', '--once', '--cfn-read-qps', '0'], '--cfn-read-qps'],
    [['reconcile', '--once', '--cfn-read-qps', 'fast'], '--cfn-read-qps'],
    [['reconcile', '--once', '--cfn-write-qps', '1e3'], '--cfn-write-qps'],
    [['reconcile', '--once', '--cfn-write-qps', '1001'], '--cfn-write-qps'],
  ])('%j is a usage error naming %s', async (argv, flag) => {
    // WHEN
    const r = await run([...argv, '--clusters', EXAMPLES_DIR]);
    // THEN
    expect(r.code).toBe(2);
    expect(r.err).toContain(flag);
    expect(r.err).toMatch(/is not a number of requests per second above 0 and at most 1000/);
  });
});

describe('an AWS error', () => {
  const sts = mockClient(STSClient);
  afterAll(() => sts.restore());

  test('is one message naming the service error and what to do, with exit code 3 (no stack trace)', async () => {
    // GIVEN credentials that AWS refuses
    sts.on(GetCallerIdentityCommand).rejects(
      new STSServiceException({
        name: 'InvalidClientTokenId',
        $fault: 'client',
        $metadata: { httpStatusCode: 403, requestId: 'req-1' },
        message: 'The security token included in the request is invalid.',
      }),
    );

    // WHEN bootstrap asks who the credentials are
    const r = await run(['bootstrap', '--clusters', EXAMPLES_DIR]);

    // THEN
    expect(r.code).toBe(3);
    expect(r.err).toMatch(
      /^error: AWS: InvalidClientTokenId: The security token included in the request is invalid\. \(HTTP 403, request req-1\)\n {2}fix: /,
    );
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});

test('`status` says SYNC no and PENDING image for a change that keeps the node config but stalled (an image change rolled back)', async () => {
  // GIVEN prod-eu1 at generation 1, whose image change rolled back: the live checksum is the desired one, Ready is False
  const dir = tempDir('status-sync');
  fs.copyFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), path.join(dir, 'prod-eu1.yaml'));
  const desired = (
    JSON.parse((await run(['status', '-o', 'json', '--clusters', dir])).out).clusters as Array<{
      desiredChecksum: string;
    }>
  )[0].desiredChecksum;
  const store = new FileStore({ clustersDir: dir });
  const rec = (await store.get('prod-eu1'))!;
  const at = '2026-01-01T00:00:00.000Z';
  const cond = (type: string, status: string, reason: string) => ({
    type,
    status,
    reason,
    message: reason,
    lastTransitionTime: at,
    observedGeneration: 1,
  });
  await store.writeStatus(
    'prod-eu1',
    {
      cloudConfigChecksum: desired,
      observedGeneration: 1,
      stackStatus: 'UPDATE_ROLLBACK_COMPLETE',
      pendingRoll: 'image',
      conditions: [cond('Ready', 'False', 'UpdateRolledBack'), cond('Stalled', 'True', 'UpdateRolledBack')],
    } as Json,
    rec.resourceVersion,
  );

  // WHEN status is read
  const row = (
    JSON.parse((await run(['status', '-o', 'json', '--clusters', dir])).out).clusters as Array<{
      inSync: boolean;
      liveChecksum: string;
      pending?: string;
    }>
  )[0];
  const table = (await run(['status', '--clusters', dir])).out.split('\n')[1].split(/\s{2,}/);

  // THEN the checksums agree, the cluster is still not in sync, and what is pending is said: the new image
  expect({ live: row.liveChecksum, inSync: row.inSync, pending: row.pending }).toEqual({
    live: desired,
    inSync: false,
    pending: 'image',
  });
  expect(table.slice(5, 7)).toEqual(['no', 'image']);
});

test('`status` prints a table: generation observed/current, short checksums, in sync, stack status, Ready and reason', async () => {
  // GIVEN the examples, one of them with a recorded, matching status
  const dir = tempDir('status');
  for (const f of fs.readdirSync(EXAMPLES_DIR).filter((n) => n.endsWith('.yaml')))
    fs.copyFileSync(path.join(EXAMPLES_DIR, f), path.join(dir, f));
  const json = JSON.parse((await run(['status', '-o', 'json', '--clusters', dir])).out).clusters as Array<{
    cluster: string;
    desiredChecksum: string;
  }>;
  const prod = json.find((r) => r.cluster === 'prod-eu1')!;
  const store = new FileStore({ clustersDir: dir });
  const rec = (await store.get('prod-eu1'))!;
  const now = '2026-01-01T00:00:00.000Z';
  await store.writeStatus(
    'prod-eu1',
    {
      cloudConfigChecksum: prod.desiredChecksum,
      observedGeneration: 1,
      stackStatus: 'UPDATE_COMPLETE',
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'StackUpdated',
          message: 'ok',
          lastTransitionTime: now,
          observedGeneration: 1,
        },
      ],
    },
    rec.resourceVersion,
  );

  // WHEN the table is printed
  const r = await run(['status', '--clusters', dir]);

  // THEN one header and one row per cluster, aligned, grouped by account and region, with what is known of each
  expect(r.code).toBe(0);
  const rows = r.out
    .trimEnd()
    .split('\n')
    .map((l) => l.split(/\s{2,}/));
  expect(rows[0]).toEqual([
    'ACCOUNT/REGION',
    'CLUSTER',
    'GEN',
    'DESIRED',
    'LIVE',
    'SYNC',
    'PENDING',
    'STACK STATUS',
    'READY',
    'REASON',
    'AGE',
  ]);
  expect(rows.map((row) => `${row[0]} ${row[1]}`).slice(1)).toEqual([
    '111111111111/eu-west-1 prod-eu1',
    '222222222222/us-east-1 staging-us1',
    '333333333333/ap-southeast-1 edge-ap1',
    '444444444444/eu-central-1 apps-eu1',
    // apps-eu1's pools with stacks of their own: a row each
    '444444444444/eu-central-1 apps-eu1/spot',
    '444444444444/eu-central-1 apps-eu1/arm',
    '666666666666/us-west-2 eks-us2',
    '666666666666/us-west-2 eks-us2/bottlerocket',
  ]);
  expect(rows[1]).toEqual([
    '111111111111/eu-west-1',
    'prod-eu1',
    '1/1',
    prod.desiredChecksum.slice(0, 12),
    prod.desiredChecksum.slice(0, 12),
    'yes',
    '-',
    'UPDATE_COMPLETE',
    'True',
    'StackUpdated',
    expect.stringMatching(/^\d+d$/),
  ]);
  expect(rows[2]).toEqual([
    '222222222222/us-east-1',
    'staging-us1',
    '-/1',
    expect.stringMatching(/^[0-9a-f]{12}$/),
    '-',
    'no',
    '-',
    '-',
    'Unknown',
    '-',
    '-',
  ]);
});
