import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReviewError } from '../errors';
import { workerStackName } from '../stacks/naming';
import { AssemblySnapshot, readAssembly, WorkerStackSnapshot } from './assembly';
import { diffConfigs } from './config-diff';
import { git, headCommit, openRepository, Repository, resolveCommit, withCleanup } from './git';
import { ClusterReview, ClusterStatus, REVIEW_SCHEMA_VERSION, ReviewResult } from './model';
import { detectRenames } from './renames';
import { InputOverrides, SynthesizedSide, synthesizeRevision, synthesizeWorkingTree } from './synth-revision';
import { diffTemplates, TemplateChanges } from './template-diff';
import { groupSettings, rollReasons, verdictLine } from './verdict';

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
    throw new ReviewError(`head (working tree): ${repo.projectDir} has no bin/app.ts; it is not the worker-stacks project directory`, {
      side: 'head',
      hint: 'run review in the project directory (where cdk.json is), or pass --repo <dir>',
    });
  }
  // Fail fast, before anything is synthesized: a ref that is no commit, a revision without the CDK app.
  const commit = resolveCommit(repo, opts.base);
  requireApp(repo, commit, opts.base);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'worker-stacks-review-out-'));
  return withCleanup(
    () => fs.rmSync(tmp, { recursive: true, force: true }),
    async () => {
      const [base, head] = settled(
        await Promise.allSettled([
          synthesizeRevision(repo.projectDir, commit, path.join(tmp, 'base.out'), opts.inputs, opts.base),
          synthesizeWorkingTree(repo.projectDir, path.join(tmp, 'head.out'), opts.inputs),
        ]),
      );
      return compareSides({ ...base, ref: opts.base }, { ...head, commit: headCommit(repo) }, { cluster: opts.cluster });
    },
  );
}

/** Both sides' results, or every failure at once (both sides may be broken). */
function settled<T>(results: PromiseSettledResult<T>[]): T[] {
  const errors = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as unknown);
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) {
    const all = errors.map((e) => (e instanceof Error ? e.message : String(e)));
    throw new ReviewError(all.join('\n'), { cause: errors[0], files: errors.flatMap((e) => (e instanceof ReviewError ? e.files : [])) });
  }
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

function requireApp(repo: Repository, commit: string, ref: string): void {
  const app = path.posix.join(repo.prefix.split(path.sep).join('/'), 'bin/app.ts');
  if (git(repo.toplevel, ['cat-file', '-e', `${commit}:${app}`]).status !== 0) {
    throw new ReviewError(`base ${ref} (${commit.slice(0, 8)}): has no ${app}, so it has no worker-stacks CDK app to synthesize (it predates the project)`, {
      side: 'base',
      hint: 'choose a later --base, one that has bin/app.ts',
    });
  }
}

/** Compares two synthesized sides (cloud assemblies) cluster by cluster. */
export function compareSides(
  base: SynthesizedSide & { ref: string; commit?: string },
  head: SynthesizedSide,
  opts: { cluster?: string } = {},
): ReviewResult {
  const a = readAssembly(base.outdir, base.label);
  const b = readAssembly(head.outdir, head.label);
  const removed = [...a.stacks.values()].filter((s) => !b.stacks.has(s.cluster));
  const added = [...b.stacks.values()].filter((s) => !a.stacks.has(s.cluster));
  const renames = detectRenames(removed, added);
  const renamedFrom = new Map(renames.map((r) => [r.to, r.from]));
  const renamedTo = new Set(renames.map((r) => r.from));

  let clusters: ClusterReview[] = [];
  for (const name of [...new Set([...a.stacks.keys(), ...b.stacks.keys()])].sort()) {
    if (renamedTo.has(name)) continue;
    const from = renamedFrom.get(name);
    clusters.push(reviewCluster(from ? a.stacks.get(from) : a.stacks.get(name), b.stacks.get(name), a, b, from ?? null));
  }
  if (opts.cluster !== undefined) {
    clusters = clusters.filter((c) => c.name === opts.cluster || c.renamedFrom === opts.cluster);
    if (clusters.length === 0) {
      throw new ReviewError(`cluster ${JSON.stringify(opts.cluster)} exists neither at ${base.label} nor at ${head.label}`, {
        hint: `use one of: ${[...new Set([...a.stacks.keys(), ...b.stacks.keys()])].sort().join(', ')}`,
      });
    }
  }
  const statuses: ClusterStatus[] = ['unchanged', 'changes', 'rolls', 'added', 'removed', 'renamed'];
  const summary = Object.fromEntries(statuses.map((s) => [s, clusters.filter((c) => c.status === s).length])) as Record<ClusterStatus, number>;
  return {
    schemaVersion: REVIEW_SCHEMA_VERSION,
    base: { ref: base.ref, commit: base.commit ?? '' },
    head: { ref: 'working tree', commit: head.commit ?? null },
    summary: { clusters: clusters.length, ...summary },
    clusters,
  };
}

function reviewCluster(
  old: WorkerStackSnapshot | undefined,
  now: WorkerStackSnapshot | undefined,
  a: AssemblySnapshot,
  b: AssemblySnapshot,
  renamedFrom: string | null,
): ClusterReview {
  const name = (now ?? old)!.cluster;
  const stackName = (now ?? old)!.stackName;
  const checksum = { base: old?.config?.checksum ?? null, head: now?.config?.checksum ?? null };
  const notes: string[] = [];
  if (!now) {
    notes.push(
      `The reconciler never deletes stacks: ${stackName} and its nodes stay until someone deletes the stack explicitly ` +
        `(aws cloudformation delete-stack --stack-name ${stackName}, after draining the nodes).`,
    );
    return {
      name,
      stackName,
      status: 'removed',
      verdict: verdictLine({ status: 'removed', stackName, resources: [], rollingUpdate: null, capacity: null }),
      renamedFrom,
      rollReasons: [],
      rollingUpdate: null,
      capacity: null,
      checksum,
      template: null,
      config: null,
      notes,
    };
  }
  // A new stack (added, or renamed: a new stack name) is created whole; only an existing stack is updated.
  const changes = diffTemplates(old && !renamedFrom ? old.template : {}, now.template, now.logicalIdPaths);
  const { rollingUpdate, capacity } = groupSettings(now.template);
  let status: ClusterStatus;
  let reasons: string[] = [];
  if (!old) status = 'added';
  else if (renamedFrom) status = 'renamed';
  else {
    reasons = rollReasons(changes, checksum);
    status = reasons.length ? 'rolls' : changes.empty && checksum.base === checksum.head ? 'unchanged' : 'changes';
  }
  if (!old || renamedFrom) {
    if (!a.bootstrapEnvironments.has(now.environment) && b.bootstrapEnvironments.has(now.environment)) {
      const [account, region] = now.environment.replace('aws://', '').split('/');
      notes.push(`First cluster in ${account}/${region}: deploy WorkerStacks-Bootstrap-${account}-${region} (the config bucket) once, before ${stackName}.`);
    }
  }
  if (renamedFrom) {
    notes.push(
      `${workerStackName(renamedFrom)} is NOT deleted by the reconciler: its nodes keep running until it is deleted explicitly ` +
        `(aws cloudformation delete-stack --stack-name ${workerStackName(renamedFrom)}). ` +
        `Detected heuristically: the two objects differ only in their name.`,
    );
  }
  const keepRolling = status === 'rolls' || status === 'added' || status === 'renamed';
  const config = checksum.base === checksum.head ? null : diffConfigs(old?.config, now.config, status === 'added' ? { maxLines: 8 } : {});
  return {
    name,
    stackName,
    status,
    verdict: verdictLine({ status, stackName, resources: changes.resources, rollingUpdate, capacity, renamedFrom }),
    renamedFrom,
    rollReasons: reasons,
    rollingUpdate: keepRolling ? rollingUpdate : null,
    capacity,
    checksum,
    template: templateOf(changes),
    config,
    notes,
  };
}

function templateOf(c: TemplateChanges): ClusterReview['template'] {
  return { resources: c.resources, outputs: c.outputs, sections: c.sections, text: stripAnsi(c.text) };
}

/** The diff engine colours with chalk when it sees a colour terminal; the result carries plain text. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;]*m/g, '');
}

/** The exit code of a review: 1 when `--fail-on` names something that happens, else 0. */
export function reviewExitCode(result: ReviewResult, failOn?: FailOn): 0 | 1 {
  if (failOn === 'roll') return result.clusters.some((c) => c.status === 'rolls' || c.status === 'renamed') ? 1 : 0;
  if (failOn === 'change') return result.clusters.some((c) => c.status !== 'unchanged') ? 1 : 0;
  return 0;
}
