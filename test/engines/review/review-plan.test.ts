import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { formatJson } from '../../../lib/engines/review/format-json';
import { formatMarkdown } from '../../../lib/engines/review/format-markdown';
import { ReviewResult } from '../../../lib/engines/review/model';
import { review, reviewExitCode } from '../../../lib/engines/review/review';
import { caseTree, commitAll, createFixtureRepo, edit, git, leftoverReviewWorktrees, pool } from './fixture';
import { parseMarkdown, schemaProblems } from './formats';

/**
 * What `review` synthesizes (only what changed), and invalid objects as
 * findings. Each case is one head tree of one fixture repository, reviewed
 * by `review()` itself against the tag `base` (or the invalid `bad-base`).
 */
const CASES: Record<string, { base: string; change: (dir: string) => void }> = {
  oneValue: {
    base: 'base',
    change: (d) => edit(d, 'clusters/staging-us1.yaml', (t) => t.replace('maxPods: 58', 'maxPods: 64')),
  },
  // The description of the Flatcar template: only the clusters that use it are synthesized.
  flatcarOnly: {
    base: 'base',
    change: (d) =>
      edit(d, 'cloudconfig/flatcar-worker/template.yaml', (t) =>
        t.replace(/^description: /m, 'description: (edited) '),
      ),
  },
  // A comment in the code: every cluster is synthesized (and nothing changes).
  code: { base: 'base', change: (d) => fs.appendFileSync(path.join(d, 'lib/core/paths.ts'), '\n// edited\n') },
  invalidHead: {
    base: 'base',
    change: (d) => edit(d, 'clusters/staging-us1.yaml', (t) => t.replace('minSize: 1', 'minSize: 10')),
  },
  // Head is the base tag: the pull request that fixes main's invalid object.
  fixes: { base: 'bad-base', change: () => undefined },
};

let repo: string;
const results: Record<string, ReviewResult> = {};
const dirs: Record<string, string> = {};

beforeAll(async () => {
  repo = createFixtureRepo();
  git(repo, 'checkout', '--quiet', '-b', 'bad-base', 'base');
  edit(repo, 'clusters/prod-eu1.yaml', (t) => t.replace('minSize: 3', 'minSize: 300'));
  commitAll(repo, 'an invalid object');
  git(repo, 'checkout', '--quiet', 'main');
  for (const [name, c] of Object.entries(CASES)) {
    dirs[name] = caseTree(repo, name);
    c.change(dirs[name]);
  }
  await pool(Object.keys(CASES), 1, async (name) => {
    results[name] = await review({ projectDir: dirs[name], base: CASES[name].base });
  });
}, 300_000);

afterAll(() => {
  // Symbolic links (node_modules) are removed, never followed.
  if (repo) fs.rmSync(path.dirname(repo), { recursive: true, force: true });
});

const statuses = (r: ReviewResult) => Object.fromEntries(r.clusters.map((c) => [c.name, c.status]));
const synthesized = (r: ReviewResult) => r.clusters.filter((c) => c.synthesized).map((c) => c.name);

test('a change to one object synthesizes that cluster only; the others are unchanged by construction', () => {
  // GIVEN
  const r = results.oneValue;
  // THEN
  expect(r.synthesis).toEqual({ codeChanged: false, templatesChanged: [], base: 1, head: 1, skipped: 2 });
  expect(statuses(r)).toEqual({ 'edge-ap1': 'unchanged', 'prod-eu1': 'unchanged', 'staging-us1': 'rolls' });
  expect(synthesized(r)).toEqual(['staging-us1']);
  expect(r.clusters.find((c) => c.name === 'prod-eu1')).toMatchObject({
    stackName: 'WorkerStack-prod-eu1',
    verdict: 'no change',
    checksum: { base: null, head: null },
  });
  expect(schemaProblems(JSON.parse(formatJson(r)))).toEqual([]);
});

test('a change to one template synthesizes the clusters that use it; a code change synthesizes all', () => {
  // THEN
  expect(results.flatcarOnly.synthesis).toEqual({
    codeChanged: false,
    templatesChanged: ['flatcar-worker'],
    base: 2,
    head: 2,
    skipped: 1,
  });
  expect(synthesized(results.flatcarOnly)).toEqual(['edge-ap1', 'prod-eu1']);
  expect(results.code.synthesis).toEqual({ codeChanged: true, templatesChanged: [], base: 3, head: 3, skipped: 0 });
  expect(statuses(results.code)).toEqual({
    'edge-ap1': 'unchanged',
    'prod-eu1': 'unchanged',
    'staging-us1': 'unchanged',
  });
});

test('an invalid object at head is a finding: the others are reviewed, its problems listed, the exit code is 1', () => {
  // GIVEN
  const r = results.invalidHead;
  const staging = r.clusters.find((c) => c.name === 'staging-us1')!;
  // WHEN
  const md = parseMarkdown(formatMarkdown(r));
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'unchanged', 'prod-eu1': 'unchanged', 'staging-us1': 'invalid' });
  expect(staging.verdict).toMatch(
    /^invalid at head: \d+ problems?; nothing of WorkerStack-staging-us1 can deploy until fixed$/,
  );
  expect(staging.problems.head).toContain(
    'clusters/staging-us1.yaml: spec.pool.minSize: 10 is greater than maxSize 4 (rule pool-size-order)',
  );
  expect(staging.problems.base).toEqual([]);
  expect(r.summary).toMatchObject({ clusters: 3, invalid: 1, unchanged: 2 });
  expect(reviewExitCode(r)).toBe(1);
  expect(md.table!.rows[0]).toEqual(['invalid', '1', 'staging-us1']);
  expect(
    md.code.some((b) =>
      b.text.includes(
        'clusters/staging-us1.yaml: spec.pool.minSize: 10 is greater than maxSize 4 (rule pool-size-order)',
      ),
    ),
  ).toBe(true);
  expect(schemaProblems(JSON.parse(formatJson(r)))).toEqual([]);
});

test('a pull request that fixes an invalid object on main can be reviewed: the object is fixed, its stack shown whole', () => {
  // GIVEN
  const r = results.fixes;
  const prod = r.clusters.find((c) => c.name === 'prod-eu1')!;
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'unchanged', 'prod-eu1': 'fixed', 'staging-us1': 'unchanged' });
  expect(prod.problems.base).toContain(
    'clusters/prod-eu1.yaml: spec.pool.minSize: 300 is greater than maxSize 30 (rule pool-size-order)',
  );
  expect(prod.problems.head).toEqual([]);
  expect(prod.template!.resources.every((x) => x.change === 'added')).toBe(true);
  expect(prod.verdict).toMatch(/^fixed: invalid at base, valid at head; deploys WorkerStack-prod-eu1 whole/);
  expect([reviewExitCode(r), reviewExitCode(r, 'change'), reviewExitCode(r, 'roll')]).toEqual([0, 1, 1]);
  expect(schemaProblems(JSON.parse(formatJson(r)))).toEqual([]);
});

test('the command: an invalid object at head prints the review (JSON and markdown) and exits 1; nothing is left behind', async () => {
  // WHEN
  const run = async (format: string) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['review', '--repo', dirs.invalidHead, '--base', 'base', '--format', format], {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    return { code, out: out.join(''), err: err.join('') };
  };
  const json = await run('json');
  const md = await run('markdown');
  // THEN
  expect([json.code, json.err]).toEqual([1, '']);
  expect(JSON.parse(json.out).clusters.map((c: { status: string }) => c.status)).toEqual([
    'unchanged',
    'unchanged',
    'invalid',
  ]);
  expect([md.code, md.err]).toEqual([1, '']);
  expect(md.out).toContain('spec.pool.minSize: 10 is greater than maxSize 4 (rule pool-size-order)');
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
}, 120_000);
