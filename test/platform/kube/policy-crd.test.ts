import * as fs from 'node:fs';
import * as path from 'node:path';
import Ajv from 'ajv';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { CRD_NAME, GROUP, VERSION } from '../../../lib/platform/kube/crd';
import {
  POLICY_CRD_NAME,
  POLICY_PLURAL,
  POLICY_PRINTER_COLUMNS,
  POLICY_RULES,
  rolloutPolicyCrd,
  rolloutPolicySchema,
} from '../../../lib/platform/kube/policy-crd';
import { POLICY_KIND, RolloutPolicySpecSchema } from '../../../lib/model/cluster/schema/policy-schema';
import { REPO } from '../../helpers/clusters';
import { fieldPaths, nodes } from '../../helpers/schema-walk';

const schema = rolloutPolicySchema();

test('the CRD: the group and version of WorkerCluster, namespaced like it, short name wrp, no status subresource', () => {
  // WHEN
  const crd = rolloutPolicyCrd();
  // THEN
  expect(crd.metadata.name).toBe(POLICY_CRD_NAME);
  expect(POLICY_CRD_NAME).not.toBe(CRD_NAME);
  expect(crd.spec).toMatchObject({
    group: GROUP,
    scope: 'Namespaced',
    names: { kind: POLICY_KIND, plural: POLICY_PLURAL, shortNames: ['wrp'], categories: ['worker-stacks'] },
  });
  expect(crd.spec.versions).toHaveLength(1);
  expect(crd.spec.versions[0]).toMatchObject({ name: VERSION, served: true, storage: true });
  // what a rollout is doing is derived from the clusters, never stored on the policy
  expect(crd.spec.versions[0].subresources).toBeUndefined();
  expect(schema.properties.status).toBeUndefined();
});

test('every spec field of the file format is in the CRD schema, and no other', () => {
  // GIVEN the file store's schema as JSON Schema
  const file = fieldPaths(z.toJSONSchema(RolloutPolicySpecSchema, { io: 'input', unrepresentable: 'any' }));
  // WHEN
  const crd = fieldPaths(schema.properties.spec);
  // THEN
  expect(crd.sort()).toEqual(file.sort());
  expect(file).toEqual(
    expect.arrayContaining([
      'waves[].selector.matchExpressions[].values',
      'waves[].maintenanceWindows[].timeZone',
      'remainder.soak',
      'paused',
    ]),
  );
});

test('the schema is structural: a type (or int-or-string) on every node, no keyword the API server refuses', () => {
  const refused = [
    'anyOf',
    'oneOf',
    'allOf',
    'not',
    'const',
    '$schema',
    '$ref',
    'propertyNames',
    'definitions',
    '$defs',
    'default',
  ];
  for (const [at, node] of nodes(schema)) {
    // THEN
    expect({ at, refused: refused.filter((k) => k in node) }).toEqual({ at, refused: [] });
    expect({ at, typed: typeof node.type === 'string' || node['x-kubernetes-int-or-string'] === true }).toEqual({
      at,
      typed: true,
    });
  }
  expect(schema.properties.spec.properties.waves.items.properties.maxConcurrent).toMatchObject({
    'x-kubernetes-int-or-string': true,
  });
});

test('every list has maxItems, every map maxProperties, every string a CEL rule reads maxLength (the cost estimate)', () => {
  for (const [at, node] of nodes(schema.properties.spec, 'spec')) {
    // THEN
    if (node.type === 'array') expect({ at, maxItems: typeof node.maxItems }).toEqual({ at, maxItems: 'number' });
    if (node.type === 'object' && node.additionalProperties)
      expect({ at, maxProperties: typeof node.maxProperties }).toEqual({ at, maxProperties: 'number' });
    if (
      (node.type === 'string' || node['x-kubernetes-int-or-string']) &&
      node['x-kubernetes-validations'] &&
      !node.enum
    )
      expect({ at, maxLength: typeof node.maxLength }).toEqual({ at, maxLength: 'number' });
  }
});

test('the policy of docs/fleet-rollouts.md is valid against the CRD schema (as JSON Schema)', () => {
  // GIVEN the page's policy
  const page = fs.readFileSync(path.join(REPO, 'docs', 'fleet-rollouts.md'), 'utf8');
  const yaml = /```yaml\n# clusters\/rollout-policies\/fleet\.yaml\n([\s\S]*?)```/.exec(page)?.[1];
  const validate = new Ajv({ strict: false, validateFormats: false, allErrors: true }).compile(schema);
  // WHEN
  const ok = validate(parse(yaml!));
  // THEN
  expect(validate.errors ?? []).toEqual([]);
  expect(ok).toBe(true);
});

test("the cross-field rules: unique wave names, the remainder's name, the object's name; each with a message", () => {
  // THEN
  expect(POLICY_RULES.map((r) => r.at)).toEqual(['', 'spec.waves', 'spec']);
  for (const r of POLICY_RULES) {
    expect({ rule: r.rule, message: Boolean(r.message ?? r.messageExpression) }).toEqual({
      rule: r.rule,
      message: true,
    });
    if (r.fieldPath) expect(r.fieldPath).toMatch(/^(\.[A-Za-z]+)+$/);
  }
});

test('printer columns: Paused and the first wave, then Age', () => {
  // THEN
  expect(POLICY_PRINTER_COLUMNS.filter((c) => !('priority' in c)).map((c) => `${c.name}=${c.jsonPath}`)).toEqual([
    'Paused=.spec.paused',
    'First Wave=.spec.waves[0].name',
    'Age=.metadata.creationTimestamp',
  ]);
});

test('the CRD is deterministic: the same code gives the same bytes', () => {
  expect(stringify(rolloutPolicyCrd())).toBe(stringify(rolloutPolicyCrd()));
});
