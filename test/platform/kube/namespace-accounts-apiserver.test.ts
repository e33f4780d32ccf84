import { CRD_NAME, workerClusterCrd } from '../../../lib/platform/kube/crd';
import { ACCOUNTS_ANNOTATION, namespaceAccountsPolicy } from '../../../lib/platform/kube/manifests-rbac';
import { ownSecret, rawExample } from '../../helpers/clusters';
import { KubeApiServer, startKubeApiServer } from '../../helpers/kube-apiserver';
import { create, kubeRequest, waitEstablished } from '../../helpers/kube-rest';

/**
 * A namespace bound to its AWS accounts (issue 21): the real kube-apiserver v1.37.2 runs the admission policy that
 * `worker-stacks manifests` renders, so a namespace editor cannot point a WorkerCluster at an account the namespace
 * was not given.
 */
let api: KubeApiServer;
const EXAMPLE_ACCOUNT = rawExample('prod-eu1').spec.account as string;
const OTHER_ACCOUNT = '999999999999';

const ns = (name: string, accounts?: string) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, ...(accounts === undefined ? {} : { annotations: { [ACCOUNTS_ANNOTATION]: accounts } }) },
});
/** prod-eu1 as `name` in `account` (its ARNs moved along, its secret under its own name: valid by the CRD's rules). */
const cluster = (namespace: string, name: string, account: string) => {
  const raw = JSON.parse(JSON.stringify(rawExample('prod-eu1')).split(EXAMPLE_ACCOUNT).join(account));
  return ownSecret({ ...raw, metadata: { name, namespace } });
};

async function applyPolicy(requireBinding: boolean): Promise<void> {
  for (const o of namespaceAccountsPolicy(requireBinding)) {
    const r = await create(api, o);
    if (r.status !== 201) throw new Error(`${o.kind} refused: ${JSON.stringify(r.body)}`);
  }
}

/** The policy is enforced once the API server has loaded it: a refused probe says so. */
async function waitEnforced(probe: () => Promise<{ status: number; body: unknown }>): Promise<void> {
  let last: unknown;
  for (let i = 0; i < 100; i++) {
    const r = await probe();
    if (r.status === 403) return;
    last = r.body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the admission policy was never enforced (last answer ${JSON.stringify(last)})`);
}

beforeAll(async () => {
  api = await startKubeApiServer();
  expect((await create(api, workerClusterCrd())).status).toBe(201);
  await waitEstablished(api, CRD_NAME);
  for (const n of [ns('team-bound', `${EXAMPLE_ACCOUNT}, 222222222222`), ns('team-free')])
    expect((await create(api, n)).status).toBe(201);
  await applyPolicy(false);
  await waitEnforced(() => create(api, cluster('team-bound', 'probe', OTHER_ACCOUNT), { dryRun: true }));
}, 180_000);
afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await api?.stop();
});

describe('a namespace annotated with its accounts', () => {
  test.each([
    ['one of its accounts', '222222222222', 201],
    ['another account', OTHER_ACCOUNT, 422],
  ])('a WorkerCluster naming %s: %s', async (_what, account, status) => {
    // WHEN a namespace editor creates it
    const r = await create(api, cluster('team-bound', `c-${account}`, account));
    // THEN only the namespace's accounts get in, with a message naming the field, the account and the fix
    expect(r.status === 201 ? 201 : r.body.code).toBe(status === 201 ? 201 : 403);
    if (status !== 201)
      expect(r.body.message).toContain(
        `spec.account: ${account} is not an account namespace team-bound may use (${ACCOUNTS_ANNOTATION}: ${EXAMPLE_ACCOUNT}, 222222222222; a cluster admin sets it on the Namespace)`,
      );
  });

  test('an update that moves an allowed object to another account is refused', async () => {
    // GIVEN an object in an allowed account
    expect((await create(api, cluster('team-bound', 'moving', EXAMPLE_ACCOUNT))).status).toBe(201);
    // WHEN its account (and the ARNs that name it, valid by the CRD's rules) is patched
    const r = await kubeRequest(
      api,
      'PATCH',
      '/apis/worker-stacks.io/v1alpha1/namespaces/team-bound/workerclusters/moving',
      { spec: cluster('team-bound', 'moving', OTHER_ACCOUNT).spec },
      api.adminToken,
      'application/merge-patch+json',
    );
    // THEN
    expect(r.status).toBe(403);
    expect(r.body.message).toContain(`spec.account: ${OTHER_ACCOUNT} is not an account namespace team-bound may use`);
  });
});

test('an unannotated namespace is not restricted by default', async () => {
  // WHEN / THEN
  expect((await create(api, cluster('team-free', 'anything', OTHER_ACCOUNT))).status).toBe(201);
});

test('with --require-account-binding, an unannotated namespace may name no account', async () => {
  // GIVEN the strict policy in place of the default one
  for (const o of namespaceAccountsPolicy(false).reverse()) {
    const plural =
      o.kind === 'ValidatingAdmissionPolicy' ? 'validatingadmissionpolicies' : 'validatingadmissionpolicybindings';
    expect(
      (await kubeRequest(api, 'DELETE', `/apis/admissionregistration.k8s.io/v1/${plural}/${o.metadata.name}`)).status,
    ).toBe(200);
  }
  await applyPolicy(true);
  // WHEN an object is created in the unannotated namespace
  await waitEnforced(() => create(api, cluster('team-free', 'probe', EXAMPLE_ACCOUNT), { dryRun: true }));
  const r = await create(api, cluster('team-free', 'strict', EXAMPLE_ACCOUNT));
  // THEN it is refused, saying the annotation is not set
  expect(r.status).toBe(403);
  expect(r.body.message).toContain(`(${ACCOUNTS_ANNOTATION}: not set; a cluster admin sets it on the Namespace)`);
  // AND the bound namespace still takes its own accounts
  expect((await create(api, cluster('team-bound', 'still-fine', EXAMPLE_ACCOUNT))).status).toBe(201);
});
