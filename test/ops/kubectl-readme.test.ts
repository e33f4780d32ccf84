import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { ClusterStatus } from '../../lib/model/cluster/schema/status';
import { KubeClient } from '../../lib/platform/kube/client';
import { KubernetesStore } from '../../lib/adapters/stores/kubernetes-store';
import { ownSecret, REPO } from '../helpers/clusters';
import { KubeApiServer, startKubeApiServer } from '../helpers/kube-apiserver';
import { goTool, run, Run, runOk } from '../charts/tools';
import { DOCS, readDoc, shellLines } from '../docs/docs';

// The real kubectl (v1.37.2, built from the Go module proxy like the API server) as the test client: every kubectl
// command README.md and the pages of docs/ show runs here against a real kube-apiserver with the CRDs,
// and what the docs say it prints is checked. A status is written the way the daemon writes it (the Kubernetes
// store, through the status subresource), since no daemon runs in this file.

const NS = 'platform';
let api: KubeApiServer;
let admin: KubeClient;
let kubectl: string;
let scratch: string;

const cli = path.join(REPO, 'bin', 'worker-stacks.js');
const k = (args: readonly string[], input?: string): Run =>
  run(kubectl, ['--kubeconfig', api.kubeconfig, ...args], { input });
const kOk = (args: readonly string[], input?: string): string =>
  runOk(kubectl, ['--kubeconfig', api.kubeconfig, ...args], { input });

/** The fields of the example object the tests below change. */
interface ExampleObject {
  metadata: { name: string };
  spec: { pool: { minSize: number }; listeners: { nodePort: number }[]; surprise?: number };
}

/** The example object with one change, written where a `kubectl apply -f` can read it. */
function example(name: string, mutate: (raw: ExampleObject) => void = () => undefined): string {
  const raw = parse(fs.readFileSync(path.join(REPO, 'clusters', 'prod-eu1.yaml'), 'utf8')) as ExampleObject;
  raw.metadata.name = name;
  ownSecret(raw); // a cluster names only its own secrets
  mutate(raw);
  const file = path.join(scratch, `${name}-${Math.random().toString(36).slice(2, 8)}.yaml`);
  fs.writeFileSync(file, stringify(raw));
  return file;
}

/** What the daemon writes once the stack runs the desired config: Ready=True, the checksums, the stack. */
async function writeReadyStatus(name: string): Promise<void> {
  const store = new KubernetesStore({ client: admin, namespace: NS });
  const rec = (await store.get(name))!;
  const at = new Date().toISOString();
  const cond = (type: string, status: 'True' | 'False', reason: string) => ({
    type,
    status,
    reason,
    message: `${type} ${reason}`,
    lastTransitionTime: at,
    observedGeneration: rec.generation,
  });
  const status: ClusterStatus = {
    observedGeneration: rec.generation,
    desiredChecksum: '3f9a0c1d2e4b'.padEnd(64, '0'),
    cloudConfigChecksum: '3f9a0c1d2e4b'.padEnd(64, '0'),
    stackName: `WorkerStack-${name}`,
    stackStatus: 'UPDATE_COMPLETE',
    conditions: [
      cond('Ready', 'True', 'UpToDate'),
      cond('Progressing', 'False', 'Idle'),
      cond('Degraded', 'False', 'AsExpected'),
      cond('Stalled', 'False', 'AsExpected'),
    ],
  } as ClusterStatus;
  await store.writeStatus(name, status, rec.resourceVersion);
  await store.emit(name, {
    type: 'Normal',
    reason: 'StackComplete',
    message: `WorkerStack-${name} is UPDATE_COMPLETE with config 3f9a0c1d2e4b`,
  });
  await store.flush();
  store.close();
}

beforeAll(async () => {
  kubectl = goTool('kubectl');
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-kubectl-'));
  api = await startKubeApiServer();
  admin = KubeClient.fromOptions({ kubeconfig: api.kubeconfig });
  // docs/kubernetes.md's install: the CRDs from the CLI, piped into kubectl (the other deploy/ files are applied in a test below)
  const crds = runOk(process.execPath, [cli, 'crd']);
  expect(kOk(['apply', '-f', '-'], crds)).toMatch(
    /customresourcedefinition.apiextensions.k8s.io\/workerclusters.worker-stacks.io (created|configured)/,
  );
  kOk([
    'wait',
    '--for=condition=Established',
    'crd/workerclusters.worker-stacks.io',
    'crd/workerrolloutpolicies.worker-stacks.io',
    '--timeout=60s',
  ]);
  kOk(['create', 'namespace', NS]);
}, 180_000);

afterAll(async () => {
  // beforeAll may have failed before either was made
  (admin as KubeClient | undefined)?.close();
  await (api as KubeApiServer | undefined)?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

/**
 * Each kubectl line of the docs' shell blocks, and the test below that runs it. A new kubectl line in README.md or
 * a page of docs/ without a test here fails the last test of this file.
 */
const COVERED: Record<string, string> = {
  'npx worker-stacks crd | kubectl apply -f -': 'beforeAll',
  'npx worker-stacks crd | kubectl apply --server-side -f -': 'server-side apply',
  'kubectl apply -f deploy/crd.yaml -f deploy/namespace.yaml -f deploy/rbac.yaml -f deploy/deployment.yaml':
    'apply deploy/',
  'kubectl apply -n platform -f clusters/prod-eu1.yaml': 'apply, get, describe',
  'kubectl apply -f prod-eu1.yaml': 'a bad object',
  'kubectl get wc -A': 'apply, get, describe',
  'kubectl get wc -A -o wide': 'apply, get, describe',
  'kubectl get wc prod-eu1 -n platform -o yaml': 'apply, get, describe',
  'kubectl describe wc prod-eu1 -n platform': 'apply, get, describe',
  'kubectl explain wc.spec.pool': 'explain',
  'kubectl wait --for=condition=Ready wc/prod-eu1 -n platform --timeout=5m': 'wait',
  'kubectl patch wc prod-eu1 -n platform --type merge -p \'{"spec":{"paused":true}}\'': 'patch',
  'kubectl get events -n platform --field-selector involvedObject.kind=WorkerCluster': 'apply, get, describe',
  'kubectl delete wc prod-eu1 -n platform': 'delete',
  'kubectl apply -n platform -f clusters/rollout-policies/fleet.yaml': 'rollout policies',
  'kubectl get wrp -n platform': 'rollout policies',
  'kubectl describe wrp fleet -n platform': 'rollout policies',
  'kubectl annotate sa -n worker-stacks worker-stacks eks.amazonaws.com/role-arn=arn:aws:iam::<account>:role/<name>':
    'apply deploy/',
  'kubectl annotate namespace team-a worker-stacks.io/accounts=111111111111,222222222222':
    'a namespace bound to its accounts',
  'kubectl get workerclusters -A -o yaml \\': 'validate before upgrading',
};

test("validate before upgrading: the docs' kubectl get piped into validate --objects checks the live objects", async () => {
  // GIVEN an object applied and given a status by the daemon (the List kubectl prints then carries both)
  const name = 'upgrade-check';
  kOk(['apply', '-n', NS, '-f', example(name)]);
  await writeReadyStatus(name);
  const listed = kOk(['get', 'workerclusters', '-A', '-o', 'yaml']);
  expect(listed).toContain(`name: ${name}`);
  // WHEN the docs' pipe runs (this release's CLI in place of the new image)
  const r = run(process.execPath, [cli, 'validate', '--objects', '-', '--clusters', path.join(scratch, 'none')], {
    input: listed,
  });
  // THEN every live object is checked and valid: exit 0, nothing on stderr
  expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: '' });
  expect(r.stdout).toMatch(/^[1-9]\d* cluster objects? valid\n$/);
});

test('server-side apply (as Flux and Argo CD apply): every CRD the tool emits is applied, and applied again changes nothing; the daemon writes as manager worker-stacks', async () => {
  for (const [what, input] of [
    ['worker-stacks crd', runOk(process.execPath, [cli, 'crd'])],
    ['deploy/crd.yaml', fs.readFileSync(path.join(REPO, 'deploy', 'crd.yaml'), 'utf8')],
    ['the chart', fs.readFileSync(path.join(REPO, 'charts', 'worker-stacks', 'files', 'crds.yaml'), 'utf8')],
  ]) {
    // WHEN the docs' server-side line applies it (kubectl's own field manager, no --force-conflicts)
    const first = k(['apply', '--server-side', '-f', '-'], input);

    // THEN both CRDs are applied
    expect({ what, code: first.code, err: first.stderr }).toEqual({ what, code: 0, err: '' });
    expect(first.stdout).toMatch(/workerclusters.worker-stacks.io serverside-applied/);
    expect(first.stdout).toMatch(/workerrolloutpolicies.worker-stacks.io serverside-applied/);

    // AND applying it again changes nothing (the stored objects keep their resourceVersion)
    const versions = () =>
      kOk([
        'get',
        'crd',
        'workerclusters.worker-stacks.io',
        'workerrolloutpolicies.worker-stacks.io',
        '-o',
        'jsonpath={.items[*].metadata.resourceVersion}',
      ]);
    const before = versions();
    expect(k(['apply', '--server-side', '-f', '-'], input).code).toBe(0);
    expect({ what, after: versions() }).toEqual({ what, after: before });
  }

  // AND the tool's own writes carry its field manager
  const name = 'ssa-manager';
  kOk(['apply', '-n', NS, '-f', example(name)]);
  await writeReadyStatus(name);
  const managers = kOk([
    'get',
    'wc',
    name,
    '-n',
    NS,
    '--show-managed-fields',
    '-o',
    'jsonpath={.metadata.managedFields[*].manager}',
  ]);
  expect(managers.split(' ')).toContain('worker-stacks');
});

test('apply deploy/: every object is created, and the ServiceAccount takes the IRSA annotation', () => {
  // WHEN the docs' line runs
  const out = kOk([
    'apply',
    '-f',
    'deploy/crd.yaml',
    '-f',
    'deploy/namespace.yaml',
    '-f',
    'deploy/rbac.yaml',
    '-f',
    'deploy/deployment.yaml',
  ]);
  // THEN every object of the four files is named in kubectl's answer
  const files = ['crd.yaml', 'namespace.yaml', 'rbac.yaml', 'deployment.yaml']
    .map((f) => fs.readFileSync(path.join(REPO, 'deploy', f), 'utf8'))
    .join('\n---\n');
  const names = [...files.matchAll(/^kind: (\w+)\nmetadata:\n {2}name: ([\w.-]+)/gm)].map((m) => `/${m[2]} `);
  expect(names.length).toBeGreaterThan(10);
  for (const n of names) expect(out).toContain(n);
  // AND the docs' annotate line works on that ServiceAccount
  expect(
    kOk([
      'annotate',
      'sa',
      '-n',
      'worker-stacks',
      'worker-stacks',
      'eks.amazonaws.com/role-arn=arn:aws:iam::111111111111:role/worker-stacks',
    ]),
  ).toContain('serviceaccount/worker-stacks annotated');
});

test("a namespace bound to its accounts: after the docs' annotate line, an object naming another account is refused", async () => {
  // GIVEN the admission policies of deploy/ and a namespace team-a, annotated as docs/kubernetes.md shows
  kOk(['apply', '-f', 'deploy/namespace.yaml', '-f', 'deploy/rbac.yaml']);
  kOk(['create', 'namespace', 'team-a']);
  expect(kOk(['annotate', 'namespace', 'team-a', 'worker-stacks.io/accounts=111111111111,222222222222'])).toContain(
    'namespace/team-a annotated',
  );
  // WHEN an object in another account (its ARNs moved along) is applied, until the policy is loaded
  const foreign = path.join(scratch, 'foreign.yaml');
  fs.writeFileSync(
    foreign,
    fs
      .readFileSync(path.join(REPO, 'clusters', 'prod-eu1.yaml'), 'utf8')
      .split('111111111111')
      .join('333333333333'),
  );
  let refused = '';
  for (
    const until = Date.now() + 30_000;
    !refused && Date.now() < until;
    await new Promise((r) => setTimeout(r, 500))
  ) {
    const r = k(['apply', '-n', 'team-a', '--dry-run=server', '-f', foreign]);
    if (r.code !== 0) refused = r.stderr;
  }
  // THEN it is refused, naming the field, the account and who fixes it; the example's own account is taken
  expect(refused).toContain(
    'spec.account: 333333333333 is not an account namespace team-a may use (worker-stacks.io/accounts: 111111111111,222222222222; a cluster admin sets it on the Namespace)',
  );
  expect(kOk(['apply', '-n', 'team-a', '-f', 'clusters/prod-eu1.yaml'])).toContain(
    'workercluster.worker-stacks.io/prod-eu1 created',
  );
});

test('apply, get, describe: the object is created; get wc shows the documented columns, then the status the daemon writes; events are listed', async () => {
  // GIVEN the example object, applied as docs/kubernetes.md shows
  expect(kOk(['apply', '-n', NS, '-f', 'clusters/prod-eu1.yaml'])).toContain(
    'workercluster.worker-stacks.io/prod-eu1 created',
  );
  // WHEN the daemon's status and event are written
  await writeReadyStatus('prod-eu1');
  const wide = kOk(['get', 'wc', '-A', '-o', 'wide']);
  const plain = kOk(['get', 'wc', '-A']);
  // THEN `get wc -A` has the header docs/kubernetes.md shows, and the row what the status says
  const page = readDoc(path.join('docs', 'kubernetes.md'));
  const header = page
    .match(/\$ kubectl get wc -A\n(NAMESPACE[^\n]*)/)![1]
    .trim()
    .split(/\s{2,}/);
  expect(
    plain
      .split('\n')[0]
      .trim()
      .split(/\s{2,}/),
  ).toEqual(header);
  expect(plain).toMatch(
    /platform\s+prod-eu1\s+True\s+UpToDate\s+3f9a0c1d2e4b\s+3f9a0c1d2e4b\s+UPDATE_COMPLETE\s+\d+[sm]/,
  );
  // AND -o wide adds Paused and the stack name
  expect(wide.split('\n')[0]).toMatch(/PAUSED\s+STACK NAME/);
  expect(wide).toContain('WorkerStack-prod-eu1');
  // AND -o yaml shows the conditions and observedGeneration
  const yaml = parse(kOk(['get', 'wc', 'prod-eu1', '-n', NS, '-o', 'yaml']));
  expect(yaml.status.observedGeneration).toBe(yaml.metadata.generation);
  expect(yaml.status.conditions.map((c: { type: string; status: string }) => `${c.type}=${c.status}`)).toEqual([
    'Ready=True',
    'Progressing=False',
    'Degraded=False',
    'Stalled=False',
  ]);
  // AND describe shows the status and the event; get events lists it
  const described = kOk(['describe', 'wc', 'prod-eu1', '-n', NS]);
  expect(described).toMatch(/Name:\s+prod-eu1/);
  expect(described).toMatch(/Events:[\s\S]*Normal\s+StackComplete[\s\S]*WorkerStack-prod-eu1 is UPDATE_COMPLETE/);
  expect(kOk(['get', 'events', '-n', NS, '--field-selector', 'involvedObject.kind=WorkerCluster'])).toMatch(
    /Normal\s+StackComplete\s+workercluster\/prod-eu1/,
  );
});

test('a bad object: kubectl apply is refused with every problem at its field, as docs/kubernetes.md shows', () => {
  // GIVEN the page's example: minSize 40 and a listener's nodePort 22
  const file = example('prod-eu1', (raw) => {
    raw.spec.pool.minSize = 40;
    raw.spec.listeners[0].nodePort = 22;
  });
  // WHEN
  const r = k(['apply', '-n', NS, '-f', file]);
  // THEN
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('The WorkerCluster "prod-eu1" is invalid');
  expect(r.stderr).toContain('spec.pool.minSize: Invalid value: 40 is greater than maxSize 30');
  expect(r.stderr).toContain('spec.listeners[0].nodePort: Invalid value: 22 is the port of SSH on the nodes');
  // AND an unknown field is refused by --validate=strict
  const strict = k([
    'apply',
    '-n',
    NS,
    '--validate=strict',
    '-f',
    example('strict-one', (raw) => (raw.spec.surprise = 1)),
  ]);
  expect(strict.code).toBe(1);
  expect(strict.stderr).toContain('unknown field "spec.surprise"');
});

test('explain: the CRD documents its fields', () => {
  // WHEN
  const out = kOk(['explain', 'wc.spec.pool']);
  // THEN
  expect(out).toMatch(/GROUP:\s+worker-stacks.io\n/);
  expect(out).toMatch(/KIND:\s+WorkerCluster\n/);
  expect(out).toMatch(/VERSION:\s+v1alpha1\n/);
  expect(out).toMatch(/minSize\s+<integer> -required-\n\s+Minimum number of nodes./);
});

test('wait --for=condition=Ready returns once the daemon writes Ready=True', async () => {
  // GIVEN a new object, without status
  kOk(['apply', '-n', NS, '-f', example('wait-one')]);
  // WHEN kubectl waits, and the status is written while it waits
  const waiter = spawn(
    kubectl,
    ['--kubeconfig', api.kubeconfig, 'wait', '--for=condition=Ready', 'wc/wait-one', '-n', NS, '--timeout=120s'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  waiter.stdout.on('data', (d) => (out += String(d)));
  waiter.stderr.on('data', (d) => (out += String(d)));
  const exited = new Promise<number | null>((resolve) => waiter.once('exit', resolve));
  await new Promise((r) => setTimeout(r, 500));
  expect(waiter.exitCode).toBeNull(); // still waiting: no Ready condition yet
  await writeReadyStatus('wait-one');
  // THEN
  expect(await exited).toBe(0);
  expect(out).toContain('workercluster.worker-stacks.io/wait-one condition met');
});

test('patch: a merge patch of spec.paused is taken, and a patch that breaks a rule is refused at its field', () => {
  // GIVEN
  kOk(['apply', '-n', NS, '-f', example('patch-one')]);
  // WHEN
  const ok = kOk(['patch', 'wc', 'patch-one', '-n', NS, '--type', 'merge', '-p', '{"spec":{"paused":true}}']);
  const bad = k(['patch', 'wc', 'patch-one', '-n', NS, '--type', 'merge', '-p', '{"spec":{"pool":{"minSize":40}}}']);
  // THEN
  expect(ok).toContain('workercluster.worker-stacks.io/patch-one patched');
  expect(kOk(['get', 'wc', 'patch-one', '-n', NS, '-o', 'jsonpath={.spec.paused}'])).toBe('true');
  expect(kOk(['get', 'wc', 'patch-one', '-n', NS, '-o', 'wide'])).toMatch(/patch-one(\s+\S+)*\s+true\s/);
  expect(bad.code).toBe(1);
  expect(bad.stderr).toContain('spec.pool.minSize: Invalid value: 40 is greater than maxSize 30');
});

test('delete: the object goes (no finalizer without deletionPolicy Delete)', () => {
  // GIVEN
  kOk(['apply', '-n', NS, '-f', example('delete-one')]);
  // WHEN
  const out = kOk(['delete', 'wc', 'delete-one', '-n', NS]);
  // THEN
  expect(out).toContain('workercluster.worker-stacks.io "delete-one" deleted');
  expect(k(['get', 'wc', 'delete-one', '-n', NS]).stderr).toContain('NotFound');
});

test("rollout policies: apply the docs' fleet policy, get wrp shows Paused and the first wave, describe shows it", () => {
  // GIVEN docs/fleet-rollouts.md's policy, as clusters/rollout-policies/fleet.yaml
  const page = readDoc(path.join('docs', 'fleet-rollouts.md'));
  const policy = page.match(/```yaml\n# clusters\/rollout-policies\/fleet.yaml\n([\s\S]*?)```/)![1];
  const dir = path.join(scratch, 'clusters', 'rollout-policies');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'fleet.yaml'), policy);
  // WHEN
  const applied = runOk(
    kubectl,
    ['--kubeconfig', api.kubeconfig, 'apply', '-n', NS, '-f', 'clusters/rollout-policies/fleet.yaml'],
    { cwd: scratch },
  );
  const got = kOk(['get', 'wrp', '-n', NS]);
  const described = kOk(['describe', 'wrp', 'fleet', '-n', NS]);
  // THEN
  expect(applied).toContain('workerrolloutpolicy.worker-stacks.io/fleet created');
  expect(
    got
      .split('\n')[0]
      .trim()
      .split(/\s{2,}/),
  ).toEqual(['NAME', 'PAUSED', 'FIRST WAVE', 'AGE']);
  expect(got).toMatch(/fleet\s+(false|<none>)?\s*canary\s+\d+[sm]/);
  expect(described).toMatch(/Kind:\s+WorkerRolloutPolicy/);
});

test('every kubectl command in the shell blocks of README.md and docs/ is run by a test of this file', () => {
  // GIVEN the docs' shell lines that run kubectl (comments and prompts dropped)
  const lines: string[] = [];
  let prose = '';
  expect(DOCS).toEqual(
    expect.arrayContaining([
      'README.md',
      path.join('docs', 'kubernetes.md'),
      path.join('docs', 'kubernetes-operations.md'),
    ]),
  );
  for (const doc of DOCS) {
    const text = readDoc(doc);
    prose += text;
    lines.push(...shellLines(text).filter((line) => /(^|\| )kubectl /.test(line)));
  }
  // THEN each is one this file runs
  expect(lines.length).toBeGreaterThan(10);
  expect(lines.filter((l) => !(l in COVERED))).toEqual([]);
  // AND each command this file runs is one the docs show, in a shell block or as `code` in the text (a doc line
  // removed leaves no stale entry here)
  expect(Object.keys(COVERED).filter((l) => !lines.includes(l) && !prose.includes(`\`${l}\``))).toEqual([]);
});
