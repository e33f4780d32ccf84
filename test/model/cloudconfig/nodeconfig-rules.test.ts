/**
 * The rendered NodeConfig checked stricter than nodeadm: its own validation ported, strict decoding against its API
 * types and KubeletConfiguration's fields, the service range, and the user-data budget; each problem names the file,
 * the object's field that made it and the rule.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { derive } from '../../../lib/model/cluster/derive';
import { checkNodeConfig } from '../../../lib/model/cloudconfig/nodeconfig-rules';
import { REPO, TEMPLATES } from '../../helpers/clusters';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'eks', 'eks-eu1.yaml');
const FILE = 'clusters/eks-eu1.yaml';

function deriveWith(mutate: (values: Raw) => void) {
  const raw = parse(fs.readFileSync(FIXTURE, 'utf8'));
  mutate(raw.spec.cloudConfig.values);
  return derive(raw, { file: FILE, templateSource: defaultTemplates(), templates: TEMPLATES });
}

const VALID = parse(
  'apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://x\n    certificateAuthority: Y2E=\n    cidr: 10.100.0.0/16\n  kubelet:\n    config:\n      clusterDNS: [10.100.0.10]\n',
);

describe('the example renders a NodeConfig with no finding', () => {
  test('derive gives its config', () => {
    // WHEN
    const d = deriveWith(() => undefined);
    // THEN
    expect(d.problems).toBeUndefined();
    expect(d.config?.format).toBe('nodeadm');
  });
});

describe('bad input names the file, the field and the rule', () => {
  test.each<[string, (v: Raw) => void, string, string[]]>([
    [
      'a kubelet setting the kubelet does not know',
      (v) => (v.kubeletConfig.shutdownGracePeriodd = '30s'),
      'spec.cloudConfig.values.kubeletConfig.shutdownGracePeriodd',
      ['unknown KubeletConfiguration field shutdownGracePeriodd', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a kubelet setting of the wrong type',
      (v) => (v.kubeletConfig.maxParallelImagePulls = 'five'),
      'spec.cloudConfig.values.kubeletConfig.maxParallelImagePulls',
      ['"five" is not an integer', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a duration that is not one',
      (v) => (v.kubeletConfig.shutdownGracePeriod = '30x'),
      'spec.cloudConfig.values.kubeletConfig.shutdownGracePeriod',
      ['is not a duration', 'rule nodeconfig/strict-fields'],
    ],
    [
      'a CIDR that is not the service range (the DNS address is outside it)',
      (v) => (v.serviceCidr = '192.168.0.0/16'),
      'spec.cloudConfig.values.clusterDNS',
      ['"10.100.0.10" is not in the service range 192.168.0.0/16', 'rule nodeconfig/cluster-dns-in-service-cidr'],
    ],
    [
      'a config that does not fit in user data',
      (v) => {
        for (let i = 0; i < 170; i++) v.kubeletConfig[`setting${i}`] = 'x'.repeat(100);
      },
      'spec.cloudConfig.values',
      ['does not fit', 'over the 16384-byte budget', 'rule user-data-fits'],
    ],
  ])('%s', (_what, mutate, field, words) => {
    // WHEN
    const d = deriveWith(mutate);
    // THEN
    expect(d.stage).toBe('render');
    const p = d.problems?.find((x) => x.path === field);
    expect(p).toBeDefined();
    expect(p?.file).toBe(FILE);
    for (const w of words) expect(p?.message).toContain(w);
  });

  test('a missing cluster field is refused before rendering (eksClusterName is required)', () => {
    // WHEN
    const d = deriveWith((v) => delete v.eksClusterName);
    // THEN
    expect(d.stage).toBe('validate');
    expect(d.problems?.map((p) => p.path)).toContain('spec.cloudConfig.values.eksClusterName');
  });
});

describe("nodeadm's own validation, ported, and strict decoding of the NodeConfig", () => {
  const withDoc = (mutate: (d: Raw) => void) => {
    const d = structuredClone(VALID);
    mutate(d);
    return checkNodeConfig(stringify(d));
  };
  test.each<[string, (d: Raw) => void, string, string]>([
    ['no name', (d) => delete d.spec.cluster.name, 'nodeadm/cluster-name', 'spec.cluster.name'],
    [
      'no endpoint',
      (d) => delete d.spec.cluster.apiServerEndpoint,
      'nodeadm/cluster-endpoint',
      'spec.cluster.apiServerEndpoint',
    ],
    [
      'no CA',
      (d) => delete d.spec.cluster.certificateAuthority,
      'nodeadm/cluster-ca',
      'spec.cluster.certificateAuthority',
    ],
    ['no cidr', (d) => delete d.spec.cluster.cidr, 'nodeadm/cluster-cidr', 'spec.cluster.cidr'],
    ['an Outpost without id', (d) => (d.spec.cluster.enableOutpost = true), 'nodeadm/outpost-id', 'spec.cluster.id'],
    ['an unknown spec field', (d) => (d.spec.kubelett = {}), 'nodeconfig/strict-fields', 'spec.kubelett'],
    [
      'a CA that is not base64',
      (d) => (d.spec.cluster.certificateAuthority = 'not base64!'),
      'nodeconfig/strict-fields',
      'spec.cluster.certificateAuthority',
    ],
    [
      'flags that are not strings',
      (d) => (d.spec.kubelet.flags = [1]),
      'nodeconfig/strict-fields',
      'spec.kubelet.flags',
    ],
  ])('%s', (_what, mutate, rule, at) => {
    // WHEN
    const found = withDoc(mutate);
    // THEN
    expect(found).toContainEqual(expect.objectContaining({ rule, path: at }));
  });

  test('a valid NodeConfig has no finding', () => {
    // WHEN / THEN
    expect(checkNodeConfig(stringify(VALID))).toEqual([]);
  });
});
