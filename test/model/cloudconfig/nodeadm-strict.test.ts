/**
 * Every rendered NodeConfig against nodeadm itself, offline: created on the real test kube-apiserver under the CRD
 * that controller-gen generates from nodeadm's own API package, with fieldValidation=Strict (an unknown or mistyped
 * field is refused, where nodeadm's decoder would drop it), and read by the Go-built `nodeadm config check`
 * (v0.0.0-20240229193347-cfab22a10647: the proxy's only version; what it cannot know is in docs/node-configs.md).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { loadClusterFile } from '../../../lib/platform/files/load-clusters';
import { checkNodeConfig } from '../../../lib/model/cloudconfig/nodeconfig-rules';
import { renderConfig, renderPools } from '../../../lib/model/cloudconfig/render';
import { example, REPO, TEMPLATES, tempDir } from '../../helpers/clusters';
import { apiServerWithCrdForFile, create } from '../../helpers/kube-rest';
import { nodeConfigCrd, requireNodeadm } from '../../helpers/nodeadm';
import { run } from '../../helpers/tools';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'eks', 'eks-eu1.yaml');
const api = apiServerWithCrdForFile(nodeConfigCrd, 'nodeconfigs.node.eks.aws');

/** The fixture's NodeConfig after `mutate` changed the object's values. */
function rendered(mutate: (v: Raw) => void): string {
  const raw = parse(fs.readFileSync(FIXTURE, 'utf8'));
  mutate(raw.spec.cloudConfig.values);
  const dir = tempDir('eks-strict-');
  fs.writeFileSync(path.join(dir, 'eks-eu1.yaml'), JSON.stringify(raw));
  const r = loadClusterFile(path.join(dir, 'eks-eu1.yaml'), { templates: TEMPLATES, relativeTo: dir });
  if (!r.cluster) throw new Error(JSON.stringify(r.problems));
  return renderConfig(r.cluster, defaultTemplates()).bytes.toString('utf8');
}

const VARIANTS: Array<[string, (v: Raw) => void]> = [
  ['the example', () => undefined],
  [
    'no labels, no local storage, no kubelet extras',
    (v) => {
      v.nodeLabels = {};
      delete v.localStorageStrategy;
      v.kubeletConfig = {};
    },
  ],
  [
    'taints, flags and a containerd line',
    (v) => {
      v.nodeTaints = [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }];
      v.kubeletFlags = ['--v=2'];
      v.containerdConfig = 'version = 2';
      v.localStorageStrategy = 'Mount';
    },
  ],
  [
    'nested kubelet maps and lists: eviction, reserved resources, sysctls, feature gates',
    (v) => {
      v.kubeletConfig = {
        evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '10%', 'containerfs.available': '15%' },
        evictionSoft: { 'memory.available': '300Mi' },
        evictionSoftGracePeriod: { 'memory.available': '1m30s' },
        evictionMinimumReclaim: { 'memory.available': '0Mi', 'imagefs.available': '2Gi' },
        kubeReserved: { cpu: '100m', memory: '512Mi', 'ephemeral-storage': '1Gi', pid: '1000' },
        systemReserved: { cpu: '100m', memory: '256Mi' },
        allowedUnsafeSysctls: ['net.core.somaxconn', 'kernel.msg*'],
        featureGates: { RotateKubeletServerCertificate: true },
      };
    },
  ],
];

let n = 0;

/** Each variant's NodeConfig, and the one of the EKS example's AL2023 pool (clusters/eks-us2.yaml, pool default). */
const TEXTS: Array<[string, () => string]> = [
  ...VARIANTS.map(([name, mutate]): [string, () => string] => [name, () => rendered(mutate)]),
  [
    'the EKS example in clusters/ (its AL2023 pool)',
    () => renderPools(example('eks-us2'), defaultTemplates()).get('default')!.bytes.toString('utf8'),
  ],
];

describe.each(TEXTS)('%s', (_name, make) => {
  const text = make();

  test("the API server creates it under the CRD generated from nodeadm's API, with fieldValidation=Strict", async () => {
    // GIVEN
    const doc = parse(text);
    doc.metadata = { name: `rendered-${++n}` };
    // WHEN
    const r = await create(api(), doc);
    // THEN
    expect({ status: r.status, body: r.status === 201 ? 'created' : r.body }).toEqual({ status: 201, body: 'created' });
  });

  test('nodeadm config check takes it', () => {
    // GIVEN
    const file = path.join(tempDir('nodeadm-'), 'nodeconfig.yaml');
    fs.writeFileSync(file, text);
    // WHEN
    const r = run(requireNodeadm(), ['config', 'check', '--config-source', `file://${file}`]);
    // THEN
    expect(r.stderr + r.stdout).toContain('Configuration is valid');
    expect(r.status).toBe(0);
  });
});

describe('what the strict server refuses and nodeadm does not', () => {
  test.each<[string, (d: Raw) => void, string]>([
    ['an unknown field', (d) => (d.spec.kubelet.extraArgs = ['--v=2']), 'unknown field "spec.kubelet.extraArgs"'],
    ['a mistyped field', (d) => (d.spec.cluster.enableOutpost = 'yes'), 'spec.cluster.enableOutpost'],
    [
      'a local storage strategy nodeadm does not have',
      (d) => (d.spec.instance = { localStorage: { strategy: 'RAID1' } }),
      'spec.instance.localStorage.strategy',
    ],
  ])('%s', async (_what, mutate, said) => {
    // GIVEN
    const doc = parse(rendered(() => undefined));
    doc.metadata = { name: `bad-${++n}` };
    mutate(doc);
    // WHEN
    const r = await create(api(), doc);
    // THEN
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(String(r.body?.message ?? JSON.stringify(r.body))).toContain(said);
  });
});

describe('what nodeadm config check of this version takes, and the strict checks refuse (why they exist)', () => {
  test.each<[string, (d: Raw) => void, string]>([
    ['an unknown field', (d) => (d.spec.kubelet.extraArgs = ['--v=2']), 'nodeconfig/strict-fields'],
    [
      'a kubelet setting with a typo',
      (d) => (d.spec.kubelet.config.shutdownGracePeriodd = '30s'),
      'nodeconfig/strict-fields',
    ],
    [
      // The kubelet decodes any key into evictionHard; it refuses the signal only when it starts, on the node.
      'an eviction threshold with a signal the kubelet does not have',
      (d) => (d.spec.kubelet.config.evictionHard = { 'memory.availabel': '100Mi' }),
      'nodeconfig/strict-fields',
    ],
    [
      'a reserved resource as a number',
      (d) => (d.spec.kubelet.config.kubeReserved = { cpu: 1 }),
      'nodeconfig/strict-fields',
    ],
    // Its `config check` only decodes: ValidateNodeConfig runs in `init`, on the node.
    ['no CA', (d) => delete d.spec.cluster.certificateAuthority, 'nodeadm/cluster-ca'],
  ])('%s', (_what, mutate, rule) => {
    // GIVEN
    const doc = parse(rendered(() => undefined));
    mutate(doc);
    const file = path.join(tempDir('nodeadm-'), 'nodeconfig.yaml');
    fs.writeFileSync(file, JSON.stringify(doc));
    // WHEN
    const r = run(requireNodeadm(), ['config', 'check', '--config-source', `file://${file}`]);
    // THEN
    expect(r.status).toBe(0);
    expect(r.stderr + r.stdout).toContain('Configuration is valid');
    expect(checkNodeConfig(JSON.stringify(doc)).map((f) => f.rule)).toContain(rule);
  });
});
