import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReviewError } from '../../core/errors';

/** Runs git in `cwd`; never throws on a non-zero exit (callers decide what that means). */
export function git(cwd: string, args: readonly string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync('git', [...args], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.error)
    throw new ReviewError(`cannot run git: ${r.error.message}`, {
      cause: r.error,
      hint: 'install git; review reads the base revision from git',
    });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export interface Repository {
  /** The top of the git working tree. */
  readonly toplevel: string;
  /** The project directory (where cdk.json and bin/app.ts live), relative to `toplevel`; '' at the top. */
  readonly prefix: string;
  /** The project directory of the working tree (head). */
  readonly projectDir: string;
}

/** The git repository that holds `projectDir`. */
export function openRepository(projectDir: string): Repository {
  const dir = path.resolve(projectDir);
  if (!fs.existsSync(dir))
    throw new ReviewError(`${dir} does not exist`, {
      hint: 'run review in the project directory, or pass --repo <dir>',
    });
  const r = git(dir, ['rev-parse', '--show-toplevel']);
  if (r.status !== 0) {
    throw new ReviewError(`${dir} is not in a git repository: ${r.stderr.trim()}`, {
      hint: 'review compares a git revision with the working tree; run it inside a clone',
    });
  }
  const toplevel = fs.realpathSync(r.stdout.trim());
  const prefix = path.relative(toplevel, fs.realpathSync(dir));
  return { toplevel, prefix, projectDir: dir };
}

/** Resolves a ref (branch, tag, sha, `origin/main`, `HEAD~2`) to a commit, or says that it is not one. */
export function resolveCommit(repo: Repository, ref: string): string {
  if (ref.startsWith('-'))
    throw new ReviewError(`base: ${JSON.stringify(ref)} is not a git ref`, {
      side: 'base',
      hint: 'give --base a branch, tag or commit, e.g. --base origin/main',
    });
  const r = git(repo.toplevel, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]);
  if (r.status !== 0) {
    throw new ReviewError(`base: ${JSON.stringify(ref)} is not a commit in ${repo.toplevel}`, {
      side: 'base',
      hint: 'give --base a branch, tag or commit that exists here (`git fetch` first for a remote branch such as origin/main)',
    });
  }
  return r.stdout.trim();
}

/** The working tree's HEAD commit, if there is one yet. */
export function headCommit(repo: Repository): string | undefined {
  const r = git(repo.toplevel, ['rev-parse', '--verify', '--quiet', 'HEAD']);
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/**
 * Checks `commit` out into a temporary, detached worktree, runs `fn` on it, and
 * removes the worktree afterwards, also when `fn` fails. The working tree of
 * the repository is never touched.
 */
export async function withWorktree<T>(
  repo: Repository,
  commit: string,
  fn: (toplevel: string) => Promise<T>,
): Promise<T> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-stacks-review-'));
  const dir = path.join(tmp, 'base');
  const added = git(repo.toplevel, ['worktree', 'add', '--detach', '--quiet', dir, commit]);
  if (added.status !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new ReviewError(
      `base: cannot check out ${commit.slice(0, 12)} into a temporary worktree: ${added.stderr.trim()}`,
      { side: 'base' },
    );
  }
  return withCleanup(
    () => removeWorktree(repo, dir, tmp),
    () => fn(dir),
  );
}

/**
 * Runs `fn`, then `cleanup`, whatever happens; also when SIGINT or SIGTERM
 * interrupts it, after which the signal takes its usual course (the process ends).
 */
export async function withCleanup<T>(cleanup: () => void, fn: () => Promise<T>): Promise<T> {
  const onSignal = (signal: NodeJS.Signals) => {
    cleanup();
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await fn();
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    cleanup();
  }
}

function removeWorktree(repo: Repository, dir: string, tmp: string): void {
  // The node_modules link review put in goes first, so that nothing below it is ever followed.
  const link = path.join(dir, repo.prefix, 'node_modules');
  if (fs.lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) fs.unlinkSync(link);
  const r = git(repo.toplevel, ['worktree', 'remove', '--force', dir]);
  if (r.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    git(repo.toplevel, ['worktree', 'prune']);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
}
