import { formatProblem } from '../../../lib/core/errors';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { rawExample, TEMPLATES } from '../../helpers/clusters';

describe('every problem at once', () => {
  test('independent errors in one object are all reported in one call, sorted by field path', () => {
    // GIVEN prod-eu1 with a bad port, minSize > maxSize, an unknown field, a type error, a bad CIDR and an unknown template
    const raw = rawExample('prod-eu1');
    raw.spec.listeners![1].port = 70000;
    raw.spec.pool.minSize = 40;
    raw.spec.pool.instanceType = 'm6i.large';
    raw.spec.cloudConfig.values.maxPods = '110';
    raw.spec.securityGroupRules![2].source.cidr = '10.20.1.0/16';
    raw.spec.cloudConfig.template = 'flatcar';
    const file = 'clusters/prod-eu1.yaml';

    // WHEN it is validated once
    const result = validateCluster(raw, { file, templates: TEMPLATES });

    // THEN each error is there, with its own path and rule, and there is no cluster
    expect(result.cluster).toBeUndefined();
    expect(result.problems.map(formatProblem)).toEqual([
      'clusters/prod-eu1.yaml: spec.cloudConfig.template: unknown template "flatcar" (known: al2023-worker, eks-al2023, eks-bottlerocket, flatcar-worker) (rule template-known)',
      'clusters/prod-eu1.yaml: spec.cloudConfig.values.maxPods: "110" is a string, expected a number (remove the quotes)',
      'clusters/prod-eu1.yaml: spec.listeners[1].port: 70000 is not a port (1-65535)',
      'clusters/prod-eu1.yaml: spec.pool.instanceType: unknown field (check the spelling against docs/reference.md)',
      'clusters/prod-eu1.yaml: spec.pool.minSize: 40 is greater than maxSize 30 (rule pool-size-order)',
      'clusters/prod-eu1.yaml: spec.securityGroupRules[2].source.cidr: 10.20.1.0/16 has host bits set (did you mean 10.20.0.0/16?)',
    ]);
  });

  test('cross-field rules still run while other fields have type errors', () => {
    // GIVEN staging-us1 whose maxSize is a string and whose listeners reference no load balancer, plus a missing account
    const raw = rawExample('staging-us1');
    raw.spec.pool.maxSize = 'four';
    raw.spec.listeners = [{ name: 'web', port: 80, nodePort: 30080 }];
    delete raw.spec.account;
    raw.metadata.name = 'staging-us9';

    // WHEN it is validated
    const result = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES });

    // THEN the type errors and the cross-field and file-name problems are all reported
    expect(result.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'metadata.name: "staging-us9" must match the file name (staging-us1) (rule name-matches-file)',
      'spec.account: required field is missing (expected string)',
      'spec.cloudConfig.values.bootstrapTokenSecretArn: the secret "worker-stacks/staging-us1/kubelet-bootstrap-XyZ123" is not one of this cluster\'s: its name must start with worker-stacks/staging-us9/ (the nodes of cluster staging-us9 may read only those; create the secret under that name) (rule secret-scope)',
      'spec.loadBalancer: required field is missing (listeners need a load balancer with allowedCidrs) (rule listeners-need-load-balancer)',
      'spec.pool.maxSize: "four" is a string, expected a number (remove the quotes)',
    ]);
  });

  test('an object that is not a map at all is one problem for the whole file', () => {
    // GIVEN a YAML file whose document is a plain string
    // WHEN it is validated
    const result = validateCluster('hello', { file: 'clusters/x.yaml', templates: TEMPLATES });

    // THEN one problem, with an empty path, saying what was expected
    expect(result.cluster).toBeUndefined();
    expect(result.problems).toEqual([
      { file: 'clusters/x.yaml', path: '', message: '"hello" is a string, expected an object' },
    ]);
    expect(formatProblem(result.problems[0])).toBe('clusters/x.yaml: "hello" is a string, expected an object');
  });

  test('an empty spec is reported as empty, not as each of its fields', () => {
    // GIVEN staging-us1 with `spec:` left empty (null in YAML)
    const raw = rawExample('staging-us1');
    raw.spec = null;

    // WHEN it is validated
    const result = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates: TEMPLATES });

    // THEN the problem names spec and says it is empty
    expect(result.problems).toEqual([
      { file: 'clusters/staging-us1.yaml', path: 'spec', message: 'is empty (null), expected an object' },
    ]);
  });
});
