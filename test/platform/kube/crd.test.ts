import Ajv from 'ajv';
import { stringify } from 'yaml';
import { clusterJsonSchema } from '../../../lib/model/cluster/reference';
import {
  CRD_NAME,
  GROUP,
  KIND,
  PLURAL,
  PRINTER_COLUMNS,
  VERSION,
  workerClusterCrd,
  workerClusterSchema,
} from '../../../lib/platform/kube/crd';
import { CROSS_FIELD_RULES } from '../../../lib/platform/kube/cel-rules';
import { EXAMPLE_NAMES, rawExample } from '../../helpers/clusters';
import { fieldPaths, nodes } from '../../helpers/schema-walk';

const schema = workerClusterSchema();

test('the CRD names the group, version, kind, plural, short name and the status subresource', () => {
  // WHEN
  const crd = workerClusterCrd();
  // THEN
  expect(crd.metadata.name).toBe(CRD_NAME);
  expect(crd.spec).toMatchObject({
    group: GROUP,
    scope: 'Namespaced',
    names: { kind: KIND, plural: PLURAL, shortNames: ['wc'] },
  });
  expect(crd.spec.versions).toHaveLength(1);
  expect(crd.spec.versions[0]).toMatchObject({
    name: VERSION,
    served: true,
    storage: true,
    subresources: { status: {} },
  });
});

test('every spec field of the file format is in the CRD schema, and no other', () => {
  // GIVEN the JSON Schema `worker-stacks schema` prints (editors, docs/reference.md)
  const file = fieldPaths(clusterJsonSchema().properties.spec);
  // WHEN
  const crd = fieldPaths(schema.properties.spec);
  // THEN
  expect(crd.sort()).toEqual(file.sort());
  expect(file).toEqual(
    expect.arrayContaining([
      'listeners[].nodePort',
      'pool.rollingUpdate.pauseTime',
      'cloudConfig.values.nodeTaints[].effect',
      'tags{}',
    ]),
  );
});

test('the status schema carries every status field of the reconciler, plus the two short checksums', () => {
  // WHEN
  const status = Object.keys(schema.properties.status.properties);
  // THEN
  expect(status).toEqual(
    expect.arrayContaining([
      'cloudConfigChecksum',
      'desiredChecksum',
      'observedGeneration',
      'stackStatus',
      'conditions',
      'controller',
      'desiredChecksumShort',
      'cloudConfigChecksumShort',
    ]),
  );
  expect(schema.properties.status.properties.conditions).toMatchObject({
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });
});

test('the schema is structural: a type on every node, no keyword the API server refuses', () => {
  // GIVEN keywords apiextensions.k8s.io/v1 refuses in a structural schema, or that zod emits and it does not know
  // (and `default`: the reconciler applies zod's defaults, so both stores hold what the user wrote)
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
    expect({
      at,
      typed: typeof node.type === 'string' || node['x-kubernetes-preserve-unknown-fields'] === true,
    }).toEqual({ at, typed: true });
    if (node.properties)
      expect({ at, additionalProperties: node.additionalProperties }).toEqual({ at, additionalProperties: undefined });
  }
});

test("every string and list that a CEL rule reads is bounded, so the API server can estimate the rules' cost", () => {
  // GIVEN every node of spec
  for (const [at, node] of nodes(schema.properties.spec, 'spec')) {
    // THEN a validated string has maxLength (or is an enum), a list maxItems, a map maxProperties
    if (node.type === 'string' && node['x-kubernetes-validations'] && !node.enum)
      expect({ at, maxLength: typeof node.maxLength }).toEqual({ at, maxLength: 'number' });
    if (node.type === 'array') expect({ at, maxItems: typeof node.maxItems }).toEqual({ at, maxItems: 'number' });
    if (node.type === 'object' && node.additionalProperties)
      expect({ at, maxProperties: typeof node.maxProperties }).toEqual({ at, maxProperties: 'number' });
  }
});

test.each(EXAMPLE_NAMES)('the example %s is valid against the CRD schema (as JSON Schema)', (name) => {
  // GIVEN the structural schema read as JSON Schema (x-kubernetes-* keywords are the API server's)
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  const validate = ajv.compile(schema);
  // WHEN
  const ok = validate(rawExample(name));
  // THEN
  expect(validate.errors ?? []).toEqual([]);
  expect(ok).toBe(true);
});

test("a field the file format refuses to know is pruned, not kept: no object in spec preserves unknown fields but the template values (the cluster's and each pool's)", () => {
  // WHEN
  const preserving = nodes(schema.properties.spec, 'spec')
    .filter(([, n]) => n['x-kubernetes-preserve-unknown-fields'])
    .map(([at]) => at);
  // THEN the template's own values are checked against its values.yaml by the reconciler
  expect(preserving.sort()).toEqual(['spec.cloudConfig.values', 'spec.pools[].cloudConfig.values']);
});

test('the CRD is deterministic: the same code gives the same bytes', () => {
  // WHEN
  const a = stringify(workerClusterCrd());
  const b = stringify(workerClusterCrd());
  // THEN
  expect(a).toBe(b);
});

test('every cross-field rule has a message, and its field path names a field of the node it sits on', () => {
  for (const r of CROSS_FIELD_RULES) {
    // THEN
    expect({ rule: r.rule, message: Boolean(r.message ?? r.messageExpression) }).toEqual({
      rule: r.rule,
      message: true,
    });
    if (r.fieldPath) expect(r.fieldPath).toMatch(/^(\.[A-Za-z][A-Za-z0-9]*)+$/);
  }
});

test('printer columns show Ready, Reason, the desired and live checksum prefixes, pending replacements, the stack status, the pools ready and Age', () => {
  // WHEN
  const shown = PRINTER_COLUMNS.filter((c) => !('priority' in c)).map((c) => `${c.name}=${c.jsonPath}`);
  // THEN
  expect(shown).toEqual([
    'Ready=.status.conditions[?(@.type=="Ready")].status',
    'Reason=.status.conditions[?(@.type=="Ready")].reason',
    'Desired=.status.desiredChecksumShort',
    'Live=.status.cloudConfigChecksumShort',
    'Pending=.status.pendingRolls',
    'Stack=.status.stackStatus',
    'Pools=.status.poolsReady',
    'Age=.metadata.creationTimestamp',
  ]);
});
