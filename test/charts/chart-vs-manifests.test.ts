import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';
import { CHART, docs, helmTemplate, Json, keyOf, runOk } from './tools';

// The chart and `worker-stacks manifests` (lib/kube/manifests.ts) are two renderings of one installation: with the
// chart's default values they must give the same objects, field for field (parsed, not bytes: helm's toYaml orders
// keys its own way). The only difference allowed is Helm's own: the CRDs carry helm.sh/resource-policy: keep, so that
// `helm uninstall` does not delete every WorkerCluster with them.

const HELM_ONLY_ANNOTATIONS = ['helm.sh/resource-policy'];

/** Drops the Helm-only annotations (and an annotations map they leave empty). */
function withoutHelmOnly(o: Json): Json {
  const copy = structuredClone(o);
  const a = copy.metadata?.annotations;
  if (a) {
    for (const k of HELM_ONLY_ANNOTATIONS) delete a[k];
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

test('helm template with the default values renders the objects of `worker-stacks manifests`, field for field', () => {
  // GIVEN the CLI's rendering, as a user runs it
  const manifests = byKey(docs(runOk(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'manifests'])));
  // WHEN the chart is rendered with its defaults
  const chart = byKey(helmTemplate());
  // THEN the same objects, and each the same after dropping Helm's own annotation
  expect([...chart.keys()].sort()).toEqual([...manifests.keys()].sort());
  for (const [key, o] of manifests) expect({ key, object: withoutHelmOnly(chart.get(key)!) }).toEqual({ key, object: o });
});

test('the chart keeps the CRDs on uninstall by default (helm.sh/resource-policy: keep), and crds.keep=false drops it', () => {
  // WHEN
  const kept = helmTemplate().filter((o) => o.kind === 'CustomResourceDefinition');
  const notKept = helmTemplate(['--set', 'crds.keep=false']).filter((o) => o.kind === 'CustomResourceDefinition');
  // THEN
  expect(kept.map((o) => o.metadata.annotations?.['helm.sh/resource-policy'])).toEqual(['keep', 'keep']);
  expect(notKept.map((o) => o.metadata.annotations?.['helm.sh/resource-policy'])).toEqual([undefined, undefined]);
});

test('files/crds.yaml holds exactly what `worker-stacks crd` prints (regenerate: npx worker-stacks crd > charts/worker-stacks/files/crds.yaml)', () => {
  // WHEN
  const printed = runOk(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'crd']);
  // THEN
  expect(fs.readFileSync(path.join(CHART, 'files', 'crds.yaml'), 'utf8')).toBe(printed);
});
