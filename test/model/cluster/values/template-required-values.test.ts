/**
 * kubernetesVersion and bootstrapTokenSecretArn are typed for every template but required only by the templates that
 * read them (flatcar-worker, al2023-worker: `required: true` in their values.yaml). An EKS object leaves them out;
 * a Flatcar or AL2023 one without them is refused by validate with the field path and the template that needs it, and
 * the CRD carries the same requirement as CEL, made from the same declarations.
 */
import { validateCluster } from '../../../../lib/model/cluster/validate';
import { templateRequiredRules } from '../../../../lib/platform/kube/cel-template-rules';
import { CROSS_FIELD_RULES } from '../../../../lib/platform/kube/cel-rules';
import { rawExample, TEMPLATES } from '../../../helpers/clusters';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

function validate(name: string, mutate: (o: Raw) => void = () => undefined) {
  const o = rawExample(name);
  mutate(o);
  return validateCluster(o, { file: `clusters/${name}.yaml`, templates: TEMPLATES }).problems;
}

const VALUES = ['kubernetesVersion', 'bootstrapTokenSecretArn'] as const;

test('the EKS example has neither value, and is valid', () => {
  // GIVEN
  const values = rawExample('eks-us2').spec.cloudConfig.values;
  // THEN
  expect(Object.keys(values)).not.toEqual(expect.arrayContaining([VALUES[0]]));
  expect(Object.keys(values)).not.toEqual(expect.arrayContaining([VALUES[1]]));
  expect(validate('eks-us2')).toEqual([]);
});

describe.each([
  ['prod-eu1', 'flatcar-worker'],
  ['staging-us1', 'al2023-worker'],
])('%s (template %s)', (name, template) => {
  test.each(VALUES)('without %s: refused at its field path, naming the template that needs it', (value) => {
    // WHEN
    const problems = validate(name, (o) => {
      const { [value]: _gone, ...rest } = o.spec.cloudConfig.values;
      o.spec.cloudConfig.values = rest;
    });
    // THEN
    expect(problems).toEqual([
      {
        file: `clusters/${name}.yaml`,
        path: `spec.cloudConfig.values.${value}`,
        message: expect.stringMatching(
          new RegExp(
            `^required field is missing \\(template ${template} needs it: .+\\) \\(rule template-value-required\\)$`,
          ),
        ),
        rule: 'template-value-required',
      },
    ]);
  });
});

test('a pool that runs a template needing them, in a cluster whose own template is not rendered, needs them too', () => {
  // GIVEN a Flatcar cluster whose every pool runs AL2023 (its own template), with no kubernetesVersion anywhere
  const problems = validate('apps-eu1', (o) => {
    delete o.spec.cloudConfig.values.kubernetesVersion;
    for (const p of o.spec.pools) {
      delete p.cloudConfig?.values?.kubernetesVersion;
      p.cloudConfig = {
        template: 'al2023-worker',
        values: { kubeletSha256: { amd64: 'a'.repeat(64), arm64: 'b'.repeat(64) } },
      };
    }
  });
  // THEN each pool is refused at its own path; the cluster's template, rendered by no pool, asks nothing
  expect(problems.filter((p) => p.path.endsWith('.kubernetesVersion')).map((p) => p.path)).toEqual([
    'spec.pools[0].cloudConfig.values.kubernetesVersion',
    'spec.pools[1].cloudConfig.values.kubernetesVersion',
    'spec.pools[2].cloudConfig.values.kubernetesVersion',
  ]);
});

describe('the CRD requires them as validate does', () => {
  const rules = templateRequiredRules();

  test.each(VALUES)('%s: a rule on the cluster, for exactly the templates that need it', (value) => {
    // WHEN
    const mine = rules.filter((r) => r.rule.includes(`.values.${value})`));
    // THEN
    expect(mine.map((r) => [r.at, r.fieldPath])).toEqual([['spec', `.cloudConfig.values.${value}`]]);
    for (const r of mine) {
      expect(r.rule).toContain(`["al2023-worker", "flatcar-worker"]`);
      expect(r.rule).not.toMatch(/eks-/);
      expect(r.messageExpression).toContain('required field is missing (template ');
    }
    expect(CROSS_FIELD_RULES).toEqual(expect.arrayContaining(mine));
  });

  test('the bootstrap secret rules hold when the secret is absent (an EKS object)', () => {
    // THEN every rule that reads it first asks whether it is there: CEL fails on a missing field
    const reading = CROSS_FIELD_RULES.filter((r) => r.rule.includes('values.bootstrapTokenSecretArn.'));
    expect(reading.length).toBeGreaterThan(0);
    for (const r of reading)
      expect(r.rule).toMatch(/^!has\(self(\.spec)?\.cloudConfig\.values\.bootstrapTokenSecretArn\) \|\| /);
  });
});
