import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReviewError } from '../../core/errors';
import { workerStackName } from '../../core/naming';
import { AssemblySnapshot, emptyAssembly, readAssembly, WorkerStackSnapshot } from './assembly';
import { diffConfigs } from './config-diff';
import { git, headCommit, openRepository, Repository, resolveCommit, withCleanup, withWorktree } from './git';
import { CLUSTER_STATUSES, ClusterReview, ClusterStatus, REVIEW_SCHEMA_VERSION, ReviewResult } from './model';
import { invalidCluster, notSynthesized, removedInvalid } from './cluster-entries';
import { detectRenames } from './renames';
import { planSynthesis, readEnvironment, readSideInputs, SideInputs, stageClusters, SynthesisPlan } from './inputs';
import {
  InputOverrides,
  InvalidObject,
  linkNodeModules,
  StagedClusters,
  SynthesizedSide,
  synthesizeProject,
} from './synth-revision';
import { diffTemplates, TemplateChanges } from './template-diff';
import { groupSettings, rollReasons, verdictLine } from './verdict';
import { rolloutPlanAt } from './rollout-plan';
import { poolsLine, reviewPools } from './pool-review';

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
 * nodes roll, or it was renamed (a new stack name: a new stack brings up new
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

export interface CompareOptions {
  /** Only this cluster (its name at base or at head). @default every cluster */
  readonly cluster?: string;
  /** What was synthesized, and the clusters left out because their inputs are identical. @default both sides were synthesized whole */
  readonly plan?: SynthesisPlan;
  /** Environments of the clusters not synthesized (they exist at base too): no bootstrap note for a new cluster there. @default none */
  readonly skippedEnvironments?: () => ReadonlySet<string>;
}

/** Compares two synthesized sides (cloud assemblies) cluster by cluster. @internal exported for the review cases, which compare sides they synthesized */
export function compareSides(
  base: SynthesizedSide & { ref: string; commit?: string },
  head: SynthesizedSide,
  opts: CompareOptions = {},
): ReviewResult {
  const a = base.empty ? emptyAssembly(base.outdir) : readAssembly(base.outdir, base.label);
  const b = head.empty ? emptyAssembly(head.outdir) : readAssembly(head.outdir, head.label);
  const badAtBase: ReadonlyMap<string, InvalidObject> = base.invalid ?? new Map();
  const badAtHead: ReadonlyMap<string, InvalidObject> = head.invalid ?? new Map();
  const skipped = opts.plan?.skipped ?? [];
  // An object invalid on the other side is neither added nor removed: it is reported as invalid or fixed.
  const removed = [...a.stacks.values()].filter((s) => !b.stacks.has(s.cluster) && !badAtHead.has(s.cluster));
  const added = [...b.stacks.values()].filter((s) => !a.stacks.has(s.cluster) && !badAtBase.has(s.cluster));
  const renames = detectRenames(removed, added);
  const renamedFrom = new Map(renames.map((r) => [r.to, r.from]));
  const renamedTo = new Set(renames.map((r) => r.from));
  let baseEnvironments: ReadonlySet<string> | undefined;
  const bootstrapped = (env: string) =>
    a.bootstrapEnvironments.has(env) || (baseEnvironments ??= opts.skippedEnvironments?.() ?? new Set()).has(env);

  const names = [
    ...new Set([
      ...a.stacks.keys(),
      ...b.stacks.keys(),
      ...badAtBase.keys(),
      ...badAtHead.keys(),
      ...skipped.map((f) => f.name),
    ]),
  ].sort();
  const notSynthesizedNames = new Set(skipped.map((f) => f.name));
  let clusters: ClusterReview[] = [];
  for (const name of names) {
    if (renamedTo.has(name)) continue;
    const problems = { base: badAtBase.get(name)?.problems ?? [], head: badAtHead.get(name)?.problems ?? [] };
    if (notSynthesizedNames.has(name) && !a.stacks.has(name) && !b.stacks.has(name))
      clusters.push(notSynthesized(name));
    else if (badAtHead.has(name)) clusters.push(invalidCluster(name, a.stacks.get(name), problems));
    else {
      // A renamed cluster is compared with its old name's stack (a rename is an added stack, so it has one at head).
      const from = renamedFrom.get(name);
      const old = a.stacks.get(from ?? name);
      const now = b.stacks.get(name);
      const subject = now ?? old;
      const own = { old: a.poolStacks.get(from ?? name) ?? new Map(), now: b.poolStacks.get(name) ?? new Map() };
      if (subject) clusters.push(reviewCluster(subject, old, now, own, bootstrapped, b, from ?? null, problems));
      else clusters.push(removedInvalid(name, problems));
    }
  }
  if (opts.cluster !== undefined) {
    clusters = clusters.filter((c) => c.name === opts.cluster || c.renamedFrom === opts.cluster);
    if (clusters.length === 0) {
      throw new ReviewError(
        `cluster ${JSON.stringify(opts.cluster)} exists neither at ${base.label} nor at ${head.label}`,
        {
          hint: `use one of: ${names.join(', ')}`,
        },
      );
    }
  }
  const summary = Object.fromEntries(
    CLUSTER_STATUSES.map((s) => [s, clusters.filter((c) => c.status === s).length]),
  ) as Record<ClusterStatus, number>;
  return {
    schemaVersion: REVIEW_SCHEMA_VERSION,
    base: { ref: base.ref, commit: base.commit ?? '' },
    head: { ref: 'working tree', commit: head.commit ?? null },
    summary: { clusters: clusters.length, ...summary },
    synthesis: {
      codeChanged: opts.plan ? opts.plan.codeChanged : null,
      templatesChanged: opts.plan ? [...opts.plan.templatesChanged] : null,
      base: a.stacks.size + badAtBase.size,
      head: b.stacks.size + badAtHead.size,
      skipped: skipped.length,
    },
    clusters,
  };
}

function reviewCluster(
  /** The stack the entry is named after: head's, else base's. */
  subject: WorkerStackSnapshot,
  old: WorkerStackSnapshot | undefined,
  now: WorkerStackSnapshot | undefined,
  /** The own stacks of the cluster's pools other than `default`, by pool name, at base and at head. */
  own: {
    readonly old: ReadonlyMap<string, WorkerStackSnapshot>;
    readonly now: ReadonlyMap<string, WorkerStackSnapshot>;
  },
  bootstrapped: (environment: string) => boolean,
  b: AssemblySnapshot,
  renamedFrom: string | null,
  problems: ClusterReview['problems'],
): ClusterReview {
  const name = subject.cluster;
  const stackName = subject.stackName;
  const checksum = { base: old?.config?.checksum ?? null, head: now?.config?.checksum ?? null };
  const notes: string[] = [];
  if (!now) {
    const stacks = [stackName, ...[...own.old.values()].map((s) => s.stackName)];
    notes.push(
      `The reconciler never deletes stacks: ${stacks.join(', ')} and ${stacks.length === 1 ? 'its' : 'their'} nodes stay until someone deletes ${stacks.length === 1 ? 'the stack' : 'them'} explicitly ` +
        `(aws cloudformation delete-stack --stack-name ${stacks.at(-1) ?? stackName}${stacks.length === 1 ? '' : ', each pool stack before the shared one'}, after draining the nodes).`,
    );
    return {
      name,
      stackName,
      status: 'removed',
      verdict: verdictLine({ status: 'removed', stackName, resources: [], rollingUpdate: null, capacity: null }),
      synthesized: true,
      renamedFrom,
      rollReasons: [],
      rollingUpdate: null,
      capacity: null,
      checksum,
      template: null,
      config: null,
      problems,
      notes,
      pools: reviewPools({ old, now, stackName }, { old: own.old, now: new Map() }, false).pools,
    };
  }
  // A new stack (added, or renamed: a new stack name) is created whole; only an existing stack is updated.
  const changes = diffTemplates(old && !renamedFrom ? old.template : {}, now.template, now.logicalIdPaths);
  let { rollingUpdate, capacity } = groupSettings(now.template);
  let status: ClusterStatus;
  let reasons: string[] = [];
  // Each pool on its own; a cluster's roll is its pools' rolls (the pools outside the shared stack count too).
  const pooled = reviewPools({ old, now, stackName }, own, !old || Boolean(renamedFrom));
  const ownPools = pooled.pools.filter((p) => !p.shared);
  if (!old) status = problems.base.length ? 'fixed' : 'added';
  else if (renamedFrom) status = 'renamed';
  else {
    reasons = [
      ...rollReasons(changes, checksum),
      ...ownPools.flatMap((p) => p.rollReasons.map((r) => `pool ${p.name} (${p.stackName}): ${r}`)),
    ];
    const poolsChange = ownPools.some((p) => p.status !== 'unchanged');
    status = reasons.length
      ? 'rolls'
      : changes.empty && checksum.base === checksum.head && !poolsChange
        ? 'unchanged'
        : 'changes';
    // The shared stack does not roll but a pool's own stack does: the verdict says how that pool rolls.
    if (status === 'rolls' && !rollReasons(changes, checksum).length && pooled.rolling)
      ({ rollingUpdate, capacity } = pooled.rolling);
  }
  if (status === 'fixed') {
    notes.push(
      `The base revision could not synthesize ${name} (invalid there), so the diff is the whole stack: it creates ${stackName}, or updates the stack a still older revision deployed.`,
    );
  }
  if (!old || renamedFrom) {
    if (!bootstrapped(now.environment) && b.bootstrapEnvironments.has(now.environment)) {
      const [account, region] = now.environment.replace('aws://', '').split('/');
      notes.push(
        `First cluster in ${account}/${region}: deploy WorkerStacks-Bootstrap-${account}-${region} (the config bucket) once, before ${stackName}.`,
      );
    }
  }
  if (renamedFrom) {
    notes.push(
      `${workerStackName(renamedFrom)} is NOT deleted by the reconciler: its nodes keep running until it is deleted explicitly ` +
        `(aws cloudformation delete-stack --stack-name ${workerStackName(renamedFrom)}). ` +
        `Detected heuristically: the two objects differ only in their name.`,
    );
  }
  const keepRolling = status === 'rolls' || createsStack(status);
  const config =
    checksum.base === checksum.head ? null : diffConfigs(old?.config, now.config, !old ? { maxLines: 8 } : {});
  const verdict = verdictLine({
    status,
    stackName,
    resources: changes.resources,
    rollingUpdate,
    capacity,
    renamedFrom,
  });
  return {
    name,
    stackName,
    status,
    // A cluster of several pools (or one outside the shared stack) says what each pool does.
    verdict: ownPools.length ? `${verdict}; ${poolsLine(pooled.pools)}` : verdict,
    synthesized: true,
    renamedFrom,
    rollReasons: reasons,
    rollingUpdate: keepRolling ? rollingUpdate : null,
    capacity,
    checksum,
    template: templateOf(changes),
    config,
    problems,
    notes,
    pools: pooled.pools,
  };
}

/** Whether a status means a stack is created whole: added, renamed (a new stack name), or fixed (nothing at base to compare with). */
function createsStack(status: ClusterStatus): boolean {
  return status === 'added' || status === 'renamed' || status === 'fixed';
}

function templateOf(c: TemplateChanges): ClusterReview['template'] {
  return { resources: c.resources, outputs: c.outputs, sections: c.sections, text: stripAnsi(c.text) };
}

/** The diff engine colours with chalk when it sees a colour terminal; the result carries plain text. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
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
