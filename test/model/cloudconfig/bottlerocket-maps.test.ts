/**
 * eks-bottlerocket's reserved-resource and eviction maps (kubeReserved, systemReserved, evictionHard, evictionSoft,
 * evictionSoftGracePeriod): each reaches its settings.kubernetes table, changes the checksum (the pool rolls), and a bad
 * key or value is refused naming the file, the object's field path and the rule.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parse } from 'yaml';
import { derive } from '../../../lib/model/cluster/derive';
import { REPO, TEMPLATES } from '../../helpers/clusters';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

const OBJECT = path.join(REPO, 'clusters', 'eks-us2.yaml');
const FILE = 'clusters/eks-us2.yaml';
const AT = 'spec.pools[1].cloudConfig.values';

/** The EKS example with the Bottlerocket pool's (spec.pools[1]) values `set` over its own. */
function deriveWith(set: Record<string, unknown>) {
  const raw = parse(fs.readFileSync(OBJECT, 'utf8'));
  Object.assign(raw.spec.pools[1].cloudConfig.values, set);
  return derive(raw, { file: FILE, templateSource: defaultTemplates(), templates: TEMPLATES });
}

describe('each map reaches its settings table, and its change rolls the pool', () => {
  test.each<[string, string, Raw, Raw]>([
    ['systemReserved', 'system-reserved', { cpu: '100m', memory: '256Mi' }, { cpu: '200m', memory: '256Mi' }],
    ['evictionSoft', 'eviction-soft', { 'memory.available': '300Mi' }, { 'memory.available': '400Mi' }],
    [
      'evictionSoftGracePeriod',
      'eviction-soft-grace-period',
      { 'memory.available': '1m30s' },
      { 'memory.available': '2m' },
    ],
    ['kubeReserved', 'kube-reserved', { cpu: '90m' }, { cpu: '100m' }],
  ])('%s → settings.kubernetes.%s', (value, setting, before, after) => {
    // WHEN
    const base = deriveWith({ [value]: before });
    const head = deriveWith({ [value]: after });
    // THEN
    expect(base.problems).toBeUndefined();
    const config = base.configs!.get('bottlerocket')!;
    expect((parseToml(config.bytes.toString('utf8')) as Raw).settings.kubernetes[setting]).toEqual(before);
    expect(head.configs!.get('bottlerocket')!.checksum).not.toBe(config.checksum);
  });
});

describe('bad input names the file, the field path and the rule', () => {
  test.each<[string, Record<string, unknown>, string, string[]]>([
    [
      'a system-reserved resource Bottlerocket does not reserve',
      { systemReserved: { gpu: '1' } },
      `${AT}.systemReserved.gpu`,
      ['takes cpu, memory, ephemeral-storage', 'rule bottlerocket/setting-types'],
    ],
    [
      'a soft eviction signal the kubelet does not have',
      { evictionSoft: { 'memory.availble': '300Mi' } },
      `${AT}.evictionSoft["memory.availble"]`,
      ['unknown key "memory.availble"', 'rule bottlerocket/setting-types'],
    ],
    [
      'a soft grace period for a signal the kubelet does not have',
      { evictionSoftGracePeriod: { 'nodefs.inodes': '1m' } },
      `${AT}.evictionSoftGracePeriod["nodefs.inodes"]`,
      ['unknown key "nodefs.inodes"', 'rule bottlerocket/setting-types'],
    ],
  ])('%s', (_what, set, field, words) => {
    // WHEN
    const d = deriveWith(set);
    // THEN
    expect(d.stage).toBe('render');
    const p = d.problems?.find((x) => x.path === field);
    expect({ file: p?.file, path: p?.path }).toEqual({ file: FILE, path: field });
    for (const w of words) expect(p?.message).toContain(w);
  });

  test.each<[string, Record<string, unknown>, string]>([
    [
      'a grace period that is no duration',
      { evictionSoftGracePeriod: { 'memory.available': '90' } },
      'evictionSoftGracePeriod',
    ],
    ['a reserved amount that is no quantity', { systemReserved: { memory: 'lots' } }, 'systemReserved'],
  ])('%s is refused by the declaration, before rendering', (_what, set, value) => {
    // WHEN
    const d = deriveWith(set);
    // THEN
    expect(d.stage).toBe('validate');
    expect(d.problems?.find((x) => x.path === `${AT}.${value}`)?.message).toContain('does not match');
  });
});
