import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { manifestFiles } from '../../lib/cli/kube';
import { runCli } from '../../lib/cli/program';
import { CRD_NAME } from '../../lib/kube/crd';
import { POLICY_CRD_NAME } from '../../lib/kube/policy-crd';
import { clusterRole, deployManifests, LEASE_NAME, leaseRole } from '../../lib/kube/manifests';
import { ReconcilerMetrics } from '../../lib/reconciler/metrics';
import { startOpsServer } from '../../lib/reconciler/server';
import { REPO } from '../helpers/clusters';
import { freePort } from '../helpers/moto';

type Json = Record<string, any>;
const { version } = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
const DEPLOY = path.join(REPO, 'deploy');

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) }, out, err };
}

test('deploy/ holds exactly what `worker-stacks manifests --out deploy` generates', () => {
  // GIVEN the generator's files for the default options
  const expected = manifestFiles({ version });
  // WHEN
  const committed = Object.fromEntries(fs.readdirSync(DEPLOY).filter((f) => f.endsWith('.yaml')).map((f) => [f, fs.readFileSync(path.join(DEPLOY, f), 'utf8')]));
  // THEN (regenerate with: npx worker-stacks manifests --out deploy)
  expect(Object.keys(committed).sort()).toEqual(Object.keys(expected).sort());
  for (const [file, text] of Object.entries(expected)) expect({ file, text: committed[file] }).toEqual({ file, text });
});

test('`worker-stacks crd` prints the CRDs of deploy/crd.yaml (WorkerCluster, WorkerRolloutPolicy), the same bytes every time', async () => {
  // WHEN
  const a = io();
  const b = io();
  const codes = [await runCli(['crd'], a.io), await runCli(['crd'], b.io)];
  // THEN
  expect(codes).toEqual([0, 0]);
  expect(a.out.join('')).toBe(b.out.join(''));
  const docs = parseAllDocuments(a.out.join('')).map((d) => d.toJS());
  expect(docs).toHaveLength(2);
  expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).toEqual([`CustomResourceDefinition ${CRD_NAME}`, `CustomResourceDefinition ${POLICY_CRD_NAME}`]);
  expect(fs.readFileSync(path.join(DEPLOY, 'crd.yaml'), 'utf8')).toContain(a.out.join(''));
});

test('`worker-stacks manifests` takes the namespace, image, IRSA role and replicas, and refuses a bad role ARN', async () => {
  // WHEN
  const ok = io();
  const code = await runCli(['manifests', '--namespace', 'platform', '--image', 'registry.example.com/worker-stacks:1.2.3', '--irsa-role-arn', 'arn:aws:iam::111111111111:role/worker-stacks', '--replicas', '3'], ok.io);
  const bad = io();
  const badCode = await runCli(['manifests', '--irsa-role-arn', 'arn:aws:iam::1:user/x'], bad.io);
  // THEN
  expect(code).toBe(0);
  const docs: Json[] = parseAllDocuments(ok.out.join('')).map((d) => d.toJS());
  const sa = docs.find((d) => d.kind === 'ServiceAccount')!;
  expect(sa.metadata).toMatchObject({ namespace: 'platform', annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111111111111:role/worker-stacks' } });
  const deploy = docs.find((d) => d.kind === 'Deployment')!;
  expect(deploy.spec.replicas).toBe(3);
  expect(deploy.spec.template.spec.containers[0].image).toBe('registry.example.com/worker-stacks:1.2.3');
  expect(docs.filter((d) => d.metadata.namespace !== undefined).every((d) => d.metadata.namespace === 'platform')).toBe(true);
  expect(badCode).toBe(2);
  expect(bad.err.join('')).toContain('is not an IAM role ARN');
});

test('without a role ARN the ServiceAccount carries no annotation (EKS Pod Identity, or an annotation added later)', () => {
  // WHEN
  const sa = deployManifests({ version })['rbac.yaml'].find((d) => d.kind === 'ServiceAccount')!;
  // THEN
  expect(sa.metadata.annotations).toBeUndefined();
});

test('the daemon\'s ClusterRole: read WorkerClusters, patch them (finalizer only: the admission policy), write their status, finalizers and events, list and watch WorkerRolloutPolicies; nothing else', () => {
  // WHEN
  const rules = clusterRole().rules.map((r: Json) => `${r.apiGroups.join(',') || 'core'} ${r.resources.join(',')}: ${r.verbs.join(',')}`);
  // THEN
  expect(rules).toEqual([
    'worker-stacks.io workerclusters: get,list,watch,patch',
    'worker-stacks.io workerclusters/status: update,patch',
    'worker-stacks.io workerclusters/finalizers: update',
    'worker-stacks.io workerrolloutpolicies: list,watch',
    'core events: create,patch',
  ]);
});

test('the Lease Role lives in the daemon\'s namespace and reads or renews only its own Lease', () => {
  // WHEN
  const role = leaseRole('ns1');
  // THEN
  expect(role.metadata.namespace).toBe('ns1');
  expect(role.rules).toEqual([
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] },
  ]);
});

const deployment = deployManifests({ version })['deployment.yaml'].find((d) => d.kind === 'Deployment')!;
const pod = deployment.spec.template.spec;
const container = pod.containers[0];

test.each([
  ['2 replicas', () => deployment.spec.replicas, 2],
  ['non-root', () => pod.securityContext.runAsNonRoot, true],
  ['seccomp RuntimeDefault', () => pod.securityContext.seccompProfile.type, 'RuntimeDefault'],
  ['read-only root filesystem', () => container.securityContext.readOnlyRootFilesystem, true],
  ['no privilege escalation', () => container.securityContext.allowPrivilegeEscalation, false],
  ['all capabilities dropped', () => container.securityContext.capabilities.drop, ['ALL']],
  ['a writable /tmp for synthesis', () => container.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]],
  ['the Kubernetes store, every namespace, the daemon', () => container.args.slice(0, 5), ['reconcile', '--watch', '--store', 'kubernetes', '--all-namespaces']],
  ['memory request and limit', () => [container.resources.requests.memory, container.resources.limits.memory], ['768Mi', '2Gi']],
  ['the pod name and namespace for the Lease', () => container.env.filter((e: Json) => e.valueFrom).map((e: Json) => e.name), ['POD_NAME', 'POD_NAMESPACE']],
])('the Deployment: %s', (_what, read, expected) => {
  expect(read()).toEqual(expected);
});

test('every flag the Deployment passes is a flag of `worker-stacks reconcile`', async () => {
  // GIVEN the reconcile command's help
  const help = io();
  await runCli(['reconcile', '--help'], help.io);
  const text = help.out.join('') + help.err.join('');
  // WHEN the Deployment's flags are looked up
  const flags = (container.args as string[]).filter((a) => a.startsWith('--'));
  // THEN
  expect(container.args[0]).toBe('reconcile');
  for (const flag of flags) expect({ flag, known: new RegExp(`(^|[ ,])${flag}\\b`, 'm').test(text) }).toEqual({ flag, known: true });
});

test('the probes and the metrics port are the ones the ops server serves (started for real on the manifest\'s port flag)', async () => {
  // GIVEN the ops server as `reconcile --port <n>` starts it, ready
  const port = await freePort();
  const args: string[] = container.args;
  expect(args[args.indexOf('--port') + 1]).toBe(String(container.ports[0].containerPort));
  const server = await startOpsServer(port, new ReconcilerMetrics(), () => true);
  try {
    // WHEN each probe path of the manifest and the scrape path are requested
    const paths = [container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path, container.startupProbe.httpGet.path, deployment.spec.template.metadata.annotations['prometheus.io/path']];
    const statuses = await Promise.all(paths.map((p) => new Promise<number>((res, rej) => http.get(`http://127.0.0.1:${port}${p}`, (r) => (r.resume(), res(r.statusCode ?? 0))).on('error', rej))));
    // THEN
    expect(paths).toEqual(['/healthz', '/readyz', '/healthz', '/metrics']);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect([container.livenessProbe, container.readinessProbe].map((p: Json) => p.httpGet.port)).toEqual([container.ports[0].name, container.ports[0].name]);
  } finally {
    await new Promise((res) => server.close(res));
  }
});
