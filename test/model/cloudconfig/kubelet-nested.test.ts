/**
 * The nested KubeletConfiguration fields of eks-al2023's kubeletConfig (evictionHard, kubeReserved,
 * allowedUnsafeSysctls ...): rendered into spec.kubelet.config as given, and checked stricter than the kubelet, each
 * problem naming the file, the object's field path and the rule.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { derive } from '../../../lib/model/cluster/derive';
import { REPO, TEMPLATES } from '../../helpers/clusters';
import { appOnObject } from '../../helpers/app-on-object';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'eks', 'eks-eu1.yaml');
const FILE = 'clusters/eks-eu1.yaml';
const AT = 'spec.cloudConfig.values.kubeletConfig';

function deriveWith(kubeletConfig: Raw) {
  const raw = parse(fs.readFileSync(FIXTURE, 'utf8'));
  raw.spec.cloudConfig.values.kubeletConfig = kubeletConfig;
  return derive(raw, { file: FILE, templateSource: defaultTemplates(), templates: TEMPLATES });
}

describe('nested fields reach spec.kubelet.config as given', () => {
  test.each<[string, Raw]>([
    ['evictionHard', { 'memory.available': '100Mi', 'nodefs.available': '10%', 'pid.available': '5%' }],
    ['evictionSoft', { 'memory.available': '300Mi', 'containerfs.inodesFree': '10%' }],
    ['evictionSoftGracePeriod', { 'memory.available': '1m30s' }],
    ['evictionMinimumReclaim', { 'imagefs.available': '2Gi' }],
    ['kubeReserved', { cpu: '100m', memory: '512Mi', 'ephemeral-storage': '1Gi', pid: '1000' }],
    ['systemReserved', { cpu: '100m', memory: '256Mi' }],
    ['allowedUnsafeSysctls', ['net.core.somaxconn', 'kernel.msg*']],
    ['featureGates', { RotateKubeletServerCertificate: true }],
  ])('%s', (field, value) => {
    // WHEN
    const d = deriveWith({ [field]: value });
    // THEN
    expect(d.problems).toBeUndefined();
    expect(parse(d.config!.bytes.toString('utf8')).spec.kubelet.config[field]).toEqual(value);
  });
});

describe('bad nested input names the file, the field path and the rule', () => {
  test.each<[string, Raw, string, string[]]>([
    [
      'an eviction key that is no eviction signal',
      { evictionHard: { 'memory.availabel': '100Mi' } },
      `${AT}.evictionHard["memory.availabel"]`,
      [
        '"memory.availabel" is not an eviction signal',
        'memory.available, nodefs.available',
        'rule nodeconfig/strict-fields',
      ],
    ],
    [
      'a soft grace period that is no duration',
      { evictionSoftGracePeriod: { 'memory.available': '90' } },
      `${AT}.evictionSoftGracePeriod["memory.available"]`,
      ['"90" is not a duration', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a threshold that is neither quantity nor percentage',
      { evictionMinimumReclaim: { 'nodefs.available': 'ten' } },
      `${AT}.evictionMinimumReclaim["nodefs.available"]`,
      ['"ten" is not a threshold', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a reserved resource the kubelet does not reserve',
      { systemReserved: { gpu: '1' } },
      `${AT}.systemReserved.gpu`,
      [
        '"gpu" is not a resource the kubelet reserves',
        'cpu, memory, ephemeral-storage, pid',
        'rule nodeconfig/strict-fields',
      ],
    ],
    [
      'a number where the map takes strings',
      { kubeReserved: { 'ephemeral-storage': 1 } },
      `${AT}.kubeReserved["ephemeral-storage"]`,
      ['1 is not a string', 'quote it', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a string where a map is due',
      { evictionHard: 'memory.available=100Mi' },
      `${AT}.evictionHard`,
      ['is not a map of strings', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a map where a list of strings is due',
      { allowedUnsafeSysctls: { 'net.core.somaxconn': 'yes' } },
      `${AT}.allowedUnsafeSysctls`,
      ['is not a list of strings', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a list where a scalar is due',
      { shutdownGracePeriod: ['30s'] },
      `${AT}.shutdownGracePeriod`,
      ['is not a duration', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a feature gate that is not a boolean',
      { featureGates: { RotateKubeletServerCertificate: 'true' } },
      `${AT}.featureGates.RotateKubeletServerCertificate`,
      ['is not true or false', 'rule nodeconfig/strict-fields'],
    ],
  ])('%s', (_what, kubeletConfig, field, words) => {
    // WHEN
    const d = deriveWith(kubeletConfig);
    // THEN
    expect(d.stage).toBe('render');
    const p = d.problems?.find((x) => x.path === field);
    expect({ file: p?.file, path: p?.path, rule: p?.rule }).toEqual({
      file: FILE,
      path: field,
      rule: 'nodeconfig/strict-fields',
    });
    for (const w of words) expect(p?.message).toContain(w);
  });

  test.each<[string, Raw, string]>([
    ['a map under a nested map', { evictionHard: { 'memory.available': { value: '100Mi' } } }, 'no deeper'],
    ['a key with a character no value may hold', { evictionHard: { 'memory available': '100Mi' } }, 'does not match'],
    ['a quote in a list item', { allowedUnsafeSysctls: ['net."core"'] }, 'does not match'],
  ])('%s is refused by the declaration, before rendering', (_what, kubeletConfig, words) => {
    // WHEN
    const d = deriveWith(kubeletConfig);
    // THEN
    expect(d.stage).toBe('validate');
    const p = d.problems?.find((x) => x.path === AT);
    expect(p?.file).toBe(FILE);
    expect(p?.message).toContain(words);
  });
});

describe('bad nested input through cdk synth', () => {
  test('the CDK app refuses an eviction key that is no signal with the same file, field path and rule, and writes nothing', () => {
    // GIVEN a fleet of the EKS example whose AL2023 pool (the cluster's values) has a typo'd eviction signal
    const raw = parse(fs.readFileSync(path.join(REPO, 'clusters', 'eks-us2.yaml'), 'utf8'));
    raw.spec.cloudConfig.values.kubeletConfig = { evictionHard: { 'memory.availabel': '100Mi' } };

    // WHEN the app runs as the CDK CLI runs it (cdk.json)
    const { r, outdir, root } = appOnObject('nested-synth', 'eks-us2.yaml', raw);

    // THEN it fails before writing anything, naming the file, the object's field path and the rule
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('clusters/eks-us2.yaml');
    expect(r.stderr).toContain(`${AT}.evictionHard["memory.availabel"]`);
    expect(r.stderr).toContain('rule nodeconfig/strict-fields');
    expect(fs.existsSync(outdir)).toBe(false);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
