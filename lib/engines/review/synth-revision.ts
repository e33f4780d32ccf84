import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReviewError } from '../../core/errors';
import { openRepository, Repository, resolveCommit, withWorktree } from './git';

/** The app command when a revision has no cdk.json: what this project's cdk.json says. */
export const DEFAULT_APP_COMMAND = 'npx ts-node --transpile-only bin/app.ts';

/** Input directories both sides read, relative to the project directory; unset: each revision's own default. */
export interface InputOverrides {
  readonly clusters?: string;
  readonly templates?: string;
}

/** An object that did not validate (or synthesize) on one side: a finding of the review, not a failure of it. */
export interface InvalidObject {
  /** The file as messages name it (`clusters/prod-eu1.yaml`). */
  readonly file: string;
  /** The app's lines about it, `file: field path: rule`. */
  readonly problems: readonly string[];
}

/** One side of a review, synthesized: the cloud assembly directory and how to name the side. */
export interface SynthesizedSide {
  readonly side: 'base' | 'head';
  /** How messages name this side: `base origin/main (1a2b3c4d)` or `head (working tree)`. */
  readonly label: string;
  /** The cloud assembly directory (what `cdk synth` writes to cdk.out). */
  readonly outdir: string;
  /** The commit, for the base; the working tree has none. */
  readonly commit?: string;
  /** Nothing was synthesized on this side (no cluster needed it): there is no assembly to read. @default false */
  readonly empty?: boolean;
  /** Objects left out because the app refused them, by cluster name. @default none */
  readonly invalid?: ReadonlyMap<string, InvalidObject>;
}

/** Which clusters to synthesize: a scratch directory holding only their files, and how messages name it. */
export interface StagedClusters {
  /** Absolute path of the scratch directory; files the app refuses are removed from it. */
  readonly dir: string;
  /** The directory as the project names it (`clusters`): messages say `clusters/x.yaml`, not the scratch path. */
  readonly shownAs: string;
}

/** Bounds the retries without refused objects (each refusal removes at least one file). */
const MAX_ATTEMPTS = 20;

/**
 * Runs a revision's CDK app the way `cdk synth` does: the `app` command of
 * its cdk.json, in its project directory, with CDK_OUTDIR set. cdk-nag and
 * aws-cdk-lib's template validation are off (they do not change templates).
 *
 * With `staged` clusters, an object the app refuses (its error names the
 * file) is a finding: it is taken out of the scratch directory and the rest
 * is synthesized again, so one bad object never hides the review of the others.
 */
export async function synthesizeProject(
  projectDir: string,
  outdir: string,
  side: 'base' | 'head',
  label: string,
  inputs: InputOverrides = {},
  staged?: StagedClusters,
  /** An absolute templates directory, instead of `inputs.templates`. */
  templatesDir?: string,
): Promise<{ empty: boolean; invalid: Map<string, InvalidObject> }> {
  if (!fs.existsSync(path.join(projectDir, 'bin', 'app.ts'))) {
    throw new ReviewError(
      `${label}: has no bin/app.ts, so it has no worker-stacks CDK app (it predates the project, or the project lives elsewhere)`,
      {
        side,
        hint:
          side === 'base'
            ? 'choose a later --base, one that has bin/app.ts'
            : 'run review in the worker-stacks project directory, or pass --repo <dir>',
      },
    );
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CDK_OUTDIR: outdir,
    WORKER_STACKS_NAG: 'false',
    CDK_VALIDATION: 'false',
  };
  delete env.CDK_CONTEXT_JSON;
  delete env.WORKER_STACKS_CLUSTERS;
  delete env.WORKER_STACKS_TEMPLATES;
  if (inputs.clusters !== undefined) env.WORKER_STACKS_CLUSTERS = path.join(projectDir, inputs.clusters);
  if (inputs.templates !== undefined) env.WORKER_STACKS_TEMPLATES = path.join(projectDir, inputs.templates);
  if (staged) env.WORKER_STACKS_CLUSTERS = staged.dir;
  if (templatesDir) env.WORKER_STACKS_TEMPLATES = templatesDir;
  const command = appCommand(projectDir);
  const invalid = new Map<string, InvalidObject>();
  for (let attempt = 1; ; attempt++) {
    if (staged && fs.readdirSync(staged.dir).length === 0) return { empty: true, invalid };
    fs.rmSync(outdir, { recursive: true, force: true });
    fs.mkdirSync(outdir, { recursive: true });
    const r = await runShell(command, projectDir, env);
    if (r.code === 0 && fs.existsSync(path.join(outdir, 'manifest.json'))) return { empty: false, invalid };
    const lines = (staged ? shownPaths(r.stderr, staged, projectDir) : r.stderr)
      .split('\n')
      .filter((l) => l.trim() && !/^npm (warn|notice)\b/.test(l));
    const files = [
      ...new Set(lines.map((l) => /^\s*([^\s:][^:]*\.ya?ml):/.exec(l)?.[1]).filter((f): f is string => Boolean(f))),
    ];
    const refused = staged
      ? files.filter(
          (f) => path.dirname(f) === staged.shownAs && fs.existsSync(path.join(staged.dir, path.basename(f))),
        )
      : [];
    if (staged && refused.length && attempt < MAX_ATTEMPTS) {
      for (const f of refused) {
        const name = path.basename(f).replace(/\.ya?ml$/, '');
        invalid.set(name, { file: f, problems: lines.map((l) => l.trim()).filter((l) => l.startsWith(`${f}:`)) });
        fs.rmSync(path.join(staged.dir, path.basename(f)), { force: true });
      }
      continue;
    }
    const shown = lines.slice(0, 60);
    const what = files.length
      ? `invalid cluster object${files.length > 1 ? 's' : ''} ${files.join(', ')}`
      : `the CDK app failed (\`${command}\` exited ${r.code})`;
    throw new ReviewError(`${label}: ${what}:\n  ${shown.join('\n  ') || '(no output)'}`, {
      side,
      files,
      hint: files.length
        ? `correct ${files.join(', ')} at the ${side === 'base' ? 'base revision (or choose another --base)' : 'working tree'}; \`worker-stacks validate\` lists every problem`
        : side === 'base'
          ? "the base revision does not synthesize with this checkout's node_modules; choose another --base"
          : 'run `npx cdk synth` to see the failure',
    });
  }
}

/** The app names files relative to its working directory: the scratch directory is named as the project's own. */
function shownPaths(text: string, staged: StagedClusters, cwd: string): string {
  const prefix = (p: string) => `${p}${path.sep}`;
  return text
    .split(prefix(path.relative(cwd, staged.dir)))
    .join(prefix(staged.shownAs))
    .split(prefix(staged.dir))
    .join(prefix(staged.shownAs));
}

/**
 * Synthesizes the working tree (head) into `outdir`.
 * @internal review() stages the inputs itself; the review cases synthesize each side whole with this.
 */
export async function synthesizeWorkingTree(
  projectDir: string,
  outdir: string,
  inputs: InputOverrides = {},
): Promise<SynthesizedSide> {
  const label = 'head (working tree)';
  const r = await synthesizeProject(path.resolve(projectDir), outdir, 'head', label, inputs);
  return { side: 'head', label, outdir, ...r };
}

/**
 * Synthesizes the project at git revision `ref` into `outdir`: a temporary
 * detached worktree of that commit, with this checkout's node_modules linked
 * in, removed again afterwards whatever happens.
 * @internal review() stages the inputs itself; the review cases synthesize each side whole with this.
 */
export async function synthesizeRevision(
  projectDir: string,
  ref: string,
  outdir: string,
  inputs: InputOverrides = {},
  /** How to name the ref in messages. @default ref */
  shownRef: string = ref,
): Promise<SynthesizedSide> {
  const repo = openRepository(projectDir);
  const commit = resolveCommit(repo, ref);
  const label = `base ${shownRef} (${commit.slice(0, 8)})`;
  const r = await withWorktree(repo, commit, async (toplevel) => {
    const dir = path.join(toplevel, repo.prefix);
    linkNodeModules(repo, dir, label);
    return synthesizeProject(dir, outdir, 'base', label, inputs);
  });
  return { side: 'base', label, outdir, commit, ...r };
}

export function linkNodeModules(repo: Repository, dir: string, label: string): void {
  const source = path.join(repo.projectDir, 'node_modules');
  if (!fs.existsSync(source)) {
    throw new ReviewError(`${label}: ${source} does not exist, so neither revision can run its CDK app`, {
      side: 'base',
      hint: 'run `npm ci` first',
    });
  }
  if (!fs.existsSync(dir))
    throw new ReviewError(`${label}: the project directory ${repo.prefix || '.'} does not exist at that revision`, {
      side: 'base',
      hint: 'choose a later --base',
    });
  const link = path.join(dir, 'node_modules');
  if (!fs.existsSync(link)) fs.symlinkSync(source, link, 'dir');
}

function appCommand(projectDir: string): string {
  const file = path.join(projectDir, 'cdk.json');
  if (!fs.existsSync(file)) return DEFAULT_APP_COMMAND;
  try {
    const app = (JSON.parse(fs.readFileSync(file, 'utf8')) as { app?: unknown }).app;
    return typeof app === 'string' && app.trim() ? app : DEFAULT_APP_COMMAND;
  } catch {
    return DEFAULT_APP_COMMAND;
  }
}

function runShell(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { cwd, env, shell: true, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      if (stderr.length < 1_000_000) stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 10 * 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : -1), stderr });
    });
  });
}
