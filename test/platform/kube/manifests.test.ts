import { CHANNEL_CRD_NAME } from '../../../lib/platform/kube/channel-crd';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { manifestFiles } from '../../../lib/adapters/cli/kube';
import { runCli } from '../../../lib/adapters/cli/program';
import { CRD_NAME } from '../../../lib/platform/kube/crd';
import { POLICY_CRD_NAME } from '../../../lib/platform/kube/policy-crd';
import {
  clusterRole,
  daemonAdmissionPolicy,
  deployManifests,
  LEASE_NAME,
  leaseRole,
} from '../../../lib/platform/kube/manifests';
import { LabelSelector } from '../../../lib/platform/kube/label-selector';
import { ReconcilerMetrics } from '../../../lib/engines/reconciler/runtime/metrics';
import { startOpsServer } from '../../../lib/engines/reconciler/runtime/server';
import { REPO } from '../../helpers/clusters';
import { freePort } from '../../helpers/moto';

import { Json } from '../../helpers/json';
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
  const committed = Object.fromEntries(
    fs
      .readdirSync(DEPLOY)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => [f, fs.readFileSync(path.join(DEPLOY, f), 'utf8')]),
  );
  // THEN (regenerate with: npx worker-stacks manifests --out deploy)
  expect(Object.keys(committed).sort()).toEqual(Object.keys(expected).sort());
  for (const [file, text] of Object.entries(expected)) expect({ file, text: committed[file] }).toEqual({ file, text });
});

test('`worker-stacks crd` prints the CRDs of deploy/crd.yaml (WorkerCluster, WorkerRolloutPolicy, WorkerImageChannel), the same bytes every time', async () => {
  // WHEN
  const a = io();
  const b = io();
  const codes = [await runCli(['crd'], a.io), await runCli(['crd'], b.io)];
  // THEN
  expect(codes).toEqual([0, 0]);
  expect(a.out.join('')).toBe(b.out.join(''));
  const docs = parseAllDocuments(a.out.join('')).map((d) => d.toJS());
  expect(docs).toHaveLength(3);
  expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).toEqual([
    `CustomResourceDefinition ${CRD_NAME}`,
    `CustomResourceDefinition ${POLICY_CRD_NAME}`,
    `CustomResourceDefinition ${CHANNEL_CRD_NAME}`,
  ]);
  expect(fs.readFileSync(path.join(DEPLOY, 'crd.yaml'), 'utf8')).toContain(a.out.join(''));
});

test('`worker-stacks manifests` takes the namespace, image, IRSA role and replicas, and refuses a bad role ARN', async () => {
  // WHEN
  const ok = io();
  const code = await runCli(
    [
      'manifests',
      '--namespace',
      'platform',
      '--image',
      'registry.example.com/worker-stacks:1.2.3',
      '--irsa-role-arn',
      'arn:aws:iam::111111111111:role/worker-stacks',
      '--replicas',
      '3',
    ],
    ok.io,
  );
  const bad = io();
  const badCode = await runCli(['manifests', '--irsa-role-arn', 'arn:aws:iam::1:user/x'], bad.io);
  // THEN
  expect(code).toBe(0);
  const docs: Json[] = parseAllDocuments(ok.out.join('')).map((d) => d.toJS());
  const sa = docs.find((d) => d.kind === 'ServiceAccount')!;
  expect(sa.metadata).toMatchObject({
    namespace: 'platform',
    annotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::111111111111:role/worker-stacks' },
  });
  const deploy = docs.find((d) => d.kind === 'Deployment')!;
  expect(deploy.spec.replicas).toBe(3);
  expect(deploy.spec.template.spec.containers[0].image).toBe('registry.example.com/worker-stacks:1.2.3');
  expect(docs.filter((d) => d.metadata.namespace !== undefined).every((d) => d.metadata.namespace === 'platform')).toBe(
    true,
  );
  expect(badCode).toBe(2);
  expect(bad.err.join('')).toContain('is not an IAM role ARN');
});

test('without a role ARN the ServiceAccount carries no annotation (EKS Pod Identity, or an annotation added later)', () => {
  // WHEN
  const sa = deployManifests({ version })['rbac.yaml'].find((d) => d.kind === 'ServiceAccount')!;
  // THEN
  expect(sa.metadata.annotations).toBeUndefined();
});

test("the daemon's ClusterRole: read WorkerClusters, patch them (finalizer only: the admission policy), write their status, finalizers and events, list and watch WorkerRolloutPolicies, list WorkerImageChannels and patch their status; nothing else", () => {
  // WHEN
  const rules = clusterRole().rules.map(
    (r: Json) => `${r.apiGroups.join(',') || 'core'} ${r.resources.join(',')}: ${r.verbs.join(',')}`,
  );
  // THEN
  expect(rules).toEqual([
    'worker-stacks.io workerclusters: get,list,watch,patch',
    'worker-stacks.io workerclusters/status: update,patch',
    'worker-stacks.io workerclusters/finalizers: update',
    'worker-stacks.io workerrolloutpolicies: list,watch',
    'worker-stacks.io workerimagechannels: list',
    'worker-stacks.io workerimagechannels/status: patch',
    'core events: create,patch',
  ]);
});

test("the Lease Role lives in the daemon's namespace and reads or renews only its own Lease (lists them: the other shards)", () => {
  // WHEN
  const role = leaseRole('ns1');
  // THEN
  expect(role.metadata.namespace).toBe('ns1');
  expect(role.rules).toEqual([
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create', 'list'] },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: [LEASE_NAME],
      verbs: ['get', 'update'],
    },
  ]);
});

describe('shards: `manifests --shard canary=tier=canary --shard rest=tier!=canary`', () => {
  const shards = [
    { name: 'canary', selector: 'tier=canary' },
    { name: 'rest', selector: 'tier!=canary' },
  ];
  const m = deployManifests({ version, shards });
  const deployments = m['deployment.yaml'].filter((d) => d.kind === 'Deployment');

  test('one Deployment and one PodDisruptionBudget per shard, each running --shard <name> -l <selector> on its own pods', () => {
    expect(deployments.map((d) => d.metadata.name)).toEqual(['worker-stacks-canary', 'worker-stacks-rest']);
    expect(
      m['deployment.yaml']
        .filter((d) => d.kind === 'PodDisruptionBudget')
        .map((d) => [d.metadata.name, d.spec.selector.matchLabels['worker-stacks.io/shard']]),
    ).toEqual([
      ['worker-stacks-canary', 'canary'],
      ['worker-stacks-rest', 'rest'],
    ]);
    for (const [i, d] of deployments.entries()) {
      const args: string[] = d.spec.template.spec.containers[0].args;
      expect([args[args.indexOf('--shard') + 1], args[args.indexOf('--selector') + 1]]).toEqual([
        shards[i].name,
        shards[i].selector,
      ]);
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
      expect(d.spec.selector.matchLabels['worker-stacks.io/shard']).toBe(shards[i].name);
    }
  });

  test("RBAC allows exactly the shards' Leases: get/update by name, create only those names (admission policy)", () => {
    const role = m['rbac.yaml'].find((d) => d.kind === 'Role')!;
    expect(role.rules[1].resourceNames).toEqual(['worker-stacks-canary', 'worker-stacks-rest']);
    const policy = m['rbac.yaml'].find(
      (d) => d.kind === 'ValidatingAdmissionPolicy' && d.metadata.name === 'worker-stacks-daemon-leases',
    )!;
    expect(policy.spec.validations[0].expression).toBe(
      "object.metadata.namespace == 'worker-stacks' && object.metadata.name in ['worker-stacks-canary', 'worker-stacks-rest']",
    );
    expect(
      m['rbac.yaml'].some(
        (d) => d.kind === 'ValidatingAdmissionPolicyBinding' && d.spec.policyName === 'worker-stacks-daemon-leases',
      ),
    ).toBe(true);
  });

  test.each([
    [
      [
        { name: 'a', selector: 'tier=canary' },
        { name: 'b', selector: 'region=eu' },
      ],
      'overlaps --shard a=tier=canary',
    ],
    [
      [
        { name: 'a', selector: 'tier=canary' },
        { name: 'b', selector: '' },
      ],
      'overlaps',
    ],
    [
      [
        { name: 'a', selector: 'tier=canary' },
        { name: 'a', selector: 'tier=stable' },
      ],
      'given twice',
    ],
    [[{ name: 'A', selector: 'tier=canary' }], 'DNS label'],
  ])('shards that are not disjoint, or badly named, are refused (%#)', (bad, message) => {
    expect(() => deployManifests({ version, shards: bad })).toThrow(message);
  });

  test('through the CLI: --shard name=selector, repeated; an overlap is a usage error (exit 2)', async () => {
    const ok = io();
    const code = await runCli(['manifests', '--shard', 'canary=tier=canary', '--shard', 'rest=tier!=canary'], ok.io);
    const bad = io();
    const badCode = await runCli(['manifests', '--shard', 'canary=tier=canary', '--shard', 'eu=region=eu'], bad.io);
    expect(code).toBe(0);
    expect(
      parseAllDocuments(ok.out.join(''))
        .map((d) => d.toJS())
        .filter((d: Json) => d.kind === 'Deployment')
        .map((d: Json) => d.metadata.name),
    ).toEqual(['worker-stacks-canary', 'worker-stacks-rest']);
    expect(badCode).toBe(2);
    expect(bad.err.join('')).toContain('overlaps');
  });

  test('the selectors the Deployments pass are in their normal form and parse back the same', () => {
    for (const d of deployments) {
      const args: string[] = d.spec.template.spec.containers[0].args;
      const sel = args[args.indexOf('--selector') + 1];
      expect(LabelSelector.parse(sel).toString()).toBe(sel);
    }
  });
});

test('the admission policy names the only finalizer the daemon may add or remove, and freezes ownerReferences', () => {
  // WHEN
  const validations: Json[] = daemonAdmissionPolicy('ns1')[0].spec.validations;
  // THEN
  expect(validations.map((v) => v.message)).toEqual(
    expect.arrayContaining([
      'the worker-stacks daemon adds or removes only its own finalizer worker-stacks.io/stack',
      'the worker-stacks daemon never writes ownerReferences (it patches only its finalizer)',
    ]),
  );
});

test('view/edit are not aggregated into the built-in roles unless asked (--aggregate-to-default-roles)', () => {
  // WHEN
  const labels = (aggregate?: boolean) => {
    const rbac = deployManifests({ version, aggregateToDefaultRoles: aggregate })['rbac.yaml'];
    return rbac
      .filter((d) => d.kind === 'ClusterRole' && /-(view|edit)$/.test(d.metadata.name))
      .map((d) =>
        Object.keys(d.metadata.labels).filter((k) => k.startsWith('rbac.authorization.k8s.io/aggregate-to-')),
      );
  };
  // THEN
  expect(labels()).toEqual([[], []]);
  expect(labels(true)).toEqual([
    ['rbac.authorization.k8s.io/aggregate-to-view'],
    ['rbac.authorization.k8s.io/aggregate-to-edit', 'rbac.authorization.k8s.io/aggregate-to-admin'],
  ]);
});

test('the image by digest: --image-digest gives <image>@sha256:…; a malformed digest or a second digest is refused', async () => {
  // GIVEN
  const digest = `sha256:${'ab'.repeat(32)}`;
  // WHEN
  const image = (o: object) =>
    deployManifests({ version, image: 'registry.example.com/worker-stacks:1.2.3', ...o })['deployment.yaml'].find(
      (d) => d.kind === 'Deployment',
    )!.spec.template.spec.containers[0].image;
  const bad = io();
  const badCode = await runCli(['manifests', '--image-digest', 'sha256:xyz'], bad.io);
  // THEN
  expect(image({ imageDigest: digest })).toBe(`registry.example.com/worker-stacks:1.2.3@${digest}`);
  expect(() => deployManifests({ version, image: `r/w@${digest}`, imageDigest: digest })).toThrow(
    'already names a digest',
  );
  expect(badCode).toBe(2);
  expect(bad.err.join('')).toContain('64 lower-case hex digits');
});

test('a NetworkPolicy for the daemon: in on the ops port only, out to DNS and HTTPS (AWS, the API server) only', () => {
  // WHEN
  const np = deployManifests({ version, opsPort: 9090 })['deployment.yaml'].find((d) => d.kind === 'NetworkPolicy')!;
  // THEN
  expect(np.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
  expect(np.spec.policyTypes).toEqual(['Ingress', 'Egress']);
  expect(np.spec.ingress).toEqual([{ ports: [{ protocol: 'TCP', port: 9090 }] }]);
  expect(np.spec.egress.flatMap((e: Json) => e.ports.map((p: Json) => `${p.protocol}/${p.port}`))).toEqual([
    'UDP/53',
    'TCP/53',
    'TCP/443',
    'TCP/6443',
  ]);
  expect(
    deployManifests({ version, networkPolicy: false })['deployment.yaml'].some((d) => d.kind === 'NetworkPolicy'),
  ).toBe(false);
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
  [
    'the Kubernetes store, every namespace, the daemon',
    () => container.args.slice(0, 5),
    ['reconcile', '--watch', '--store', 'kubernetes', '--all-namespaces'],
  ],
  [
    'memory request and limit',
    () => [container.resources.requests.memory, container.resources.limits.memory],
    ['768Mi', '2Gi'],
  ],
  [
    'the pod name and namespace for the Lease',
    () => container.env.filter((e: Json) => e.valueFrom).map((e: Json) => e.name),
    ['POD_NAME', 'POD_NAMESPACE'],
  ],
])('the Deployment: %s', (_what, read, expected) => {
  expect(read()).toEqual(expected);
});

test("every flag the Deployments pass (the fleet's and a shard's) is a flag of `worker-stacks reconcile`", async () => {
  // GIVEN the reconcile command's help
  const help = io();
  await runCli(['reconcile', '--help'], help.io);
  const text = help.out.join('') + help.err.join('');
  // WHEN the Deployments' flags are looked up
  const shard = deployManifests({ version, shards: [{ name: 'canary', selector: 'tier=canary' }] })[
    'deployment.yaml'
  ].find((d) => d.kind === 'Deployment')!;
  const flags = [...container.args, ...shard.spec.template.spec.containers[0].args].filter((a: string) =>
    a.startsWith('--'),
  );
  expect(flags).toEqual(expect.arrayContaining(['--shard', '--selector']));
  // THEN
  expect(container.args[0]).toBe('reconcile');
  for (const flag of flags)
    expect({ flag, known: new RegExp(`(^|[ ,])${flag}\\b`, 'm').test(text) }).toEqual({ flag, known: true });
});

test("the probes and the metrics port are the ones the ops server serves (started for real on the manifest's port flag)", async () => {
  // GIVEN the ops server as `reconcile --port <n>` starts it, ready
  const port = await freePort();
  const args: string[] = container.args;
  expect(args[args.indexOf('--port') + 1]).toBe(String(container.ports[0].containerPort));
  const server = await startOpsServer(port, new ReconcilerMetrics(), () => true);
  try {
    // WHEN each probe path of the manifest and the scrape path are requested
    const paths = [
      container.livenessProbe.httpGet.path,
      container.readinessProbe.httpGet.path,
      container.startupProbe.httpGet.path,
      deployment.spec.template.metadata.annotations['prometheus.io/path'],
    ];
    const statuses = await Promise.all(
      paths.map(
        (p) =>
          new Promise<number>((res, rej) =>
            http
              .get(`http://127.0.0.1:${port}${p}`, (r) => {
                r.resume();
                res(r.statusCode ?? 0);
              })
              .on('error', rej),
          ),
      ),
    );
    // THEN
    expect(paths).toEqual(['/healthz', '/readyz', '/healthz', '/metrics']);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect([container.livenessProbe, container.readinessProbe].map((p: Json) => p.httpGet.port)).toEqual([
      container.ports[0].name,
      container.ports[0].name,
    ]);
  } finally {
    await new Promise((res) => server.close(res));
  }
});
