import { stripColours } from '../../core/ansi';
import { workerStackName } from '../../core/naming';
import { AssemblySnapshot, WorkerStackSnapshot } from './assembly';
import { diffConfigs } from './config-diff';
import { ClusterReview, ClusterStatus } from './model';
import { diffTemplates, TemplateChanges } from './template-diff';
import { groupSettings, rollReasons, STATUS_WORDS, verdictLine } from './verdict';
import { poolsLine, reviewPools } from './pool-review';

// The entry of one cluster that has a synthesized stack on at least one side, out of compare-sides.ts: that file pairs
// the clusters across the revisions; this one decides what a paired cluster's deploy does (its status, why it rolls,
// the notes an operator needs) from its stacks alone, as cluster-entries.ts does for those without two stacks to diff.
export function reviewCluster(
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
    // The object itself is gone: the reconciler does not delete its stacks (the file store keeps them; so does the
    // Kubernetes store unless the object said spec.deletionPolicy Delete), unlike a pool removed from an object.
    const stacks = [...[...own.old.values()].map((s) => s.stackName), stackName];
    notes.push(
      `The reconciler does not delete a removed object's stacks (with the Kubernetes store, unless it had spec.deletionPolicy Delete): ${stacks.join(', ')} and ${stacks.length === 1 ? 'its' : 'their'} nodes stay until someone deletes ${stacks.length === 1 ? 'the stack' : 'them'} explicitly ` +
        `(worker-stacks delete ${name} --yes --region <region>${stacks.length === 1 ? '' : ': each pool stack before the shared one'}, after draining the nodes).`,
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
      pools: reviewPools({ old, now, stackName }, { old: own.old, now: new Map() }, false, true).pools,
    };
  }
  // A new stack (added, or renamed: a new stack name) is created whole; only an existing stack is updated.
  const changes = diffTemplates(old && !renamedFrom ? old.template : {}, now.template, now.logicalIdPaths);
  let { rollingUpdate, capacity } = groupSettings(now.template);
  let status: ClusterStatus;
  let reasons: string[] = [];
  // Whether the shared stack rolls is its roll key's answer (the one the reconciler's gates read); the diff words it.
  const sharedReasons = () => (old ? rollReasons(changes, checksum, { base: old.template, head: now.template }) : []);
  // Each pool on its own; a cluster's roll is its pools' rolls (the pools outside the shared stack count too).
  const pooled = reviewPools({ old, now, stackName }, own, !old || Boolean(renamedFrom));
  const ownPools = pooled.pools.filter((p) => !p.shared);
  if (!old) status = problems.base.length ? 'fixed' : 'added';
  else if (renamedFrom) status = 'renamed';
  else {
    // A pool removed from the object is a roll of that pool: the reconciler deletes its stack and its nodes go.
    reasons = [
      ...sharedReasons(),
      ...ownPools.flatMap((p) =>
        p.rollReasons.map((r) =>
          p.status === 'removed'
            ? `removes pool ${p.name} (${p.stackName}): ${r}`
            : `pool ${p.name} (${p.stackName}): ${r}`,
        ),
      ),
    ];
    const poolsChange = ownPools.some((p) => p.status !== 'unchanged');
    status = reasons.length
      ? 'rolls'
      : changes.empty && checksum.base === checksum.head && !poolsChange
        ? 'unchanged'
        : 'changes';
    // The shared stack does not roll but a pool's own stack does: the verdict says how that pool rolls.
    if (status === 'rolls' && !sharedReasons().length && pooled.rolling) ({ rollingUpdate, capacity } = pooled.rolling);
  }
  // Nothing rolls but pools go: the verdict says which, and no rolling update applies to it.
  const removals = status === 'rolls' && !pooled.rolling && !sharedReasons().length;
  if (removals) rollingUpdate = null;
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
  const verdict = removals
    ? `${STATUS_WORDS.rolls}: ${ownPools
        .filter((p) => p.status === 'removed')
        .map((p) => `removes pool ${p.name}: ${p.rollReasons.join('; ')}`)
        .join('; ')}`
    : verdictLine({ status, stackName, resources: changes.resources, rollingUpdate, capacity, renamedFrom });
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
  return { resources: c.resources, outputs: c.outputs, sections: c.sections, text: stripColours(c.text) };
}
