import { KubeClient } from '../../../lib/platform/kube/client';
import { apiLeaseStore, Lease, LeaderElector } from '../../../lib/platform/kube/leader-election';
import { KubeApiServer, startKubeApiServer } from '../../helpers/kube-apiserver';
import { eventually as until } from '../../helpers/eventually';

/** Leader election against the real API server: the Lease as client-go writes it, takeover, release, RBAC. */
let api: KubeApiServer;
let admin: KubeClient;
beforeAll(async () => {
  api = await startKubeApiServer();
  admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
}, 120_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  admin?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await api?.stop();
});

const OPTS = { namespace: 'default', leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };
const lease = async (name: string) =>
  (await admin.request<Lease>('GET', `/apis/coordination.k8s.io/v1/namespaces/default/leases/${name}`)).body;

const eventually = (probe: () => boolean | Promise<boolean>, what: string, ms = 20_000) => until(probe, what, ms);

test('one of two candidates leads; when it stops, it releases the Lease and the other takes over', async () => {
  // GIVEN two candidates on one Lease
  const clients = [
    KubeClient.fromOptions({ kubeconfig: api.kubeconfig }),
    KubeClient.fromOptions({ kubeconfig: api.kubeconfig }),
  ];
  const [a, b] = ['a', 'b'].map(
    (identity, i) =>
      new LeaderElector(apiLeaseStore(clients[i], 'default', 'election-1'), { ...OPTS, identity, name: 'election-1' }),
  );
  const stopA = new AbortController();
  const stopB = new AbortController();
  const runA = a.run(stopA.signal);
  await eventually(() => a.isLeader(), 'a leads');
  const runB = b.run(stopB.signal);

  // THEN a leads alone; the Lease is as client-go writes it (the API server took its MicroTimes)
  await new Promise((r) => setTimeout(r, 1500));
  expect([a.isLeader(), b.isLeader()]).toEqual([true, false]);
  expect(b.reachable).toBe(true);
  const held = await lease('election-1');
  expect(held.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 3, leaseTransitions: 0 });
  expect(held.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

  // WHEN a stops cleanly
  stopA.abort();
  await runA;

  // THEN b takes over (a released the Lease), with one transition
  await eventually(() => b.isLeader(), 'b leads');
  expect((await lease('election-1')).spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  stopB.abort();
  await runB;
  clients.forEach((c) => c.close());
});

test('a candidate whose identity may not touch Leases (RBAC) never leads, and is not ready', async () => {
  // GIVEN the restricted user, with no RoleBinding
  const client = KubeClient.fromOptions({ kubeconfig: api.restrictedKubeconfig });
  const errors: unknown[] = [];
  const c = new LeaderElector(apiLeaseStore(client, 'default', 'election-2'), {
    ...OPTS,
    identity: 'c',
    name: 'election-2',
    onError: (e) => errors.push(e),
  });

  // WHEN it tries
  const won = await c.attempt();

  // THEN it is refused with 403, says so, and does not count as reaching the API server
  expect(won).toBe(false);
  expect(c.reachable).toBe(false);
  expect(errors[0]).toMatchObject({ statusCode: 403 });
  client.close();
});
