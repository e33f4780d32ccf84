import { getCondition } from '../../lib/model/cluster/schema/status';
import { OWNER_TAG, stackOwner, workerStackName } from '../../lib/core/naming';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeWorkerCluster, objectPath } from '../../lib/platform/kube/resource';
import { KubeApiServer } from '../helpers/kube-apiserver';
import { KubeWithCrd, startKubeWithCrd } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { AWS_FLAGS, cli, motoCluster, stackActivity, stackOf, startWorld, stopWorld, World } from './harness';
import { Json } from '../helpers/json';

// The cross-tenant takeover, as it was found: team A's prod-eu1 (shard a) is Ready; an editor of namespace team-b only
// creates team-b/prod-eu1 (shard b, same account and region, its own instance type). Shard b never sees team A's
// object (its label selector), so only the stack's owner tag (lib/engines/reconciler/tasks/claim.ts) can stop it. A real
// API server, the CLI as each shard runs it (`reconcile --once -A --selector tier=<shard>`), moto.

const NAME = 'prod-eu1';
const STACK = workerStackName(NAME);
let world: World;
let server: KubeWithCrd;
let api: KubeApiServer;
let admin: KubeClient;
const shard = (tier: string) =>
  cli([
    'reconcile',
    '--once',
    '--store',
    'kubernetes',
    '--kubeconfig',
    api.kubeconfig,
    '--all-namespaces',
    '--selector',
    `tier=${tier}`,
    ...AWS_FLAGS,
  ]);
const object = async (ns: string) =>
  (await admin.request<KubeWorkerCluster & { status?: Json }>('GET', objectPath(ns, NAME))).body;
const warnings = async (ns: string) => {
  const { body } = await admin.request<{ items: { reason: string; message: string; type: string }[] }>(
    'GET',
    `/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${NAME}`,
  );
  return body.items.filter((e) => e.type === 'Warning').map((e) => [e.reason, e.message]);
};

beforeAll(async () => {
  [world, server] = await Promise.all([startWorld(), startKubeWithCrd()]);
  ({ api, admin } = server);
  await server.namespace('team-a');
  await server.namespace('team-b');
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await Promise.all([stopWorld(world), server?.stop()]);
});

test("a second shard's object of the same name never writes to the first tenant's stack: it is Stalled, says why, and the first stays Ready and untouched", async () => {
  // GIVEN team A's cluster, created by shard a and Ready
  await applyObject(
    admin,
    'team-a',
    motoCluster(world, NAME, (raw) => (raw.metadata.labels = { tier: 'a' })),
  );
  expect((await shard('a')).out).toBe(`${NAME}\tapplied\n`);
  const owned = await stackOf(world, STACK);
  expect(owned?.Tags).toContainEqual({ Key: OWNER_TAG, Value: stackOwner(NAME, 'team-a') });
  const before = await stackActivity(world, STACK);

  // WHEN team B creates an object of the same name in its namespace, selected by shard b, and shard b passes twice
  await applyObject(
    admin,
    'team-b',
    motoCluster(world, NAME, (raw) => {
      raw.metadata.labels = { tier: 'b' };
      raw.spec.pool.instanceTypes = ['m6i.xlarge'];
    }),
  );
  const b1 = await shard('b');
  const b2 = await shard('b');

  // THEN shard b wrote nothing to the stack (no change set, no event), and said so
  for (const run of [b1, b2])
    expect(run.out).toMatch(new RegExp(`^${NAME}\tstalled\tstack ${STACK} belongs to kubernetes:team-a/${NAME} `));
  expect(await stackActivity(world, STACK)).toEqual(before);
  const teamB = await object('team-b');
  expect(getCondition(teamB.status, 'Stalled')).toMatchObject({ status: 'True', reason: 'StackOwnedElsewhere' });
  expect(getCondition(teamB.status, 'Ready')?.status).toBe('False');
  expect(teamB.status.stackId).toBeUndefined();
  expect(await warnings('team-b')).toEqual([
    ['Stalled', expect.stringContaining(`belongs to ${stackOwner(NAME, 'team-a')}`)],
  ]);

  // AND team A's object is Ready on its own stack, and its shard finds nothing to do (no drift to take back)
  const teamA = await object('team-a');
  expect(getCondition(teamA.status, 'Ready')?.status).toBe('True');
  expect(teamA.status.stackId).toBe(owned?.StackId);
  expect((await shard('a')).out).toBe(`${NAME}\tunchanged\n`);
  expect(await stackActivity(world, STACK)).toEqual(before);
  expect(await warnings('team-a')).toEqual([]);
}, 300_000);
