import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { tempDir } from '../../helpers/clusters';

/**
 * Issue 32 item 11: two rollout policies selecting the same cluster were accepted by validate; the daemon then held
 * that cluster (Held) and a change to it never rolled. validate sees the objects and the policies together, so it
 * refuses the overlap at the later policy's clusterSelector, naming the cluster and the other policy.
 */

const REPO = path.resolve(__dirname, '..', '..', '..');
const policy = (name: string, selector: string) => `apiVersion: worker-stacks.io/v1alpha1
kind: WorkerRolloutPolicy
metadata: { name: ${name} }
spec:
  clusterSelector: ${selector}
  waves:
    - { name: canary, selector: { matchLabels: { ring: canary } }, maxConcurrent: 1, soak: 1h }
`;

/** The example fleet, prod-eu1 labelled tier=prod, and the given policies. */
async function validate(policies: Record<string, string>) {
  const dir = path.join(tempDir('policy-overlap'), 'clusters');
  fs.cpSync(path.join(REPO, 'clusters'), dir, { recursive: true });
  const prod = path.join(dir, 'prod-eu1.yaml');
  fs.writeFileSync(
    prod,
    fs.readFileSync(prod, 'utf8').replace('  name: prod-eu1\n', '  name: prod-eu1\n  labels: { tier: prod }\n'),
  );
  fs.mkdirSync(path.join(dir, 'rollout-policies'));
  for (const [name, text] of Object.entries(policies))
    fs.writeFileSync(path.join(dir, 'rollout-policies', `${name}.yaml`), text);
  const err: string[] = [];
  const code = await runCli(['validate', '--clusters', dir], { out: () => undefined, err: (t) => err.push(t) });
  fs.rmSync(path.dirname(dir), { recursive: true, force: true });
  return {
    code,
    lines: err
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.replace(/\S*clusters\//g, '')),
  };
}

test.each([
  {
    what: 'two policies, one selecting every cluster, the other prod-eu1',
    policies: { a: policy('a', '{}'), b: policy('b', '{ matchLabels: { tier: prod } }') },
    expected: [
      'rollout-policies/b.yaml: spec.clusterSelector: tier=prod selects prod-eu1, which rollout-policies/a.yaml also selects: a cluster is governed by one rollout policy, and the daemon holds one that two select (narrow one selector, or label the clusters apart)',
    ],
  },
  {
    what: 'two policies selecting clusters apart',
    policies: {
      a: policy('a', '{ matchExpressions: [{ key: tier, operator: DoesNotExist }] }'),
      b: policy('b', '{ matchLabels: { tier: prod } }'),
    },
    expected: [],
  },
])('$what', async ({ policies, expected }) => {
  // GIVEN the fleet and the policies; WHEN validate runs
  const r = await validate(policies);
  // THEN exactly these problems, and exit 1 when there is one
  expect(r.lines.filter((l) => l.includes('rollout-policies/'))).toEqual(expected);
  expect(r.code).toBe(expected.length ? 1 : 0);
});
