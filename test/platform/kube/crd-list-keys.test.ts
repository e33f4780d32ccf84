import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { withRule, workerClusterCrd } from '../../../lib/platform/kube/crd';
import { rolloutPolicyCrd } from '../../../lib/platform/kube/policy-crd';
import { imageChannelCrd } from '../../../lib/platform/kube/channel-crd';
import { deployManifests } from '../../../lib/platform/kube/manifests';
import { REPO } from '../../helpers/clusters';
import { Json } from '../../helpers/schema-walk';

// Server-side apply (Flux, Argo CD, `kubectl apply --server-side`) merges lists that the API declares as maps by their
// keys, and refuses an object with two entries of one key ("duplicate entries for key"), where client-side apply and
// helm notice nothing. In a CRD those lists are spec.versions (by name), each schema node's x-kubernetes-validations
// (by rule) and additionalPrinterColumns (by name). Every CRD the tool emits is walked here.

/** Where a list-map of a CRD is keyed, by the name of the list's field. */
const LIST_MAP_KEYS: Readonly<Record<string, string>> = {
  versions: 'name',
  'x-kubernetes-validations': 'rule',
  additionalPrinterColumns: 'name',
};

/** Every duplicated list-map key under `node`: `path: key`. */
function duplicateKeys(node: unknown, at = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((x, i) => duplicateKeys(x, `${at}[${i}]`));
  if (!node || typeof node !== 'object') return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(node as Json)) {
    const key = LIST_MAP_KEYS[k];
    if (key && Array.isArray(v)) {
      const seen = new Set<string>();
      for (const item of v as Json[]) {
        const value = String(item[key]);
        if (seen.has(value)) out.push(`${at}.${k}: ${value}`);
        seen.add(value);
      }
    }
    out.push(...duplicateKeys(v, `${at}.${k}`));
  }
  return out;
}

const fromYaml = (file: string): Json[] =>
  parseAllDocuments(fs.readFileSync(path.join(REPO, file), 'utf8'))
    .map((d) => d.toJSON() as Json)
    .filter((o) => o.kind === 'CustomResourceDefinition');

const EMITTED: [string, () => Json[]][] = [
  ['worker-stacks crd', () => [workerClusterCrd(), rolloutPolicyCrd(), imageChannelCrd()]],
  ['worker-stacks manifests (crd.yaml)', () => deployManifests({ version: '0.0.0' })['crd.yaml']],
  ['deploy/crd.yaml', () => fromYaml('deploy/crd.yaml')],
  ["the chart's files/crds.yaml", () => fromYaml('charts/worker-stacks/files/crds.yaml')],
];

test.each(EMITTED)('%s: no list-map key twice in any CRD', (_source, crds) => {
  // GIVEN every CRD of the source
  const all = crds();
  expect(all.map((c) => c.metadata.name).sort()).toEqual([
    'workerclusters.worker-stacks.io',
    'workerimagechannels.worker-stacks.io',
    'workerrolloutpolicies.worker-stacks.io',
  ]);

  // THEN no list that server-side apply merges by key holds a key twice
  for (const crd of all)
    expect({ crd: crd.metadata.name, duplicates: duplicateKeys(crd) }).toEqual({
      crd: crd.metadata.name,
      duplicates: [],
    });
});

test('the walk finds a duplicated rule wherever it is (so the test above could fail)', () => {
  // GIVEN a CRD with one rule written twice deep in its schema
  const crd = workerClusterCrd();
  const listeners = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.listeners;
  listeners['x-kubernetes-validations'] = [{ rule: 'size(self) <= 50' }, { rule: 'size(self) <= 50' }];

  // THEN it is named, with its path
  expect(duplicateKeys(crd)).toEqual([
    '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.listeners.x-kubernetes-validations: size(self) <= 50',
  ]);
});

test('two checks with one rule text are one entry that says both messages', () => {
  // GIVEN the WorkerCluster CRD's listeners node (50 listeners per load balancer, 50 target groups per group)
  const listeners = workerClusterCrd().spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.listeners;
  const rules = (listeners['x-kubernetes-validations'] as Json[]).filter((r) => r.rule === 'size(self) <= 50');

  // THEN one entry carries both messages
  expect(rules).toHaveLength(1);
  expect(rules[0].messageExpression).toContain('listeners exceed the AWS limit of 50 per load balancer');
  expect(rules[0].messageExpression).toContain('target groups exceed the AWS limit of 50 per Auto Scaling group');
});

test('a CRD built with one rule text twice at a node is refused when it is built', () => {
  // GIVEN a node that already has a rule
  const list = withRule([], { rule: 'size(self) <= 50', message: 'a' }, 'spec.listeners');

  // THEN the same text again is refused, naming the node
  expect(() => withRule(list, { rule: 'size(self) <= 50', message: 'b' }, 'spec.listeners')).toThrow(
    'two CEL rules at spec.listeners have the text size(self) <= 50',
  );
});
