/**
 * eks-bottlerocket: the TOML settings are stored under their SHA-256 and are the whole user data, after one comment line
 * carrying that checksum (Bottlerocket takes TOML only: no MIME, no shell), within EC2's 16 KB; checked against the
 * Bottlerocket settings reference's keys and types, and every problem names the file, the object's field and the rule.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { parse } from 'yaml';
import { derive } from '../../../lib/model/cluster/derive';
import { LIMITS } from '../../../lib/model/cluster/rules/limits';
import { CHECKSUM_COMMENT } from '../../../lib/model/cloudconfig/bottlerocket';
import { checkBottlerocket } from '../../../lib/model/cloudconfig/bottlerocket-rules';
import { KUBERNETES_SETTINGS } from '../../../lib/model/cloudconfig/bottlerocket-settings';
import { configUserData } from '../../../lib/model/cloudconfig/user-data';
import { REPO, TEMPLATES } from '../../helpers/clusters';
import { appOnObject } from '../../helpers/app-on-object';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

/** The EKS example: pool default is eks-al2023, pool bottlerocket (spec.pools[1]) eks-bottlerocket. */
const OBJECT = path.join(REPO, 'clusters', 'eks-us2.yaml');
const FILE = 'clusters/eks-us2.yaml';
const POOL = 'spec.pools[1]';

function deriveWith(mutate: (raw: Raw) => void = () => undefined) {
  const raw = parse(fs.readFileSync(OBJECT, 'utf8'));
  mutate(raw);
  return derive(raw, { file: FILE, templateSource: defaultTemplates(), templates: TEMPLATES });
}

/** The Bottlerocket pool's own values (raw). */
const br = (raw: Raw): Raw => raw.spec.pools[1].cloudConfig.values;

function bottlerocketConfig(mutate?: (raw: Raw) => void) {
  const d = deriveWith(mutate);
  if (d.problems) throw new Error(JSON.stringify(d.problems));
  const config = d.configs.get('bottlerocket');
  if (!config) throw new Error('no bottlerocket config');
  return config;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('the stored settings and the user data', () => {
  test('the example renders canonical TOML with no finding, and its user data is the checksum line and those bytes', () => {
    // WHEN the Bottlerocket pool's config and user data are made
    const config = bottlerocketConfig();
    const text = config.bytes.toString('utf8');
    const source = `s3://worker-stacks-config-666666666666-us-west-2/clusters/eks-us2/${config.checksum}.toml`;
    const userData = configUserData(config, source, defaultTemplates());

    // THEN the stored bytes are TOML the strict check takes, with what the object asked for
    expect(config.format).toBe('bottlerocket');
    expect(config.extension).toBe('toml');
    expect(checkBottlerocket(text)).toEqual([]);
    const k8s = (parseToml(text) as Raw).settings.kubernetes;
    expect(k8s).toMatchObject({
      'cluster-name': 'eks-us2',
      'api-server': 'https://89abcdef0123456789abcdef01234567.gr7.us-west-2.eks.amazonaws.com',
      'cluster-dns-ip': '10.100.0.10',
      'max-pods': 29,
      'node-labels': { 'node.kubernetes.io/pool': 'bottlerocket', 'topology.example.com/env': 'prod' },
      'node-taints': { dedicated: ['bottlerocket:NoSchedule'] },
      'kube-reserved': { cpu: '90m', memory: '893Mi', 'ephemeral-storage': '1Gi' },
      'eviction-hard': { 'memory.available': '100Mi', 'nodefs.available': '10%' },
      'shutdown-grace-period': '30s',
    });
    expect(Buffer.from(k8s['cluster-certificate'], 'base64').toString()).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
    // and the node signals its own group, as the rolling update waits for
    expect((parseToml(text) as Raw).settings.cloudformation).toEqual({
      'should-signal': true,
      'stack-name': 'WorkerStack-eks-us2-Pool-bottlerocket',
      'logical-resource-id': expect.stringMatching(/^PoolGroupASG/),
    });

    // THEN the user data is one TOML comment with the checksum and the object, then exactly the stored bytes
    const [first, ...rest] = userData.split('\n');
    expect(first).toBe(`${CHECKSUM_COMMENT} ${config.checksum} ${source}`);
    expect(rest.join('\n')).toBe(text);
    expect(sha256(rest.join('\n'))).toBe(config.checksum);
    // Bottlerocket reads it as the same settings (the comment is nothing to TOML)
    expect(parseToml(userData)).toEqual(parseToml(text));
    expect(Buffer.byteLength(userData)).toBeLessThan(LIMITS.userDataBytes);
  });

  test('the same settings written in another order give the same bytes; any setting change gives another checksum', () => {
    // GIVEN the example, and the same object with its maps in reverse order
    const base = bottlerocketConfig();
    const reversed = bottlerocketConfig((raw) => {
      const v = br(raw);
      for (const k of ['kubeReserved', 'evictionHard', 'kubernetesSettings'])
        v[k] = Object.fromEntries(Object.entries(v[k]).reverse());
    });
    // WHEN one setting changes
    const changed = bottlerocketConfig((raw) => (br(raw).evictionHard['memory.available'] = '200Mi'));

    // THEN order changes nothing, the change changes the checksum (and so the user data: the pool rolls)
    expect(reversed.bytes.equals(base.bytes)).toBe(true);
    expect(changed.checksum).not.toBe(base.checksum);
  });

  test('the AL2023 pool of the same object keeps its NodeConfig', () => {
    // WHEN / THEN
    expect(deriveWith().configs?.get('default')?.format).toBe('nodeadm');
  });
});

describe('bad input names the file, the field and the rule, through validate', () => {
  test.each<[string, (raw: Raw) => void, string, string[]]>([
    [
      'a Bottlerocket key that does not exist (a typo)',
      (raw) => (br(raw).kubernetesSettings['shutdown-grace-periodd'] = '30s'),
      `${POOL}.cloudConfig.values.kubernetesSettings["shutdown-grace-periodd"]`,
      [
        'settings.kubernetes.shutdown-grace-periodd unknown setting',
        'bottlerocket.dev',
        'rule bottlerocket/known-settings',
      ],
    ],
    [
      'a setting of the wrong type',
      (raw) => (br(raw).kubernetesSettings['image-gc-high-threshold-percent'] = '85'),
      `${POOL}.cloudConfig.values.kubernetesSettings["image-gc-high-threshold-percent"]`,
      ['"85" is a string, Bottlerocket wants an integer', 'rule bottlerocket/setting-types'],
    ],
    [
      'an eviction signal the kubelet does not have',
      (raw) => (br(raw).evictionHard['memory.availble'] = '100Mi'),
      `${POOL}.cloudConfig.values.evictionHard["memory.availble"]`,
      ['unknown key "memory.availble"', 'rule bottlerocket/setting-types'],
    ],
    [
      'a kube-reserved resource Bottlerocket does not reserve',
      (raw) => (br(raw).kubeReserved.gpu = '1'),
      `${POOL}.cloudConfig.values.kubeReserved.gpu`,
      ['takes cpu, memory, ephemeral-storage', 'rule bottlerocket/setting-types'],
    ],
    [
      'settings that do not fit in user data',
      (raw) => {
        for (let i = 0; i < 170; i++) br(raw).kubernetesSettings[`setting-${i}`] = 'x'.repeat(100);
      },
      'spec.cloudConfig.values',
      ['the bottlerocket user data (pool bottlerocket) does not fit', 'rule user-data-fits'],
    ],
    [
      'an EKS template on a pool whose image family does not match',
      (raw) => (raw.spec.pools[1].imageFamily = 'eks-al2023'),
      `${POOL}.imageFamily`,
      [
        'eks-al2023: the bottlerocket node config',
        'template eks-bottlerocket',
        'read only by bottlerocket images',
        'rule image-family',
      ],
    ],
    [
      'a pool that is no EKS node in an EKS cluster',
      (raw) => {
        raw.spec.pools[1].imageFamily = 'al2023';
        raw.spec.pools[1].cloudConfig = {
          template: 'al2023-worker',
          values: { kubeletSha256: { amd64: 'a'.repeat(64) }, kubernetesVersion: 'v1.31.2' },
        };
        // What al2023-worker requires and an EKS object leaves out: a bootstrap secret is the cluster's alone.
        raw.spec.cloudConfig.values.bootstrapTokenSecretArn =
          'arn:aws:secretsmanager:us-west-2:666666666666:secret:worker-stacks/eks-us2/token-AbC123';
      },
      'spec.pools[1].cloudConfig.template',
      [
        'al2023-worker: the cloud-init node config (pool bottlerocket) does not join an EKS cluster',
        'rule eks-pools-agree',
      ],
    ],
    [
      'the AL2023 template on a Bottlerocket pool',
      (raw) => (raw.spec.pools[0].imageFamily = 'bottlerocket'),
      'spec.pools[0].imageFamily',
      ['template eks-al2023', 'read only by eks-al2023 images', 'rule image-family'],
    ],
  ])('%s', (_what, mutate, field, words) => {
    // WHEN the object is derived as validate, render, synth and the reconciler derive it
    const d = deriveWith(mutate);
    // THEN it is refused at render, with the file, the field and the rule
    expect(d.stage).toBe('render');
    const p = d.problems?.find((x) => x.path === field);
    expect({ found: p, all: d.problems }).toEqual(expect.objectContaining({ found: expect.anything() }));
    expect(p?.file).toBe(FILE);
    for (const w of words) expect(p?.message).toContain(w);
    // AND a rule of the registry (not one of Bottlerocket's own settings checks) is the problem's id, said once, last
    const id = words.at(-1)!.replace('rule ', '');
    if (!id.includes('/')) {
      expect(p?.rule).toBe(id);
      expect(p?.message.endsWith(`(rule ${id})`)).toBe(true);
    }
  });

  test('an image family nobody has is refused by the schema', () => {
    // WHEN
    const d = deriveWith((raw) => (raw.spec.pools[1].imageFamily = 'windows'));
    // THEN
    expect(d.stage).toBe('validate');
    expect(d.problems?.map((p) => p.path)).toContain(`${POOL}.imageFamily`);
  });

  test('a kubernetesSettings key the template writes itself is a template problem, not a crash', () => {
    // WHEN max-pods is given twice (its own value, and again by name)
    const d = deriveWith((raw) => (br(raw).kubernetesSettings['max-pods'] = 10));
    // THEN
    expect(d.stage).toBe('render');
    expect(d.problems?.[0]?.path).toBe('spec.cloudConfig.template');
    expect(d.problems?.[0]?.message).toContain('not TOML');
  });
});

describe('bad input through cdk synth', () => {
  test('the CDK app refuses a Bottlerocket typo with the same file, field and rule, and writes nothing', () => {
    // GIVEN a fleet of the EKS object with a settings key Bottlerocket does not have
    const raw = parse(fs.readFileSync(OBJECT, 'utf8'));
    br(raw).kubernetesSettings['max-podz'] = 10;

    // WHEN the app runs as the CDK CLI runs it (cdk.json)
    const { r, outdir, root } = appOnObject('br-synth', 'eks-us2.yaml', raw);

    // THEN it fails before writing anything, naming the object's field and the rule
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `${POOL}.cloudConfig.values.kubernetesSettings["max-podz"]: rendered bottlerocket config (pool bottlerocket): settings.kubernetes.max-podz unknown setting`,
    );
    expect(r.stderr).toContain('rule bottlerocket/known-settings');
    expect(fs.existsSync(outdir)).toBe(false);
    fs.rmSync(root, { recursive: true, force: true });
  });
});

describe('the settings rules on their own', () => {
  const VALID = {
    settings: {
      kubernetes: {
        'api-server': 'https://x.eks.amazonaws.com',
        'cluster-certificate': 'Y2E=',
        'cluster-name': 'c',
        'cluster-dns-ip': '10.100.0.10',
        'max-pods': 29,
      },
    },
  };
  const withDoc = (mutate: (d: Raw) => void) => {
    const d: Raw = structuredClone(VALID);
    mutate(d);
    return checkBottlerocket(stringifyToml(d));
  };
  test.each<[string, (d: Raw) => void, string, string]>([
    [
      'no cluster name',
      (d) => delete d.settings.kubernetes['cluster-name'],
      'bottlerocket/eks-join',
      'settings.kubernetes.cluster-name',
    ],
    [
      'no API server',
      (d) => delete d.settings.kubernetes['api-server'],
      'bottlerocket/eks-join',
      'settings.kubernetes.api-server',
    ],
    [
      'an unknown kubernetes key',
      (d) => (d.settings.kubernetes['max-podz'] = 1),
      'bottlerocket/known-settings',
      'settings.kubernetes.max-podz',
    ],
    [
      'an unknown settings table',
      (d) => (d.settings.kubernets = {}),
      'bottlerocket/known-settings',
      'settings.kubernets',
    ],
    ['a key outside settings', (d) => (d.setting = {}), 'bottlerocket/known-settings', 'setting'],
    [
      'max-pods as a float',
      (d) => (d.settings.kubernetes['max-pods'] = 29.5),
      'bottlerocket/setting-types',
      'settings.kubernetes.max-pods',
    ],
    [
      'max-pods below 0',
      (d) => (d.settings.kubernetes['max-pods'] = -1),
      'bottlerocket/setting-types',
      'settings.kubernetes.max-pods',
    ],
    [
      'a CA that is not base64',
      (d) => (d.settings.kubernetes['cluster-certificate'] = 'PEM!'),
      'bottlerocket/setting-types',
      'settings.kubernetes.cluster-certificate',
    ],
    [
      'an API server that is not https',
      (d) => (d.settings.kubernetes['api-server'] = 'http://x'),
      'bottlerocket/setting-types',
      'settings.kubernetes.api-server',
    ],
    [
      'a DNS address that is not one',
      (d) => (d.settings.kubernetes['cluster-dns-ip'] = '10.100.0.300'),
      'bottlerocket/setting-types',
      'settings.kubernetes.cluster-dns-ip',
    ],
    [
      'a taint with an unknown effect',
      (d) => (d.settings.kubernetes['node-taints'] = { dedicated: ['x:NoScheduel'] }),
      'bottlerocket/setting-types',
      'settings.kubernetes.node-taints.dedicated[0]',
    ],
    [
      'a duration that is not one',
      (d) => (d.settings.kubernetes['shutdown-grace-period'] = '30x'),
      'bottlerocket/setting-types',
      'settings.kubernetes.shutdown-grace-period',
    ],
    [
      'a signal without the stack to signal',
      (d) => (d.settings.cloudformation = { 'should-signal': true, 'logical-resource-id': 'ASG' }),
      'bottlerocket/cloudformation-signal',
      'settings.cloudformation.stack-name',
    ],
  ])('%s', (_what, mutate, rule, at) => {
    // WHEN
    const found = withDoc(mutate);
    // THEN
    expect(found).toContainEqual(expect.objectContaining({ rule, path: at }));
  });

  test('valid settings have no finding; text that is not TOML has one', () => {
    // WHEN / THEN
    expect(withDoc(() => undefined)).toEqual([]);
    expect(checkBottlerocket('[settings\nx = ')).toEqual([expect.objectContaining({ rule: 'bottlerocket/toml' })]);
  });

  test('the key table is kebab-case and holds the settings the template writes', () => {
    // WHEN / THEN
    for (const k of Object.keys(KUBERNETES_SETTINGS)) expect(k).toMatch(/^[a-z][a-z0-9]*(-[a-z0-9]+)*$/);
    for (const k of [
      'api-server',
      'cluster-certificate',
      'cluster-name',
      'cluster-dns-ip',
      'node-labels',
      'node-taints',
      'max-pods',
      'kube-reserved',
      'eviction-hard',
    ])
      expect(KUBERNETES_SETTINGS).toHaveProperty([k]);
  });
});
