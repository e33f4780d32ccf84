import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { LabelSelector } from '../../lib/platform/kube/label-selector';
import { REPO } from '../helpers/clusters';
import { CHART, goTool, helmTemplate, Json, run, runOk } from './tools';

// The chart rendered by the real helm (v3.22, built from the Go module proxy) under the values files of ci/: lint,
// then what each values file must change. The daemon's flags are checked against the CLI's own --help, so a new
// `reconcile` flag without a value (or a documented reason) fails here.

const VALUES_FILES = fs
  .readdirSync(path.join(CHART, 'ci'))
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();
const valuesArgs = (file: string) => ['-f', path.join(CHART, 'ci', file)];
const deployments = (objects: Json[]) => objects.filter((o) => o.kind === 'Deployment');
const argsOf = (d: Json): string[] => d.spec.template.spec.containers[0].args;
/** The value after a flag in an argument list, or undefined. */
const flagValue = (args: string[], flag: string) => (args.includes(flag) ? args[args.indexOf(flag) + 1] : undefined);

test('the values files of ci/ are the three this test knows', () => {
  expect(VALUES_FILES).toEqual(['flags-values.yaml', 'minimal-values.yaml', 'shards-values.yaml']);
});

test.each([['(defaults)', [] as string[]], ...VALUES_FILES.map((f) => [f, valuesArgs(f)] as [string, string[]])])(
  'helm lint --strict passes with %s',
  (_name, args) => {
    // WHEN
    const r = run(goTool('helm'), ['lint', '--strict', CHART, ...args]);
    // THEN
    expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 0 });
    expect(r.stdout).toContain('1 chart(s) linted, 0 chart(s) failed');
  },
);

test('shards: one Deployment, PodDisruptionBudget and Lease per shard, each with its own selector; image by digest; IRSA; roles aggregated', () => {
  // WHEN
  const objects = helmTemplate(valuesArgs('shards-values.yaml'));
  // THEN one Deployment per shard, with its --selector and Lease name, and pods only its own selector matches
  const ds = deployments(objects);
  expect(
    ds.map((d) => [
      d.metadata.name,
      d.spec.replicas,
      flagValue(argsOf(d), '--shard'),
      flagValue(argsOf(d), '--selector'),
      argsOf(d).includes('--leader-election-id'),
    ]),
  ).toEqual([
    ['worker-stacks-canary', 1, 'canary', 'tier=canary', false],
    ['worker-stacks-main', 2, 'main', 'tier!=canary', false],
  ]);
  for (const d of ds) {
    const shard = d.metadata.name.replace('worker-stacks-', '');
    expect(d.spec.selector.matchLabels['worker-stacks.io/shard']).toBe(shard);
    expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    expect(d.spec.template.spec.containers[0].image).toBe(
      'registry.example.com/worker-stacks:0.1.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    );
  }
  const pdbs = objects.filter((o) => o.kind === 'PodDisruptionBudget');
  expect(pdbs.map((p) => [p.metadata.name, p.spec.selector.matchLabels['worker-stacks.io/shard']])).toEqual([
    ['worker-stacks-canary', 'canary'],
    ['worker-stacks-main', 'main'],
  ]);
  // AND the leader-election Role may get and update exactly the shards' Leases (the daemon names them from --shard),
  // and the Lease admission policy lets it create only those
  const role = objects.find((o) => o.kind === 'Role' && o.metadata.name === 'worker-stacks-leader-election')!;
  expect(role.rules[1].resourceNames).toEqual(['worker-stacks-canary', 'worker-stacks-main']);
  const leasePolicy = objects.find(
    (o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === 'worker-stacks-daemon-leases',
  )!;
  expect(leasePolicy.spec.validations[0].expression).toBe(
    "object.metadata.namespace == 'worker-stacks' && object.metadata.name in ['worker-stacks-canary', 'worker-stacks-main']",
  );
  // AND the Service selects the replicas of every shard
  const svc = objects.find((o) => o.kind === 'Service')!;
  for (const d of ds) expect(d.spec.template.metadata.labels).toMatchObject(svc.spec.selector);
  // AND IRSA, aggregation, and the prometheus-operator objects
  expect(objects.find((o) => o.kind === 'ServiceAccount')!.metadata.annotations).toEqual({
    'eks.amazonaws.com/role-arn': 'arn:aws:iam::111111111111:role/worker-stacks',
  });
  expect(objects.find((o) => o.metadata.name === 'worker-stacks-edit')!.metadata.labels).toMatchObject({
    'rbac.authorization.k8s.io/aggregate-to-edit': 'true',
    'rbac.authorization.k8s.io/aggregate-to-admin': 'true',
  });
  expect(objects.find((o) => o.metadata.name === 'worker-stacks-view')!.metadata.labels).toMatchObject({
    'rbac.authorization.k8s.io/aggregate-to-view': 'true',
  });
  expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['ServiceMonitor', 'PrometheusRule', 'ConfigMap']));
  const rule = objects.find((o) => o.kind === 'PrometheusRule')!;
  expect(rule.spec.groups[0].rules.map((r: Json) => r.alert)).toContain('WorkerStacksClusterStalled');
  // Prometheus's own templating reaches the PrometheusRule untouched by Helm's
  expect(JSON.stringify(rule)).toContain('{{ $labels.cluster }}');
});

test('defaults: view and edit roles are NOT aggregated into the built-in roles', () => {
  // WHEN
  const objects = helmTemplate();
  // THEN
  for (const name of ['worker-stacks-view', 'worker-stacks-edit']) {
    const labels = objects.find((o) => o.kind === 'ClusterRole' && o.metadata.name === name)!.metadata.labels;
    expect(Object.keys(labels).filter((k) => k.startsWith('rbac.authorization.k8s.io/aggregate-to'))).toEqual([]);
  }
});

test('minimal: no CRDs, namespace, admission policy, PDB or NetworkPolicy; one replica watching one namespace without leader election', () => {
  // WHEN
  const objects = helmTemplate(valuesArgs('minimal-values.yaml'));
  // THEN
  expect(objects.map((o) => o.kind).sort()).toEqual([
    'ClusterRole',
    'ClusterRole',
    'ClusterRole',
    'ClusterRoleBinding',
    'Deployment',
    'Service',
    'ServiceAccount',
  ]);
  const [d] = deployments(objects);
  expect(d.metadata.namespace).toBe('platform-system');
  expect(d.spec.replicas).toBe(1);
  expect(argsOf(d)).toEqual(expect.arrayContaining(['--namespace', 'platform', '--no-leader-elect']));
  expect(argsOf(d)).not.toContain('--all-namespaces');
  const crb = objects.find((o) => o.kind === 'ClusterRoleBinding')!;
  expect(crb.subjects).toEqual([{ kind: 'ServiceAccount', name: 'worker-stacks', namespace: 'platform-system' }]);
});

// Flags the chart does not offer as values, and why (docs/kubernetes-operations.md says the same).
const NOT_VALUES: Record<string, string> = {
  '--once': 'the chart runs the daemon (--watch)',
  '--store': 'always kubernetes',
  '--state-dir': 'the file store only',
  '--wait-timeout-minutes': '--once only',
  '--kubeconfig': "the pod's ServiceAccount",
  '--help': 'not a setting',
  // The negations of flags whose positive form the chart passes or omits (--assume-role is the default).
  '--assume-role': 'the default; reconciler.assumeRole: false gives --no-assume-role',
};

test('every flag of `worker-stacks reconcile` is a value of the chart (flags-values.yaml sets each), or is named here with the reason it is not', () => {
  // GIVEN the daemon's flags, from its own --help
  const help = runOk(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'reconcile', '--help']);
  const cliFlags = [...new Set(help.match(/--[a-z0-9-]+/g))].sort();
  // WHEN the chart is rendered with every value set (and with the namespace instead of all namespaces)
  const args = ['flags-values.yaml', 'minimal-values.yaml', 'shards-values.yaml'].flatMap((f) =>
    argsOf(deployments(helmTemplate(valuesArgs(f)))[0]),
  );
  // THEN each flag is rendered, or excused
  const missing = cliFlags.filter((f) => !args.includes(f) && !(f in NOT_VALUES));
  expect(missing).toEqual([]);
  // AND the chart renders no flag the CLI does not know
  expect(args.filter((a) => a.startsWith('--') && !cliFlags.includes(a))).toEqual([]);
});

test('flags: each value reaches its flag, numbers as the CLI parses them; the probes and Service follow the port', () => {
  // WHEN
  const objects = helmTemplate(valuesArgs('flags-values.yaml'));
  const [d] = deployments(objects);
  const args = argsOf(d);
  // THEN
  expect(
    Object.fromEntries(
      [
        '--selector',
        '--concurrency',
        '--workers',
        '--resync-minutes',
        '--log-level',
        '--synth-threads',
        '--poll-seconds',
        '--max-update-attempts',
        '--cfn-read-qps',
        '--cfn-write-qps',
        '--drift',
        '--role-name',
        '--external-id',
        '--leader-election-id',
        '--leader-election-namespace',
        '--lease-duration-seconds',
        '--renew-deadline-seconds',
        '--retry-period-seconds',
        '--shard-check-seconds',
        '--port',
        '--grace-seconds',
      ].map((f) => [f, flagValue(args, f)]),
    ),
  ).toEqual({
    '--selector': 'team=platform',
    '--concurrency': '8',
    '--workers': '6',
    '--resync-minutes': '5',
    '--log-level': 'debug',
    '--synth-threads': '1',
    '--poll-seconds': '10',
    '--max-update-attempts': '3',
    '--cfn-read-qps': '2.5',
    '--cfn-write-qps': '1',
    '--drift': 'report',
    '--role-name': 'platform-deployer',
    '--external-id': 'ext-1234',
    '--leader-election-id': 'platform-reconciler',
    '--leader-election-namespace': 'platform-leases',
    '--lease-duration-seconds': '30',
    '--renew-deadline-seconds': '20',
    '--retry-period-seconds': '5',
    '--shard-check-seconds': '120',
    '--port': '9090',
    '--grace-seconds': '30',
  });
  expect(args.slice(args.indexOf('--cluster'), args.indexOf('--cluster') + 3)).toEqual([
    '--cluster',
    'prod-eu1',
    'staging-us1',
  ]);
  expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(50);
  expect(d.spec.template.spec.containers[0].ports).toEqual([{ name: 'ops', containerPort: 9090, protocol: 'TCP' }]);
  expect(d.spec.template.spec.containers[0].env).toContainEqual({ name: 'AWS_REGION', value: 'eu-west-1' });
  expect(objects.find((o) => o.kind === 'Service')!.spec.ports[0].port).toBe(9090);
  // AND the Lease Role sits in the Lease's namespace, for the Lease's name
  const role = objects.find((o) => o.kind === 'Role')!;
  expect([role.metadata.namespace, role.rules[1].resourceNames]).toEqual(['platform-leases', ['platform-reconciler']]);
});

test.each([
  ['a digest that is not sha256', ['--set', 'image.digest=sha256:abc'], 'image.digest: "sha256:abc" is not a digest'],
  [
    'a role ARN that is not a role',
    ['--set', 'serviceAccount.roleArn=arn:aws:iam::1:user/x'],
    'serviceAccount.roleArn: "arn:aws:iam::1:user/x" is not an IAM role ARN',
  ],
  ['a shard without a selector', ['--set', 'shards[0].name=a'], "at '/shards/0': missing property 'selector'"],
  [
    'a shard with an empty selector',
    ['--set', 'shards[0].name=a,shards[0].selector='],
    'shards[a].selector: a shard needs a label selector',
  ],
  [
    'a shard name that is not a DNS label',
    ['--set', 'shards[0].name=A_b', '--set', 'shards[0].selector=x=y'],
    'shards[].name: "A_b" is not a DNS label',
  ],
  [
    'two shards of one name',
    ['--set', 'shards[0].name=a,shards[0].selector=x=y,shards[1].name=a,shards[1].selector=x!=y'],
    'shards[].name: "a" is given twice',
  ],
  [
    'two shards one object could match',
    ['--set', 'shards[0].name=a,shards[0].selector=x=y,shards[1].name=b,shards[1].selector=z=w'],
    'shards[b].selector "z=w" overlaps shards[a].selector "x=y": an object could match both, and both shards would reconcile it',
  ],
  [
    'a shard selector the daemon cannot read',
    ['--set', 'shards[0].name=a,shards[0].selector=x=y=z'],
    'shards[a].selector: "x=y=z" is not a label key',
  ],
  [
    'a Lease name with shards',
    ['--set', 'shards[0].name=a,shards[0].selector=x=y,reconciler.leaderElection.id=mine'],
    "reconciler.leaderElection.id: with shards each shard's Lease is worker-stacks-<shard name>",
  ],
  [
    'a misspelt reconciler value (values.schema.json)',
    ['--set', 'reconciler.concurency=3'],
    "at '/reconciler': additional properties 'concurency' not allowed",
  ],
  [
    'a log level the CLI does not know',
    ['--set', 'reconciler.logLevel=loud'],
    "at '/reconciler/logLevel': value must be one of",
  ],
  [
    'more workers than the CLI allows (1-64)',
    ['--set', 'reconciler.workers=100'],
    "at '/reconciler/workers': maximum: got 100, want 64",
  ],
  [
    'a repository that names a digest',
    ['--set', `image.repository=r@sha256:${'a'.repeat(64)}`],
    'image.repository: "r@sha256:',
  ],
])('helm template refuses %s, naming the value', (_what, args, message) => {
  // WHEN
  const r = run(goTool('helm'), ['template', 'worker-stacks', CHART, ...args]);
  // THEN
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(message);
});

/** [shard a's selector, shard b's selector, reconciler.selector]: the pairs the daemon's overlap rule tells apart. */
const SHARD_PAIRS: Array<[string, string, string]> = [
  ['tier=canary', 'tier!=canary', ''],
  ['a=1', 'a=2', ''],
  ['a=1', 'b=2', ''],
  ['a==1', 'a = 1', ''],
  ['a in (x,y)', 'a notin (x)', ''],
  ['a in (x,y)', 'a notin (x,y)', ''],
  ['a in (x,y)', 'a in (y,z)', ''],
  ['env in (p,q)', 'env in (r)', ''],
  ['a in (x,y),b=1', 'a in (y,z),b!=1', ''],
  ['a', '!a', ''],
  ['!a', 'a=1', ''],
  ['a=1,b', 'a=1,!b', ''],
  ['a=1', 'a=1,c notin (d)', ''],
  ['x=1', 'y=1', 'x!=1'],
  ['x=1', 'y=1', 'z=1'],
];

test.each(SHARD_PAIRS)(
  'shards %p and %p (reconciler.selector %p): helm refuses them exactly when the daemon finds them overlapping',
  (a, b, global) => {
    // GIVEN the daemon's own decision (lib/platform/kube/label-selector.ts), on each shard's selector with the common one
    const both = (s: string) => LabelSelector.parse([s, global].filter(Boolean).join(','));
    const overlap = both(a).overlaps(both(b));
    // WHEN helm renders the two shards
    const values = stringify({
      shards: [
        { name: 'a', selector: a },
        { name: 'b', selector: b },
      ],
      reconciler: { selector: global },
    });
    const r = run(goTool('helm'), ['template', 'worker-stacks', CHART, '-f', '-'], { input: values });
    // THEN it fails, naming both shards, exactly when they overlap
    expect({
      code: r.code === 0 ? 0 : 'failed',
      overlapMessage: r.stderr.includes(
        `shards[b].selector ${JSON.stringify(b)} overlaps shards[a].selector ${JSON.stringify(a)}`,
      ),
    }).toEqual(overlap ? { code: 'failed', overlapMessage: true } : { code: 0, overlapMessage: false });
  },
);

test('image: a digest pins repository:tag@digest; the tag defaults to the chart appVersion', () => {
  // WHEN
  const image = (args: string[]) => deployments(helmTemplate(args))[0].spec.template.spec.containers[0].image;
  // THEN
  expect(image(['--set', `image.digest=sha256:${'a'.repeat(64)}`])).toBe(
    `worker-stacks:0.1.0@sha256:${'a'.repeat(64)}`,
  );
  expect(image([])).toBe('worker-stacks:0.1.0');
});

test("the chart's version and appVersion are the package's (one release of both)", () => {
  // GIVEN
  const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
  // WHEN
  const chart = runOk(goTool('helm'), ['show', 'chart', CHART]);
  // THEN
  expect(chart).toMatch(new RegExp(`^version: ${version.replace(/\./g, '\\.')}$`, 'm'));
  expect(chart).toMatch(new RegExp(`^appVersion: "?${version.replace(/\./g, '\\.')}"?$`, 'm'));
});
