import * as fs from 'node:fs';
import * as path from 'node:path';
import { ChannelHoldSchema } from '../../../../lib/model/channel/channel-schema';
import { crossFieldProblems } from '../../../../lib/model/cluster/rules/cross-field';
import { CLUSTER_RULES } from '../../../../lib/model/cluster/rules/rule-registry';
import { issueToProblems, validateCluster } from '../../../../lib/model/cluster/validate';
import { imageChannelCrd } from '../../../../lib/platform/kube/channel-crd';
import { workerClusterSchema } from '../../../../lib/platform/kube/crd';
import { rawExample, REPO, TEMPLATES } from '../../../helpers/clusters';
import { nodes } from '../../../helpers/schema-walk';

const ids: readonly string[] = CLUSTER_RULES.map((r) => r.id);
const RULE_SUFFIX = /\(rule ([a-z0-9-]+)\)/g;

test('every named rule has a kebab-case id of its own, fields and words', () => {
  // THEN
  expect(new Set(ids).size).toBe(ids.length);
  for (const r of CLUSTER_RULES) {
    expect({ id: r.id, ok: /^[a-z0-9]+(-[a-z0-9]+)*$/.test(r.id) }).toEqual({ id: r.id, ok: true });
    expect({ id: r.id, paths: r.paths.length > 0, says: r.says.length > 0 }).toEqual({
      id: r.id,
      paths: true,
      says: true,
    });
  }
});

test("the CRD's CEL messages name registered rules, and name every rule the registry says the CRD states", () => {
  // GIVEN every rule message of the CRDs (the WorkerImageChannel's states the channel rules): a messageExpression's
  // string literals are its messages (one per branch)
  const channelSchema = imageChannelCrd().spec.versions[0].schema.openAPIV3Schema;
  const messages = [...nodes(workerClusterSchema()), ...nodes(channelSchema)].flatMap(([, n]) =>
    ((n['x-kubernetes-validations'] ?? []) as Array<{ message?: string; messageExpression?: string }>).flatMap((v) =>
      v.messageExpression !== undefined ? (v.messageExpression.match(/"(?:[^"\\]|\\.)*"/g) ?? []) : [v.message ?? ''],
    ),
  );
  // WHEN the rule ids they end with are read
  const named = new Set(messages.flatMap((m) => [...m.matchAll(RULE_SUFFIX)].map((x) => x[1])));
  // THEN each is in the registry, and the registry's CEL column is the truth
  expect([...named].filter((id) => !ids.includes(id))).toEqual([]);
  const stated = CLUSTER_RULES.filter((r) => r.cel === 'crd' || 'partly' in r.cel).map((r) => r.id);
  expect(ids.filter((id) => named.has(id)).sort()).toEqual([...stated].sort());
  // AND no message names its rule twice
  expect(messages.filter((m) => [...m.matchAll(RULE_SUFFIX)].length > 1)).toEqual([]);
});

test('every problem of a rule over several fields carries its id, and its message ends with it once', () => {
  // GIVEN an object that breaks many cross-field rules at once
  const raw = rawExample('edge-ap1');
  raw.spec.pool.minSize = 400;
  raw.spec.pool.instanceTypes.push(raw.spec.pool.instanceTypes[0], 'm7g.large');
  raw.spec.network.subnetIds.pop();
  raw.spec.network.availabilityZones[0] = 'us-east-1a';
  raw.spec.securityGroupRules[0].fromPort = 1;
  raw.spec.listeners[0].protocol = 'TLS';
  raw.spec.listeners[1].name = raw.spec.listeners[0].name;
  raw.spec.nodePortRange = { from: 30000, to: 20000 };
  raw.spec.tags = Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`k${i}`, 'v']));
  raw.spec.cloudConfig.template = 'nope';
  // WHEN
  const found = crossFieldProblems(raw, TEMPLATES);
  // THEN
  expect(found.length).toBeGreaterThan(9);
  for (const f of found) {
    expect({ message: f.message, rule: f.rule !== undefined && ids.includes(f.rule) }).toEqual({
      message: f.message,
      rule: true,
    });
    expect([...f.message.matchAll(RULE_SUFFIX)].map((m) => m[1])).toEqual([f.rule]);
    expect(f.message.endsWith(`(rule ${f.rule})`)).toBe(true);
  }
});

test('validate keeps the id on the problem, beside the file and path', () => {
  // GIVEN
  const raw = rawExample('prod-eu1');
  raw.spec.pool.minSize = 40;
  // WHEN
  const { problems } = validateCluster(raw, { file: 'clusters/prod-eu1.yaml', templates: TEMPLATES });
  // THEN
  expect(problems).toEqual([
    {
      file: 'clusters/prod-eu1.yaml',
      path: 'spec.pool.minSize',
      message: '40 is greater than maxSize 30 (rule pool-size-order)',
      rule: 'pool-size-order',
    },
  ]);
});

test("a named rule's refinement of a schema gives its problem the id, as on a channel's hold", () => {
  // GIVEN a hold of a WorkerImageChannel that gives both clusters and a selector
  const parsed = ChannelHoldSchema.safeParse({ release: 'r1', clusters: ['a'], selector: { matchLabels: { x: 'y' } } });
  // WHEN its issues are read as problems
  const problems = parsed.error!.issues.flatMap((i) => issueToProblems('image-channels/al2023.yaml', i));
  // THEN
  expect(problems).toEqual([
    {
      file: 'image-channels/al2023.yaml',
      path: '',
      message: 'give exactly one of clusters and selector (rule channel-holds)',
      rule: 'channel-holds',
    },
  ]);
});

test('every rule id a message in lib/ names is in the registry', () => {
  // GIVEN every `(rule <id>)` written out in the source (a message a rule builds by hand, or a doc comment)
  const files = fs
    .readdirSync(path.join(REPO, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'));
  const named = files.flatMap((f) =>
    [...fs.readFileSync(path.join(REPO, 'lib', f), 'utf8').matchAll(RULE_SUFFIX)].map((m) => ({ file: f, id: m[1] })),
  );
  // THEN the scan saw some, and each is a registered rule
  expect(named.length).toBeGreaterThan(3);
  expect(named.filter((n) => !ids.includes(n.id))).toEqual([]);
});
