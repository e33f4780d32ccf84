import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../lib/cli/program';
import { REPO } from '../helpers/clusters';
import { run } from '../helpers/tools';
import { caseTree, commitAll, createFixtureRepo, edit, git, leftoverReviewWorktrees } from './fixture';
import { schemaProblems } from './formats';

/** `worker-stacks review` end to end: both sides synthesized by the command itself. */
let repo: string;

beforeAll(() => {
  repo = createFixtureRepo();
  // A base revision whose objects are invalid.
  git(repo, 'checkout', '--quiet', '-b', 'bad-base', 'base');
  edit(repo, 'clusters/prod-eu1.yaml', (t) => t.replace('nodePort: 30080', 'nodePort: 70000'));
  commitAll(repo, 'an invalid object');
  git(repo, 'checkout', '--quiet', 'main');
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

test('the installed command: --fail-on roll exits 1 on a rolling change, JSON on a pipe has no colour and fits the schema', () => {
  // GIVEN
  const dir = caseTree(repo, 'kubelet');
  edit(dir, 'cloudconfig/_shared/kubelet-config.yaml.hbs', (t) => t.replace('readOnlyPort: 0', 'readOnlyPort: 0\nserializeImagePulls: false'));
  commitAll(dir, 'head: kubelet');
  // WHEN
  const r = run(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), 'review', '--base', 'base', '--fail-on', 'roll', '--format', 'json'], { cwd: dir, timeout: 180_000 });
  // THEN
  expect(r.stderr).toBe('');
  expect(r.status).toBe(1);
  expect(r.stdout).not.toMatch(/\x1b\[/);
  const doc = JSON.parse(r.stdout);
  expect(schemaProblems(doc)).toEqual([]);
  expect(doc.summary).toMatchObject({ clusters: 3, rolls: 3 });
  expect(doc.clusters[0].config.entries[0].lines).toContain('+serializeImagePulls: false');
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
}, 180_000);

test('--fail-on roll exits 0 on a change that replaces no node; the terminal format without a TTY has no colour', async () => {
  // GIVEN: an uncommitted change of a listener
  const dir = caseTree(repo, 'listener');
  edit(dir, 'clusters/prod-eu1.yaml', (t) => t.replace('healthCheck: { protocol: HTTP, port: 30254, path: /healthz } }', 'healthCheck: { protocol: HTTP, port: 30254, path: /ready } }'));
  // WHEN
  const r = await cli('--repo', dir, '--base', 'base', '--fail-on', 'roll', '--cluster', 'prod-eu1');
  // THEN
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect(r.out).toMatch(/^== prod-eu1 \(WorkerStack-prod-eu1\): changes without replacing nodes: 1 resource modified$/m);
  expect(r.out).toContain('HealthCheckPath');
  expect(r.out).not.toContain('staging-us1');
  expect(r.out).not.toMatch(/\x1b\[/);
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
  expect(r.err).toMatch(/^error: head \(working tree\): .*clusters has no bin\/app\.ts; it is not the worker-stacks project directory/);
});

test('an invalid object at the base revision: exit 2, naming the base and the file; its worktree is removed', async () => {
  // WHEN
  const r = await cli('--repo', repo, '--base', 'bad-base', '--fail-on', 'change');
  // THEN
  expect(r.code).toBe(2);
  expect(r.err).toMatch(/^error: base bad-base \([0-9a-f]{8}\): invalid cluster object clusters\/prod-eu1\.yaml:/);
  expect(r.err).toContain('spec.listeners[1].nodePort: 70000');
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
  expect(git(repo, 'status', '--porcelain')).toBe('');
}, 180_000);

test('usage errors exit 2: an unknown format, a directory outside the project', async () => {
  // WHEN
  const format = await cli('--repo', repo, '--base', 'base', '--format', 'yaml');
  const outside = await cli('--repo', repo, '--base', 'base', '--clusters', '/tmp');
  // THEN
  expect(format.code).toBe(2);
  expect(format.err).toMatch(/argument 'yaml' is invalid/);
  expect(outside.code).toBe(2);
  expect(outside.err).toMatch(/--clusters \/tmp is outside the project/);
});
