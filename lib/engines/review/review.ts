import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReviewError } from '../../core/errors';
import { git, headCommit, openRepository, Repository, resolveCommit, withCleanup, withWorktree } from './git';
import { ReviewResult } from './model';
import { planSynthesis, readEnvironment, readSideInputs, SideInputs, stageClusters, SynthesisPlan } from './inputs';
import { InputOverrides, linkNodeModules, StagedClusters, synthesizeProject } from './synth-revision';
import { rolloutPlanAt } from './rollout-plan';
import { compareSides } from './compare-sides';

export interface ReviewOptions {
  /** The project directory of the working tree (head). */
  readonly projectDir: string;
  /** The git ref of the base revision. */
  readonly base: string;
  /** Only this cluster (its name at base or at head). @default every cluster */
  readonly cluster?: string;
  /** Input directories for both sides, relative to the project. @default each revision's own */
  readonly inputs?: InputOverrides;
}

/**
 * What `--fail-on` gates on: `change`, any cluster that is not unchanged;
 * `roll`, any cluster whose deploy replaces running nodes by new ones: its
 * nodes roll, a pool of it is removed (the reconciler deletes the pool's stack:
 * its nodes go), or it was renamed (a new stack name: a new stack brings up new
 * nodes to take over from the old stack's). An added cluster replaces no node.
 */
export type FailOn = 'change' | 'roll';

/**
 * `worker-stacks review`: synthesizes the base revision (in a temporary
 * worktree) and the working tree, both as `cdk synth` does, in parallel,
 * and compares every worker stack. Offline: no AWS call, no credentials.
 */
export async function review(opts: ReviewOptions): Promise<ReviewResult> {
  const repo = openRepository(opts.projectDir);
  if (!fs.existsSync(path.join(repo.projectDir, 'bin', 'app.ts'))) {
    throw new ReviewError(
      `head (working tree): ${repo.projectDir} has no bin/app.ts; it is not the worker-stacks project directory`,
      {
        side: 'head',
        hint: 'run review in the project directory (where cdk.json is), or pass --repo <dir>',
      },
    );
  }
  // Fail fast, before anything is synthesized: a ref that is no commit, a revision without the CDK app.
  const commit = resolveCommit(repo, opts.base);
  requireApp(repo, commit, opts.base);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-stacks-review-out-'));
  return withCleanup(
    () => fs.rmSync(tmp, { recursive: true, force: true }),
    () =>
      withWorktree(repo, commit, async (toplevel) => {
        const baseDir = path.join(toplevel, repo.prefix);
        const label = `base ${opts.base} (${commit.slice(0, 8)})`;
        const clustersDir = opts.inputs?.clusters ?? 'clusters';
        const templatesDir = opts.inputs?.templates ?? 'cloudconfig';
        const inputs = {
          base: readSideInputs(baseDir, clustersDir, templatesDir),
          head: readSideInputs(repo.projectDir, clustersDir, templatesDir),
        };
        const plan = narrow(planSynthesis(inputs.base, inputs.head), inputs, opts.cluster);
        const stage = (side: 'base' | 'head'): StagedClusters => {
          const dir = path.join(tmp, `${side}.clusters`);
          stageClusters(inputs[side], plan[side], dir);
          return { dir, shownAs: path.normalize(clustersDir).replace(/[/]+$/, '') };
        };
        const baseStage = stage('base');
        const headStage = stage('head');
        // Byte-identical code synthesizes identically: the base's inputs then go through head's (possibly precompiled) app.
        if (plan.codeChanged) linkNodeModules(repo, baseDir, label);
        const baseRun = plan.codeChanged
          ? synthesizeProject(baseDir, path.join(tmp, 'base.out'), 'base', label, opts.inputs, baseStage)
          : synthesizeProject(
              repo.projectDir,
              path.join(tmp, 'base.out'),
              'base',
              label,
              opts.inputs,
              baseStage,
              path.resolve(baseDir, templatesDir),
            );
        const headLabel = 'head (working tree)';
        const headRun = synthesizeProject(
          repo.projectDir,
          path.join(tmp, 'head.out'),
          'head',
          headLabel,
          opts.inputs,
          headStage,
        );
        const [base, head] = settled(await Promise.allSettled([baseRun, headRun]));
        const result = compareSides(
          { side: 'base', label, outdir: path.join(tmp, 'base.out'), ref: opts.base, commit, ...base },
          { side: 'head', label: headLabel, outdir: path.join(tmp, 'head.out'), commit: headCommit(repo), ...head },
          {
            cluster: opts.cluster,
            plan,
            skippedEnvironments: () =>
              new Set(plan.skipped.map(readEnvironment).filter((e): e is string => Boolean(e))),
          },
        );
        // Which of the clusters whose nodes roll go in which wave (the head's WorkerRolloutPolicy objects).
        const rollout = await rolloutPlanAt(
          repo.projectDir,
          clustersDir,
          result.clusters.filter((c) => c.status === 'rolls').map((c) => c.name),
        );
        return rollout ? { ...result, rollout } : result;
      }),
  );
}

/** With --cluster naming a file present on both sides, only that cluster is synthesized; otherwise (it may be a rename) the plan stays. */
function narrow(
  plan: SynthesisPlan,
  inputs: { base: SideInputs; head: SideInputs },
  cluster: string | undefined,
): SynthesisPlan {
  if (cluster === undefined) return plan;
  const file = (side: SideInputs) => [...side.clusters.values()].find((f) => f.name === cluster)?.file;
  if (!file(inputs.base) || !file(inputs.head)) return plan;
  const only = (files: readonly string[]) => files.filter((f) => f === file(inputs.base) || f === file(inputs.head));
  return {
    ...plan,
    base: only(plan.base),
    head: only(plan.head),
    skipped: plan.skipped.filter((f) => f.name === cluster),
  };
}

/** Both sides' results, or every failure at once (both sides may be broken). */
function settled<T>(results: PromiseSettledResult<T>[]): T[] {
  const errors = results
    .filter((r): r is PromiseRejectedResult => r.status === 'rejected')
    .map((r) => r.reason as unknown);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) {
    const all = errors.map((e) => (e instanceof Error ? e.message : String(e)));
    throw new ReviewError(all.join('\n'), {
      cause: errors[0],
      files: errors.flatMap((e) => (e instanceof ReviewError ? e.files : [])),
    });
  }
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

function requireApp(repo: Repository, commit: string, ref: string): void {
  const app = path.posix.join(repo.prefix.split(path.sep).join('/'), 'bin/app.ts');
  if (git(repo.toplevel, ['cat-file', '-e', `${commit}:${app}`]).status !== 0) {
    throw new ReviewError(
      `base ${ref} (${commit.slice(0, 8)}): has no ${app}, so it has no worker-stacks CDK app to synthesize (it predates the project)`,
      {
        side: 'base',
        hint: 'choose a later --base, one that has bin/app.ts',
      },
    );
  }
}

/**
 * The exit code of a review: 1 when an object is invalid at head (the change
 * cannot deploy), or when `--fail-on` names something that happens; else 0.
 * A fixed object counts as a roll: what it replaces is unknown, the base
 * being invalid.
 */
export function reviewExitCode(result: ReviewResult, failOn?: FailOn): 0 | 1 {
  if (result.clusters.some((c) => c.status === 'invalid')) return 1;
  if (failOn === 'roll')
    return result.clusters.some((c) => c.status === 'rolls' || c.status === 'renamed' || c.status === 'fixed') ? 1 : 0;
  if (failOn === 'change') return result.clusters.some((c) => c.status !== 'unchanged') ? 1 : 0;
  return 0;
}
