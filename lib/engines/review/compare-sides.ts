import { ReviewError } from '../../core/errors';
import { emptyAssembly, readAssembly } from './assembly';
import { CLUSTER_STATUSES, ClusterReview, ClusterStatus, REVIEW_SCHEMA_VERSION, ReviewResult } from './model';
import { invalidCluster, notSynthesized, removedInvalid } from './cluster-entries';
import { reviewCluster } from './cluster-review';
import { detectRenames } from './renames';
import { SynthesisPlan } from './inputs';
import { InvalidObject, SynthesizedSide } from './synth-revision';

// Kept apart from review(), which checks out, stages and synthesizes the two revisions: comparing two cloud assemblies
// needs no git and no synthesis, so the review cases compare sides they synthesized themselves through this alone.
// It pairs the clusters across the sides (renames, objects invalid on one side, clusters left out because their
// inputs are identical) and leaves what one cluster's entry says to cluster-review.ts.
export interface CompareOptions {
  /** Only this cluster (its name at base or at head). @default every cluster */
  readonly cluster?: string;
  /** What was synthesized, and the clusters left out because their inputs are identical. @default both sides were synthesized whole */
  readonly plan?: SynthesisPlan;
  /** Environments of the clusters not synthesized (they exist at base too): no bootstrap note for a new cluster there. @default none */
  readonly skippedEnvironments?: () => ReadonlySet<string>;
}

/** Compares two synthesized sides (cloud assemblies) cluster by cluster. */
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
