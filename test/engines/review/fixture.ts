import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO, tempDir } from '../../helpers/clusters';

/** What a fixture repository holds of the project: exactly what synthesis reads. */
const PROJECT_PARTS = ['bin', 'lib', 'cloudconfig', 'clusters', 'package.json', 'tsconfig.json', 'cdk.json'];

/** Examples of node pools, left out of the fixture (eks-us2: reviewed by test/engines/review/eks-review.test.ts). */
const POOLED_EXAMPLES = ['apps-eu1.yaml', 'eks-us2.yaml'];

/** git with a fixed identity and no signing, whatever the machine's configuration. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    'git',
    [
      '-c',
      'user.name=review test',
      '-c',
      'user.email=review@example.com',
      '-c',
      'commit.gpgsign=false',
      '-c',
      'tag.gpgsign=false',
      '-c',
      'init.defaultBranch=main',
      ...args,
    ],
    { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

/**
 * A git repository of a copy of this project: a first commit that predates
 * the project (tag `pre`: a README only), then the project (tag `base`).
 * node_modules is a link to this checkout's.
 */
export function createFixtureRepo(): string {
  const dir = path.join(tempDir('review-repo'), 'project');
  fs.mkdirSync(dir);
  git(dir, 'init', '--quiet');
  fs.writeFileSync(path.join(dir, 'README.md'), 'before worker-stacks\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'before the project');
  git(dir, 'tag', 'pre');
  for (const part of PROJECT_PARTS) fs.cpSync(path.join(REPO, part), path.join(dir, part), { recursive: true });
  // The review cases are written for the three single-pool examples; the node-pools example (one stack per pool) is
  // reviewed by test/engines/review/pools.test.ts.
  for (const file of POOLED_EXAMPLES) fs.rmSync(path.join(dir, 'clusters', file));
  fs.writeFileSync(path.join(dir, '.gitignore'), 'node_modules\ncdk.out/\n');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'the project');
  git(dir, 'tag', 'base');
  return dir;
}

/** A second working tree of the fixture on a new branch from `base`, for one head change. */
export function caseTree(repo: string, name: string): string {
  const dir = path.join(path.dirname(repo), name);
  git(repo, 'worktree', 'add', '--quiet', '-b', `case-${name}`, dir, 'base');
  fs.symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Rewrites a file of a tree; the edit must change it (a test of nothing would pass silently). */
export function edit(dir: string, file: string, change: (text: string) => string): void {
  const p = path.join(dir, file);
  const before = fs.readFileSync(p, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`edit of ${file} changed nothing`);
  fs.writeFileSync(p, after);
}

/** Commits everything in a tree. */
export function commitAll(dir: string, message: string): void {
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', message);
}

/** Worktrees of a repository whose path review creates (worker-stacks-review-*): none may be left behind. */
export function leftoverReviewWorktrees(repo: string): string[] {
  return git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree ') && l.includes('worker-stacks-review-'));
}

/** Runs `fn` on at most `limit` items at a time (synthesis is CPU-bound; the machine has two cores). */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
