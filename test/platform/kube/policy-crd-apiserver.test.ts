import { POLICY_CRD_NAME, POLICY_PLURAL, rolloutPolicyCrd } from '../../../lib/platform/kube/policy-crd';
import { validatePolicy } from '../../../lib/engines/rollout/policy-source';
import { apiServerWithCrdForFile, create, kubeRequest } from '../../helpers/kube-rest';

/**
 * The WorkerRolloutPolicy CRD against the real kube-apiserver: it installs (every CEL rule compiles within the cost
 * budget), a good policy is accepted as written, each bad one is refused at the field with the file store's message,
 * and what CEL cannot check (a cron schedule, a time zone) is accepted here and refused by the daemon's validation.
 */
const NS = 'default';
const api = apiServerWithCrdForFile(rolloutPolicyCrd, POLICY_CRD_NAME);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- policies are reshaped freely, into invalid forms too
type Raw = any;

let n = 0;
/** A policy of three waves (the README's), named afresh, changed by `mutate`. */
function policy(mutate: (o: Raw) => void = () => undefined, name = `p-${++n}`): Raw {
  const o: Raw = {
    apiVersion: 'worker-stacks.io/v1alpha1',
    kind: 'WorkerRolloutPolicy',
    metadata: { name, namespace: NS },
    spec: {
      waves: [
        { name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' },
        {
          name: 'early',
          selector: { matchExpressions: [{ key: 'ring', operator: 'In', values: ['early'] }] },
          maxConcurrent: '50%',
          soak: '30m',
          maintenanceWindows: [{ schedule: '0 2 * * 1-5', duration: '4h', timeZone: 'Europe/Berlin' }],
        },
      ],
      remainder: { maxConcurrent: '25%', soak: '0s' },
      maxConcurrentRolls: 40,
      haltOnFailure: true,
    },
  };
  mutate(o);
  return o;
}

test('a good policy is accepted and stored as written; it validates as the file store validates it', async () => {
  // GIVEN
  const o = policy();
  // WHEN
  const r = await create(api(), o);
  // THEN
  expect(r.status).toBe(201);
  expect(r.body.spec).toEqual(o.spec);
  const { namespace: _ns, ...metadata } = o.metadata;
  expect(validatePolicy({ ...o, metadata }, `WorkerRolloutPolicy/${o.metadata.name}`).problems).toEqual([]);
});

test('kubectl get wrp: the short name, and the Paused and First Wave columns', async () => {
  // GIVEN a paused policy
  await create(
    api(),
    policy((o) => (o.spec.paused = true), 'shown'),
  );
  // WHEN the table kubectl asks for is read, and the discovery document
  const table = await kubeRequest(
    api(),
    'GET',
    `/apis/worker-stacks.io/v1alpha1/namespaces/${NS}/${POLICY_PLURAL}/shown`,
    undefined,
    api().adminToken,
    undefined,
    undefined,
    'application/json;as=Table;v=v1;g=meta.k8s.io',
  );
  const discovery = await kubeRequest(api(), 'GET', '/apis/worker-stacks.io/v1alpha1');
  // THEN
  const columns: string[] = table.body.columnDefinitions.map((c: { name: string }) => c.name);
  const row = Object.fromEntries(columns.map((c, i) => [c, table.body.rows[0].cells[i]]));
  expect(row).toMatchObject({ Name: 'shown', Paused: true, 'First Wave': 'canary' });
  expect(columns).toEqual(['Name', 'Paused', 'First Wave', 'Halt On Failure', 'Max Rolls', 'Age']);
  expect(discovery.body.resources.find((x: { name: string }) => x.name === POLICY_PLURAL)).toMatchObject({
    shortNames: ['wrp'],
    kind: 'WorkerRolloutPolicy',
    namespaced: true,
  });
});

/** [what, mutation, the field the API server names, its message (the file store's, or as near as CEL can build it)]. */
const BAD: Array<[string, (o: Raw) => void, string, string]> = [
  [
    'two waves of one name',
    (o) => (o.spec.waves[1].name = 'canary'),
    'spec.waves',
    'spec.waves[1].name duplicates spec.waves[0].name (wave names must be unique)',
  ],
  [
    'a wave named like the remainder',
    (o) => (o.spec.waves[1].name = 'remainder'),
    'spec.remainder',
    '"remainder" is already the name of a wave; wave names must be unique',
  ],
  [
    'a wave named like a renamed remainder',
    (o) => (o.spec.remainder.name = 'early'),
    'spec.remainder',
    '"early" is already the name of a wave',
  ],
  [
    'a wave name that is no DNS label',
    (o) => (o.spec.waves[0].name = 'Canary_1'),
    'spec.waves[0].name',
    '"Canary_1" is not a DNS label',
  ],
  [
    'a percentage above 100',
    (o) => (o.spec.waves[1].maxConcurrent = '110%'),
    'spec.waves[1].maxConcurrent',
    '"110%" is not a count (a whole number 1-10000) or a percentage ("1%"-"100%")',
  ],
  [
    'a count of 0',
    (o) => (o.spec.waves[0].maxConcurrent = 0),
    'spec.waves[0].maxConcurrent',
    '0 is not a count (a whole number 1-10000) or a percentage ("1%"-"100%")',
  ],
  [
    'a soak that is no duration',
    (o) => (o.spec.waves[0].soak = '1 hour'),
    'spec.waves[0].soak',
    '"1 hour" is not a duration (such as 0s, 30m, 2h, 1h30m)',
  ],
  [
    'a soak over 30 days',
    (o) => (o.spec.remainder.soak = '721h'),
    'spec.remainder.soak',
    '721h is longer than 30 days',
  ],
  [
    'a window of no length',
    (o) => (o.spec.waves[1].maintenanceWindows[0].duration = '0s'),
    'spec.waves[1].maintenanceWindows[0].duration',
    '"0s" is not a duration above zero (such as 30m, 4h, 1h30m)',
  ],
  [
    'a window over a week',
    (o) => (o.spec.waves[1].maintenanceWindows[0].duration = '169h'),
    'spec.waves[1].maintenanceWindows[0].duration',
    '169h is longer than a week',
  ],
  [
    'In without values',
    (o) => (o.spec.waves[1].selector.matchExpressions[0].values = []),
    'spec.waves[1].selector.matchExpressions[0]',
    'values: operator In needs at least one value',
  ],
  [
    'Exists with values',
    (o) => (o.spec.waves[1].selector.matchExpressions[0].operator = 'Exists'),
    'spec.waves[1].selector.matchExpressions[0]',
    'values: operator Exists takes no values',
  ],
  [
    'a label value with a space',
    (o) => (o.spec.waves[0].selector.matchLabels.ring = 'not valid'),
    'spec.waves[0].selector.matchLabels[ring]',
    '"not valid" is not a label value',
  ],
  [
    'a count that is not whole',
    (o) => (o.spec.waves[0].maxConcurrent = 1.5),
    'spec.waves[0].maxConcurrent',
    'must be of type integer,string',
  ],
  [
    'a label key with a bang',
    (o) => (o.spec.clusterSelector = { matchLabels: { 'bad key!': 'x' } }),
    'spec.clusterSelector.matchLabels',
    '"bad key!" is not a label key',
  ],
  [
    'maxConcurrentRolls of 0',
    (o) => (o.spec.maxConcurrentRolls = 0),
    'spec.maxConcurrentRolls',
    '0 is not a whole number of at least 1',
  ],
  ['no wave', (o) => (o.spec.waves = []), 'spec.waves', 'should have at least 1 items'],
  [
    '33 waves',
    (o) =>
      (o.spec.waves = Array.from({ length: 33 }, (_, i) => ({
        name: `w${i}`,
        selector: { matchLabels: { ring: `r${i}` } },
      }))),
    'spec.waves',
    'must have at most 32 items',
  ],
];

// A rest parameter: a function declaring more parameters than a row has gets jest's `done` callback as the last one.
test.each(BAD)('%s: refused by the API server at the field; validate refuses it too', async (...row) => {
  // GIVEN
  const [, mutate, field, message] = row;
  const o = policy(mutate);
  // WHEN
  const r = await create(api(), o);
  // THEN
  expect({ status: r.status, reason: r.body.reason }).toEqual({ status: 422, reason: 'Invalid' });
  const causes: Array<{ field: string; message: string }> = r.body.details?.causes ?? [];
  expect(causes.filter((c) => c.field === field).map((c) => c.message)).toEqual(
    expect.arrayContaining([expect.stringContaining(message)]),
  );
  const { namespace: _ns, ...metadata } = o.metadata;
  expect(validatePolicy({ ...o, metadata }, `WorkerRolloutPolicy/${o.metadata.name}`).problems).not.toEqual([]);
});

test('a name the file store refuses is refused: a DNS label of at most 40 characters', async () => {
  // WHEN
  const r = await create(api(), policy(undefined, 'p'.repeat(41)));
  // THEN
  expect(r.status).toBe(422);
  expect(r.body.details.causes).toContainEqual(
    expect.objectContaining({ field: 'metadata.name', message: expect.stringContaining('is not a DNS label') }),
  );
});

test("a cron schedule and a time zone are the daemon's to check: accepted here, refused by validatePolicy (every roll then holds)", async () => {
  // GIVEN a window CEL cannot judge
  const o = policy(
    (p) => (p.spec.waves[1].maintenanceWindows[0] = { schedule: '0 2 * *', duration: '4h', timeZone: 'Berlin' }),
  );
  // WHEN
  const r = await create(api(), o, { dryRun: true });
  // THEN
  expect(r.status).toBe(201);
  const { namespace: _ns, ...metadata } = o.metadata;
  expect(validatePolicy({ ...o, metadata }, 'WorkerRolloutPolicy/x').problems.map((p) => p.path)).toEqual([
    'spec.waves[1].maintenanceWindows[0].schedule',
    'spec.waves[1].maintenanceWindows[0].timeZone',
  ]);
});

test('an unknown field is refused under strict field validation', async () => {
  // WHEN
  const r = await create(
    api(),
    policy((o) => (o.spec.waves[0].soakTime = '1h')),
  );
  // THEN
  expect(r.status).toBe(400);
  expect(r.body.message).toContain('unknown field "spec.waves[0].soakTime"');
});
