import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';
import { CHART, docs, helmTemplate, Json, keyOf, runOk } from './tools';

// The chart and `worker-stacks manifests` (lib/platform/kube/manifests.ts) are two renderings of one installation: with the
// chart's default values they must give the same objects, field for field (parsed, not bytes: helm's toYaml orders
// keys its own way). The only difference allowed is Helm's own: the CRDs carry helm.sh/resource-policy: keep, so that
// `helm uninstall` does not delete every WorkerCluster with them.

const HELM_ONLY_ANNOTATIONS = ['helm.sh/resource-policy'];

/** Drops the Helm-only annotations (and an annotations map they leave empty). */
function withoutHelmOnly(o: Json): Json {
  const copy = structuredClone(o);
  const a = copy.metadata?.annotations;
  if (a) {
    for (const k of HELM_ONLY_ANNOTATIONS) Reflect.deleteProperty(a, k);
    if (Object.keys(a).length === 0) delete copy.metadata.annotations;
  }
  return copy;
}

function byKey(objects: Json[]): Map<string, Json> {
  const m = new Map<string, Json>();
  for (const o of objects) {
    expect(m.has(keyOf(o))).toBe(false); // one object per kind/namespace/name
    m.set(keyOf(o), o);
  }
  return m;
}

const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
/** The same installation asked of both: `worker-stacks manifests` flags, and the chart's values. */
const SAME: [string, string[], string[]][] = [
  ['the defaults', [], []],
  [
    'two shards, image by digest, IRSA, roles aggregated',
    [
      '--shard',
      'canary=tier=canary',
      '--shard',
      'main=tier!=canary',
      '--image',
      'registry.example.com/worker-stacks:0.1.0',
      '--image-digest',
      DIGEST,
      '--irsa-role-arn',
      'arn:aws:iam::111111111111:role/worker-stacks',
      '--aggregate-to-default-roles',
      '--require-account-binding',
    ],
    [
      '--set',
      'shards[0].name=canary,shards[0].selector=tier=canary,shards[1].name=main,shards[1].selector=tier!=canary',
      '--set',
      'image.repository=registry.example.com/worker-stacks,image.tag=0.1.0',
      '--set',
      `image.digest=${DIGEST}`,
      '--set',
      'serviceAccount.roleArn=arn:aws:iam::111111111111:role/worker-stacks',
      '--set',
      'rbac.aggregateToDefaultRoles=true',
      '--set',
      'admissionPolicy.requireAccountBinding=true',
    ],
  ],
  [
    'another namespace, replicas and port, no NetworkPolicy',
    ['--namespace', 'platform', '--replicas', '3', '--port', '9090', '--no-network-policy'],
    ['--set', 'namespace.name=platform,replicas=3,reconciler.port=9090,networkPolicy.enabled=false'],
  ],
];

test.each(SAME)(
  'helm template renders the objects of `worker-stacks manifests`, field for field: %s',
  (_what, flags, values) => {
    // GIVEN the CLI's rendering, as a user runs it
    const manifests = byKey(
      docs(runOk(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'manifests', ...flags])),
    );
    // WHEN the chart is rendered with the values that ask the same
    const chart = byKey(helmTemplate(values));
    // THEN the same objects, and each the same after dropping Helm's own annotation
    expect([...chart.keys()].sort()).toEqual([...manifests.keys()].sort());
    for (const [key, o] of manifests)
      expect({ key, object: withoutHelmOnly(chart.get(key)!) }).toEqual({ key, object: o });
  },
);

test('the chart keeps the CRDs on uninstall by default (helm.sh/resource-policy: keep), and crds.keep=false drops it', () => {
  // WHEN
  const kept = helmTemplate().filter((o) => o.kind === 'CustomResourceDefinition');
  const notKept = helmTemplate(['--set', 'crds.keep=false']).filter((o) => o.kind === 'CustomResourceDefinition');
  // THEN
  expect(kept.map((o) => o.metadata.annotations?.['helm.sh/resource-policy'])).toEqual(['keep', 'keep', 'keep']);
  expect(notKept.map((o) => o.metadata.name)).toEqual(kept.map((o) => o.metadata.name));
  expect(notKept.filter((o) => o.metadata.annotations?.['helm.sh/resource-policy'] !== undefined)).toEqual([]);
});

test('files/crds.yaml holds exactly what `worker-stacks crd` prints (regenerate: npx worker-stacks crd > charts/worker-stacks/files/crds.yaml)', () => {
  // WHEN
  const printed = runOk(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'crd']);
  // THEN
  expect(fs.readFileSync(path.join(CHART, 'files', 'crds.yaml'), 'utf8')).toBe(printed);
});
