import * as fs from 'node:fs';
import * as path from 'node:path';
import { validateCluster } from '../../../../lib/model/cluster/validate';
import { secretReferences } from '../../../../lib/model/cluster/values/secret-values';
import { listTemplates } from '../../../../lib/model/cloudconfig/templates';
import { rawExample, tempDir } from '../../../helpers/clusters';
import { synthCluster } from '../../../helpers/synth';
import { copyTemplates } from '../../../fixtures/cloudconfig/boot';
import { Json } from '../../../helpers/json';
import { rawPoolsExample } from '../../../helpers/named-pools';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../../../lib/platform/files/template-directory';

/**
 * Issue 32 item 3: every secret a template value names is the cluster's own, wherever it is set (the cluster's values
 * or a pool's) and whichever template declares it (bootstrapTokenSecretArn for all, or a template's own value). Before,
 * only spec.cloudConfig.values.bootstrapTokenSecretArn was checked.
 */

const OWN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:worker-stacks/prod-eu1/registry-AbCdEf';
const OTHER_TEAM = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:team-db/password-AbCdEf';
const OTHER_CLUSTER = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:worker-stacks/staging-us1/x-AbCdEf';
const OTHER_ACCOUNT = 'arn:aws:secretsmanager:eu-west-1:999999999999:secret:worker-stacks/prod-eu1/x-AbCdEf';

let dir: string;
beforeEach(() => {
  // GIVEN (for every test) a copy of the templates where flatcar-worker, prod-eu1's, declares two values of its own
  // that name secrets: a registry credential and a list of extra secrets
  dir = copyTemplates(DEFAULT_TEMPLATES_DIR, tempDir('secret-values'));
  fs.appendFileSync(
    path.join(dir, 'flatcar-worker', 'values.yaml'),
    [
      '  - name: registrySecretArn',
      '    type: string',
      '    pattern: "[A-Za-z0-9:/_+=.@-]+"',
      '    description: registry credentials',
      '  - name: extraSecretArns',
      '    type: list',
      '    pattern: "[A-Za-z0-9:/_+=.@-]+"',
      '    default: []',
      '    description: more secrets',
      '',
    ].join('\n'),
  );
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function problems(mutate: (o: Json) => void) {
  const raw = rawPoolsExample();
  mutate(raw);
  return validateCluster(raw, {
    file: 'clusters/prod-eu1.yaml',
    templates: listTemplates(templateDirectory(dir)),
  }).problems.map((p) => `${p.path}: ${p.message}`);
}

const notOwn = (at: string, name: string) =>
  `${at}: the secret "${name}" is not one of this cluster's: its name must start with worker-stacks/prod-eu1/ (the nodes of cluster prod-eu1 may read only those; create the secret under that name) (rule secret-scope)`;

test.each([
  {
    what: "a template's own value in the cluster's values, another team's secret",
    mutate: (o: Json) => (o.spec.cloudConfig.values.registrySecretArn = OTHER_TEAM),
    expected: [notOwn('spec.cloudConfig.values.registrySecretArn', 'team-db/password-AbCdEf')],
  },
  {
    what: "a pool's value, another cluster's secret",
    mutate: (o: Json) => (o.spec.pools[2].cloudConfig.values.registrySecretArn = OTHER_CLUSTER),
    expected: [notOwn('spec.pools[2].cloudConfig.values.registrySecretArn', 'worker-stacks/staging-us1/x-AbCdEf')],
  },
  {
    what: "an item of a pool's list",
    mutate: (o: Json) => (o.spec.pools[2].cloudConfig.values.extraSecretArns = [OWN, OTHER_TEAM]),
    expected: [notOwn('spec.pools[2].cloudConfig.values.extraSecretArns[1]', 'team-db/password-AbCdEf')],
  },
  {
    what: "a pool's secret in another account",
    mutate: (o: Json) => (o.spec.pools[0].cloudConfig = { values: { registrySecretArn: OTHER_ACCOUNT } }),
    expected: [
      'spec.pools[0].cloudConfig.values.registrySecretArn: the secret is in account 999999999999, the cluster in 111111111111 (use the secret of account 111111111111) (rule reference-in-cluster)',
    ],
  },
  {
    what: 'a secret ARN without an account',
    mutate: (o: Json) =>
      (o.spec.cloudConfig.values.registrySecretArn = 'arn:aws:secretsmanager:eu-west-1::secret:team-db/x'),
    expected: [
      'spec.cloudConfig.values.registrySecretArn: "arn:aws:secretsmanager:eu-west-1::secret:team-db/x" is not a Secrets Manager secret ARN (arn:<partition>:secretsmanager:<region>:<account>:secret:<name>); name the secret by its full ARN (rule secret-arn)',
    ],
  },
])('$what is refused at its field', ({ mutate, expected }) => {
  // WHEN validated; THEN exactly that problem, at the value's own path
  expect(problems(mutate)).toEqual(expected);
});

test("the cluster's own secrets, in its values and a pool's, are valid and all found", () => {
  // GIVEN own secrets in the cluster's value and in a pool's list
  const mutate = (o: Json) => {
    o.spec.cloudConfig.values.registrySecretArn = OWN;
    o.spec.pools[2].cloudConfig.values.extraSecretArns = [OWN];
  };
  // WHEN validated; THEN no problem
  expect(problems(mutate)).toEqual([]);
  // AND the references are the bootstrap token's and both values'
  const raw = rawPoolsExample();
  mutate(raw);
  expect(secretReferences(raw.spec).map((r) => r.path)).toEqual([
    'spec.cloudConfig.values.bootstrapTokenSecretArn',
    'spec.cloudConfig.values.registrySecretArn',
    'spec.pools[2].cloudConfig.values.extraSecretArns[0]',
  ]);
});

test('the node role may read every secret the values name (else a declared secret of its own is refused at boot)', () => {
  // GIVEN prod-eu1 (one pool) with its own secret in a template's own value
  const raw = rawExample('prod-eu1');
  raw.spec.cloudConfig.values.registrySecretArn = OWN;
  const { cluster, problems } = validateCluster(raw, {
    file: 'clusters/prod-eu1.yaml',
    templates: listTemplates(templateDirectory(dir)),
  });
  expect(problems).toEqual([]);
  // WHEN synthesized
  const s = synthCluster(cluster!, { templatesDir: dir });
  // THEN the role's own policy allows GetSecretValue on the bootstrap token's secret and that one
  const allowed = Object.values<Json>(s.json.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy')
    .flatMap((r) => r.Properties.PolicyDocument.Statement)
    .filter((st: Json) => st.Effect === 'Allow' && st.Action === 'secretsmanager:GetSecretValue')
    .flatMap((st: Json) => [st.Resource].flat());
  expect(allowed).toEqual([raw.spec.cloudConfig.values.bootstrapTokenSecretArn, OWN].sort());
});
