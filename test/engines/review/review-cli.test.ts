import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { tempDir } from '../../helpers/clusters';
import { RunResult } from '../../helpers/tools';
import { hasEscapes, reviewBin, reviewTty, startReview, waitFor } from './cli-run';
import { caseTree, commitAll, createFixtureRepo, edit, git, leftoverReviewWorktrees } from './fixture';
import { parseMarkdown, schemaProblems } from './formats';

/** `worker-stacks review` end to end: both sides synthesized by the command itself. */
let repo: string;
/** A committed kubelet change: every cluster rolls. */
let kubelet: string;
/** An uncommitted health-check change of one listener: prod-eu1 changes, no node is replaced. */
let listener: string;

beforeAll(() => {
  repo = createFixtureRepo();
  // A base revision whose objects are invalid.
  git(repo, 'checkout', '--quiet', '-b', 'bad-base', 'base');
  edit(repo, 'clusters/prod-eu1.yaml', (t) => t.replace('nodePort: 30080', 'nodePort: 70000'));
  commitAll(repo, 'an invalid object');
  git(repo, 'checkout', '--quiet', 'main');
  kubelet = caseTree(repo, 'kubelet');
  edit(kubelet, 'cloudconfig/_shared/kubelet-config.yaml.hbs', (t) =>
    t.replace('readOnlyPort: 0', 'readOnlyPort: 0\nserializeImagePulls: false'),
  );
  commitAll(kubelet, 'head: kubelet');
  listener = caseTree(repo, 'listener');
  edit(listener, 'clusters/prod-eu1.yaml', (t) =>
    t.replace(
      'healthCheck: { protocol: HTTP, port: 30254, path: /healthz } }',
      'healthCheck: { protocol: HTTP, port: 30254, path: /ready } }',
    ),
  );
});

afterAll(() => {
  // Symbolic links (node_modules) are removed, never followed.
  if (repo) fs.rmSync(path.dirname(repo), { recursive: true, force: true });
});

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['review', ...args], { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join(''), err: err.join('') };
}

test('the installed command: --fail-on roll exits 1 on a rolling change; its JSON fits the schema and carries no colour', () => {
  // WHEN: FORCE_COLOR makes the diff engine colour its text; the JSON must carry it plain
  const r = reviewBin(kubelet, ['--base', 'base', '--fail-on', 'roll', '--format', 'json'], { FORCE_COLOR: '1' });
  // THEN
  expect(r.stderr).toBe('');
  expect(r.status).toBe(1);
  expect(hasEscapes(r.stdout)).toBe(false);
  const doc = JSON.parse(r.stdout);
  expect(schemaProblems(doc)).toEqual([]);
  expect(doc.summary).toMatchObject({ clusters: 3, rolls: 3 });
  expect(doc.clusters[0].template.text).toMatch(/^\[~\] AWS::AutoScaling::LaunchConfiguration /m);
  expect(doc.clusters[0].config.entries[0].lines).toContain('+serializeImagePulls: false');
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
}, 180_000);

describe('the terminal format is coloured exactly when the CLI decides so', () => {
  let pipe: RunResult;
  beforeAll(() => {
    pipe = reviewBin(kubelet, ['--base', 'base', '--cluster', 'prod-eu1']);
  }, 180_000);

  test('stdout a pipe: no colour', () => {
    // THEN
    expect(pipe.status).toBe(0);
    expect(pipe.stdout).toMatch(/^== prod-eu1 \(WorkerStack-prod-eu1\): rolls nodes/m);
    expect(hasEscapes(pipe.stdout)).toBe(false);
  });

  test.each([
    ['stdout a terminal', 'tty', {}, [], true],
    ['a terminal, NO_COLOR=1', 'tty', { NO_COLOR: '1' }, [], false],
    ['a terminal, --no-color', 'tty', {}, ['--no-color'], false],
    ['a pipe, --color', 'pipe', {}, ['--color'], true],
  ] as const)(
    '%s',
    (_name, stdout, env, flags, coloured) => {
      // WHEN
      const args = ['--base', 'base', '--cluster', 'prod-eu1', ...flags];
      const r = stdout === 'tty' ? reviewTty(kubelet, args, env) : reviewBin(kubelet, args, env);
      // THEN
      expect(r.status).toBe(0);
      expect(hasEscapes(r.stdout)).toBe(coloured);
      if (coloured) expect(r.stdout).toContain('\x1b[1;31mrolls nodes: in batches of 2');
      // The same review either way: colours are all that differ.
      // eslint-disable-next-line no-control-regex -- the control characters (ESC of a colour code) are what the test looks for
      expect(r.stdout.replace(/\x1b\[[0-9;]*m/g, '')).toBe(pipe.stdout);
    },
    180_000,
  );
});

test('--fail-on roll exits 0 on a change that replaces no node; only the named cluster is shown', async () => {
  // WHEN
  const r = await cli('--repo', listener, '--base', 'base', '--fail-on', 'roll', '--cluster', 'prod-eu1');
  // THEN
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(
    /^== prod-eu1 \(WorkerStack-prod-eu1\): changes without replacing nodes: 1 resource modified$/m,
  );
  expect(r.out).toContain('HealthCheckPath');
  expect(r.out).not.toContain('staging-us1');
}, 180_000);

test('the installed command: --fail-on change exits 1 on that change, and --format markdown renders it', () => {
  // WHEN
  const r = reviewBin(listener, ['--base', 'base', '--fail-on', 'change', '--format', 'markdown']);
  // THEN
  expect(r.stderr).toBe('');
  expect(r.status).toBe(1);
  const md = parseMarkdown(r.stdout);
  expect(md.headings[0]).toBe('worker-stacks review');
  expect(md.table!.rows).toEqual([
    ['changes without replacing nodes', '1', 'prod-eu1'],
    ['no change', '2', 'edge-ap1, staging-us1'],
  ]);
  expect(md.rendered).toContain('<strong>changes without replacing nodes</strong>: 1 resource modified');
  expect((md.rendered.match(/<details>/g) ?? []).length).toBe(1);
  expect(md.code.some((b) => b.lang === 'text' && b.text.includes('HealthCheckPath'))).toBe(true);
  expect(hasEscapes(r.stdout)).toBe(false);
}, 180_000);

test('relative --clusters and --templates are directories of --repo, not of the current directory', async () => {
  // GIVEN: the current directory is this checkout, which is outside the fixture
  expect(path.relative(listener, process.cwd())).toMatch(/^\.\./);
  // WHEN
  const r = await cli(
    '--repo',
    listener,
    '--base',
    'base',
    '--clusters',
    'clusters',
    '--templates',
    'cloudconfig',
    '--cluster',
    'prod-eu1',
  );
  // THEN
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^== prod-eu1 \(WorkerStack-prod-eu1\): changes without replacing nodes/m);
}, 180_000);

test('a base ref that is no commit: exit 2, says so, before synthesizing anything', async () => {
  // WHEN
  const r = await cli('--repo', repo, '--base', 'no-such-ref');
  // THEN
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^error: base: "no-such-ref" is not a commit in /);
  expect(r.out).toBe('');
});

test('a base revision that predates the project: exit 2 with a clear error', async () => {
  // WHEN
  const r = await cli('--repo', repo, '--base', 'pre');
  // THEN
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^error: base pre \([0-9a-f]{8}\): has no bin\/app\.ts, so it has no worker-stacks CDK app/);
  expect(r.err).toContain('fix: choose a later --base');
});

test('run outside the project directory: exit 2, says where to run it', async () => {
  // WHEN
  const r = await cli('--repo', path.join(repo, 'clusters'), '--base', 'base');
  // THEN
  expect(r.code).toBe(2);
  expect(r.err).toMatch(
    /^error: head \(working tree\): .*clusters has no bin\/app\.ts; it is not the worker-stacks project directory/,
  );
});

test('an invalid object at the base revision: the review comes out, the object fixed at head; its worktree is removed', async () => {
  // WHEN
  const r = await cli('--repo', repo, '--base', 'bad-base', '--fail-on', 'change');
  // THEN
  expect(r.err).toBe('');
  expect(r.code).toBe(1);
  expect(r.out).toMatch(/^== prod-eu1 \(WorkerStack-prod-eu1\): fixed: invalid at base, valid at head/m);
  expect(r.out).toMatch(/^ {3}invalid at base:\n {5}clusters\/prod-eu1\.yaml: spec\.listeners\[1\]\.nodePort: 70000/m);
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
  expect(git(repo, 'status', '--porcelain')).toBe('');
}, 180_000);

test('the installed command: objects invalid on both sides: each named with its side and problems, in markdown; exit 1', () => {
  // GIVEN
  const dir = caseTree(repo, 'both-invalid');
  edit(dir, 'clusters/staging-us1.yaml', (t) => t.replace('minSize: 1', 'minSize: 10'));
  // WHEN
  const r = reviewBin(dir, ['--base', 'bad-base', '--format', 'markdown']);
  // THEN
  expect(r.stderr).toBe('');
  expect(r.status).toBe(1);
  const md = parseMarkdown(r.stdout);
  expect(md.table!.rows.map((row) => row.slice(0, 2))).toEqual([
    ['invalid', '1'],
    ['fixed', '1'],
    ['no change', '1'],
  ]);
  const blocks = md.code.map((b) => b.text).join('\n');
  expect(blocks).toMatch(
    /^clusters\/staging-us1\.yaml: spec\.pool\.minSize: 10 is greater than maxSize 4 \(rule pool-size-order\)$/m,
  );
  expect(blocks).toMatch(/^clusters\/prod-eu1\.yaml: spec\.listeners\[1\]\.nodePort: 70000/m);
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
}, 180_000);

test('a base that does not synthesize for another reason than an object: exit 2, naming the side', async () => {
  // GIVEN: a base whose CDK app fails before it reads any object
  git(repo, 'checkout', '--quiet', '-b', 'broken-app', 'base');
  fs.writeFileSync(path.join(repo, 'bin/app.ts'), "throw new Error('broken on purpose');\n");
  commitAll(repo, 'a broken app');
  git(repo, 'checkout', '--quiet', 'main');
  // WHEN
  const r = await cli('--repo', repo, '--base', 'broken-app');
  // THEN
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^error: base broken-app \([0-9a-f]{8}\): the CDK app failed/);
  expect(r.out).toBe('');
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
}, 180_000);

test('Ctrl-C while synthesizing: the base worktree and the temporary output directory are both removed', async () => {
  // GIVEN: a temporary directory of its own, to see what the command leaves in it
  const tmp = tempDir('review-sigint');
  const ours = () => fs.readdirSync(tmp).filter((n) => n.startsWith('worker-stacks-review-'));
  const review = startReview(kubelet, ['--base', 'base'], { TMPDIR: tmp });
  try {
    // WHEN: interrupted once both sides have started to synthesize
    await waitFor('both sides to start synthesizing', () =>
      ours().some((d) => fs.existsSync(path.join(tmp, d, 'base.out')) && fs.existsSync(path.join(tmp, d, 'head.out'))),
    );
    expect(ours()).toHaveLength(2);
    review.interrupt();
    const exit = await review.exited;
    // THEN
    expect(exit.signal).toBe('SIGINT');
    expect(ours()).toEqual([]);
    expect(leftoverReviewWorktrees(repo)).toEqual([]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}, 180_000);

test('usage errors exit 2: an unknown format, a directory outside the project, a markdown budget too small to say anything', async () => {
  // WHEN
  const tiny = await cli('--repo', repo, '--base', 'base', '--format', 'markdown', '--max-bytes', '500');
  const format = await cli('--repo', repo, '--base', 'base', '--format', 'yaml');
  const outside = await cli('--repo', repo, '--base', 'base', '--clusters', '/tmp');
  const escapes = await cli('--repo', repo, '--base', 'base', '--templates', '../cloudconfig');
  // THEN
  expect(tiny.code).toBe(2);
  expect(tiny.err).toMatch(/--max-bytes.*"500" is not a whole number from 2000 to up/);
  expect(format.code).toBe(2);
  expect(format.err).toMatch(/argument 'yaml' is invalid/);
  expect(outside.code).toBe(2);
  expect(outside.err).toMatch(/--clusters \/tmp is outside the project/);
  expect(escapes.code).toBe(2);
  expect(escapes.err).toMatch(/--templates \.\.\/cloudconfig is outside the project/);
});
