import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { planRollout, rolloutLines } from '../../../lib/engines/review/rollout-plan';
import { policy } from '../rollout/fixtures';
import { caseTree, createFixtureRepo, edit } from './fixture';
import { schemaProblems } from './formats';

const loaded = (...ps: ReturnType<typeof policy>[]) => ({
  policies: ps.map((p) => ({ policy: p, source: `clusters/rollout-policies/${p.metadata.name}.yaml` })),
  problems: [],
});

describe('planRollout', () => {
  test('rolling clusters in wave order; waves with none left out; clusters no policy selects apart', () => {
    // GIVEN
    const p = policy({ clusterSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } });
    const rolling = new Map<string, Record<string, string>>([
      ['a', { ring: 'canary', env: 'prod' }],
      ['b', { env: 'prod' }],
      ['c', { env: 'prod' }],
      ['dev', { env: 'dev' }],
    ]);
    // WHEN
    const plan = planRollout(rolling, loaded(p));
    // THEN
    expect(plan).toEqual({
      policies: [
        {
          policy: 'fleet',
          waves: [
            { wave: 'canary', clusters: ['a'] },
            { wave: 'remainder', clusters: ['b', 'c'] },
          ],
        },
      ],
      ungoverned: ['dev'],
      problems: [],
    });
    expect(rolloutLines(plan)).toEqual([
      'rollout policy fleet: wave 1 canary: a; wave 2 remainder: b, c',
      'no rollout policy: dev (roll as --concurrency allows)',
    ]);
  });

  test('a cluster two policies select is a problem, not a wave', () => {
    const plan = planRollout(new Map([['a', {}]]), loaded(policy({}, 'x'), policy({}, 'y')));
    expect(plan.problems).toEqual([
      'a: selected by rollout policies x and y; the daemon holds it until their clusterSelectors are disjoint',
    ]);
    expect(plan.policies).toEqual([]);
  });

  test('long waves are summarized', () => {
    const rolling = new Map(Array.from({ length: 8 }, (_, i) => [`r${i}`, {}] as const));
    expect(rolloutLines(planRollout(rolling, loaded(policy())))).toEqual([
      'rollout policy fleet: wave 1 remainder: 8 (r0, r1, r2 and 5 more)',
    ]);
  });
});

test('review shows, for a shared-template change, which clusters roll in which wave (terminal and JSON, within the schema)', async () => {
  // GIVEN a fixture repository whose head changes the shared kubelet config, labels prod-eu1 as the canary and adds a policy
  const repo = createFixtureRepo();
  try {
    const head = caseTree(repo, 'waves');
    edit(head, 'cloudconfig/_shared/kubelet-config.yaml.hbs', (t) =>
      t.replace('readOnlyPort: 0', 'readOnlyPort: 0\nserializeImagePulls: false'),
    );
    edit(head, 'clusters/prod-eu1.yaml', (t) =>
      t.replace('  name: prod-eu1\n', '  name: prod-eu1\n  labels:\n    ring: canary\n'),
    );
    fs.mkdirSync(path.join(head, 'clusters', 'rollout-policies'));
    fs.writeFileSync(
      path.join(head, 'clusters', 'rollout-policies', 'fleet.yaml'),
      'apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerRolloutPolicy\nmetadata: { name: fleet }\nspec:\n  waves:\n    - { name: canary, selector: { matchLabels: { ring: canary } }, maxConcurrent: 1, soak: 1h }\n',
    );
    const run = async (...args: string[]) => {
      const out: string[] = [];
      const code = await runCli(['review', '--repo', head, '--base', 'base', ...args], {
        out: (t) => out.push(t),
        err: (t) => out.push(t),
      });
      return { code, out: out.join('') };
    };
    // WHEN
    const json = await run('--format', 'json');
    // THEN
    const doc = JSON.parse(json.out);
    expect(schemaProblems(doc)).toEqual([]);
    expect(doc.rollout).toEqual({
      policies: [
        {
          policy: 'fleet',
          waves: [
            { wave: 'canary', clusters: ['prod-eu1'] },
            { wave: 'remainder', clusters: ['edge-ap1', 'staging-us1'] },
          ],
        },
      ],
      ungoverned: [],
      problems: [],
    });
    const terminal = await run('--format', 'terminal', '--no-color');
    expect(terminal.out).toContain(
      'rollout policy fleet: wave 1 canary: prod-eu1; wave 2 remainder: edge-ap1, staging-us1',
    );
  } finally {
    fs.rmSync(path.dirname(repo), { recursive: true, force: true });
  }
}, 300_000);
