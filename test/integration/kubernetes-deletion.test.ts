import { KubeApiError } from '../../lib/core/errors';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubeWorkerCluster, objectPath, STACK_FINALIZER } from '../../lib/platform/kube/resource';
import { workerStackName } from '../../lib/core/naming';
import { KubeApiServer } from '../helpers/kube-apiserver';
import { KubeWithCrd, startKubeWithCrd } from '../helpers/kube-crd';
import { applyObject } from '../helpers/kube-objects';
import { AWS_FLAGS, cli, motoCluster, stackOf, startWorld, stopWorld, World } from './harness';

// spec.deletionPolicy against moto and a real API server: Delete holds the object with the finalizer until its stack
// is deleted; Retain (the default) lets the object go and keeps the stack.

const NS = 'fleet';
let world: World;
let kube: KubeWithCrd;
let api: KubeApiServer;
let admin: KubeClient;
const reconcile = () =>
  cli([
    'reconcile',
    '--once',
    '--store',
    'kubernetes',
    '--kubeconfig',
    api.kubeconfig,
    '--namespace',
    NS,
    ...AWS_FLAGS,
  ]);
const object = async (name: string) => {
  try {
    return (await admin.request<KubeWorkerCluster>('GET', objectPath(NS, name))).body;
  } catch (e) {
    if (e instanceof KubeApiError && e.statusCode === 404) return undefined;
    throw e;
  }
};

beforeAll(async () => {
  [world, kube] = await Promise.all([startWorld(), startKubeWithCrd()]);
  ({ api, admin } = kube);
  await kube.namespace(NS);
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await Promise.all([stopWorld(world), kube?.stop()]);
});

test('Delete: the object is held by the finalizer until its stack is deleted, then it goes', async () => {
  // GIVEN a cluster with deletionPolicy Delete, reconciled: its stack exists and the object holds the finalizer
  await applyObject(
    admin,
    NS,
    motoCluster(world, 'del-delete', (r) => (r.spec.deletionPolicy = 'Delete')),
  );
  expect((await reconcile()).out).toContain('del-delete\tapplied');
  expect((await object('del-delete'))?.metadata.finalizers).toEqual([STACK_FINALIZER]);
  expect((await stackOf(world, workerStackName('del-delete')))?.StackStatus).toBe('CREATE_COMPLETE');

  // WHEN the user deletes the object
  await admin.request('DELETE', objectPath(NS, 'del-delete'));

  // THEN the API server keeps it (marked) until the reconciler has deleted the stack and removed the finalizer
  expect((await object('del-delete'))?.metadata.deletionTimestamp).toBeDefined();
  const run = await reconcile();
  expect(run.out).toContain('del-delete\tdeleted');
  expect(run.code).toBe(0);
  expect(await stackOf(world, workerStackName('del-delete'))).toBeUndefined();
  expect(await object('del-delete')).toBeUndefined();
});

test('Retain (the default): deleting the object leaves the stack', async () => {
  // GIVEN a cluster without deletionPolicy, reconciled: no finalizer
  await applyObject(admin, NS, motoCluster(world, 'del-retain'));
  expect((await reconcile()).out).toContain('del-retain\tapplied');
  expect((await object('del-retain'))?.metadata.finalizers).toBeUndefined();

  // WHEN the user deletes the object and a pass runs
  await admin.request('DELETE', objectPath(NS, 'del-retain'));
  await reconcile();

  // THEN the object is gone at once and the stack stays
  expect(await object('del-retain')).toBeUndefined();
  expect((await stackOf(world, workerStackName('del-retain')))?.StackStatus).toBe('CREATE_COMPLETE');
});
