import { describeRollChange, isCurrentRecipe, RollKey, rollKeyOfBody } from '../../stacks/roll-key';
import * as path from 'node:path';
import type * as Synthesis from '../../synthesis/synthesize';
import type { SynthesizedStack } from '../../synthesis/synthesize';
import { assemblyDir, assemblyKey } from '../../synthesis/assembly-dir';
import { lazyModule } from '../../../core/lazy-module';
import { StackSummary } from '../../../model/ports/cloudformation-port';
import { getCondition } from '../../../model/cluster/schema/status';
import { TASK } from '../workflow/context';
import { Observed, Roll, RollKeyed } from '../workflow/state';
import { task } from '../workflow/task';
import { inputsFingerprint } from '../workflow/fingerprint';
import { DepsOf, TaskContext } from '../workflow/task-context';

// The synthesis (aws-cdk-lib, ~0.25 s to load) at the first synthesis without a synthesizer of the caller's: importing
// the reconciler (the CLI, a test with a fake synthesizer) does not load it (lib/core/lazy-module.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const synthesis = lazyModule(() => require('../../synthesis/synthesize') as typeof Synthesis);

/** What synthesizeFor reads: where and how stacks are synthesized. */
export const SYNTHESIZE_DEPS = ['templatesDir', 'workDir', 'nag', 'synthesizer'] as const;

/**
 * 7. Does this change replace the nodes? The roll key of the template it would apply against the roll key of the
 * live stack's template (lib/engines/stacks/roll-key.ts), so an edit of the object and a release that writes the
 * launch template differently are the same kind of change, and every gate after this (the fleet's waves,
 * maxConcurrentPools), the execute's log line, the status and the events read this one answer.
 *
 * Cost: the desired key needs the synthesized template. It is kept in status.controller.rollKeys with the inputs it
 * was read for (and the live key with the stack version it was read from), so a held cluster is synthesized once, not
 * on every look, and a reconcile that goes on to its change set reuses this synthesis.
 */
export const rollKey = task<Observed, RollKeyed>()({
  name: TASK.rollKey,
  deps: [...SYNTHESIZE_DEPS, 'code', 'release'],
  async run(ctx, o) {
    // A first create replaces no node; a stack `recover` deals with (it ends the reconcile) is not read for nothing.
    if (!o.stack || RECOVERED.test(o.stack.status)) return { roll: { rolls: false, cause: '' } };
    const cached = ctx.recorder.controller.rollKeys;
    let synth: SynthesizedStack | undefined;
    let desired: RollKey | undefined;
    let release: string | undefined;
    // A key an older release cached with another recipe (rk1) is read again: two recipes' keys always differ, and a
    // cluster would look like it rolls when nothing replaces its nodes.
    const current = (k: RollKey | undefined) => !k || isCurrentRecipe(k.key);
    if (cached?.inputs === o.fingerprint && current(cached.desired)) ({ desired, release } = cached);
    else {
      synth = await synthesizeFor(ctx, o);
      desired = rollKeyOfBody(synth.templateBody);
      // Judged once, when these inputs are first seen: a held cluster's later looks say the same.
      release = byRelease(ctx, o);
    }
    const version = stackVersion(o.stack);
    // Read again: a live key that could not be read (it says nothing of the template the stack holds now), and any of a
    // stack without lastUpdated, whose id@ names its review, its create and what it holds after alike (the simulator
    // found a key read in review, none, kept for the created stack: a new image judged "no roll" skipped the waves;
    // moto reports no lastUpdated at all, and a key kept across its rolls said the stack ran an image it had left).
    const live =
      o.stack.lastUpdated !== undefined && cached?.stack === version && cached.live && current(cached.live)
        ? cached.live
        : rollKeyOfBody(await ctx.region.cfn.getTemplate(o.stack.id));
    const roll = rollOf(desired, live, o, release);
    ctx.recorder.stage(
      { desiredRollKey: desired?.key, rollKey: live?.key, pendingRoll: roll.rolls ? roll.cause : undefined },
      [],
      {
        rollKeys: {
          inputs: o.fingerprint,
          desired,
          stack: version,
          live,
          ...(release ? { release } : {}),
          code: ctx.deps.code,
        },
      },
    );
    return synth ? { roll, synth } : { roll };
  },
});

/** The stack states the recover task acts on and ends the reconcile with (tasks/apply.ts). */
const RECOVERED = /^(ROLLBACK_COMPLETE|UPDATE_ROLLBACK_FAILED|DELETE_FAILED|ROLLBACK_FAILED)$/;

/**
 * The answer from the two keys. A live template without a readable key (it cannot be read, or holds no group while
 * the desired one does) is judged by the config checksum alone, as before roll keys: never "no roll" on no evidence.
 */
function rollOf(desired: RollKey | undefined, live: RollKey | undefined, o: Observed, release?: string): Roll {
  if (desired && live) {
    const rolls = desired.key !== live.key;
    const cause = describeRollChange(live, desired);
    return { desired, live, rolls, cause: rolls ? (release ? `release ${release}: ${cause}` : cause) : '' };
  }
  const rolls = Boolean(desired) && o.live !== o.config.checksum;
  return { desired, live, rolls, cause: rolls ? 'config' : '' };
}

/**
 * The release that makes this change, when the object is not what makes it: a daemon of other code applied the
 * object's current generation (Ready on it, the config unchanged), or it applied these same inputs under its code.
 * The generation says it even when the new release reads the object with new defaults (its inputs then differ).
 * Says "0.1.0 → 0.2.0" (or the code digests when both have one version number).
 */
function byRelease(ctx: TaskContext<'code' | 'release'>, o: Observed): string | undefined {
  const c = ctx.recorder.controller;
  const applied = c.appliedBy;
  if (!applied || applied.code === ctx.deps.code) return undefined;
  const ready = getCondition(ctx.status, 'Ready');
  const appliedThisGeneration =
    ready?.status === 'True' && ready.observedGeneration === ctx.generation && o.live === o.config.checksum;
  const sameInputs =
    c.inputsFingerprint !== undefined &&
    inputsFingerprint(o.cluster, o.config.checksum, applied.code, ctx.unit.pool) === c.inputsFingerprint;
  if (!appliedThisGeneration && !sameInputs) return undefined;
  const next = ctx.deps.release ?? 'this code';
  // The same version number on both sides (a build between releases): the code digests tell them apart.
  return applied.version === next
    ? `${applied.version} (code ${applied.code.slice(0, 8)} → ${ctx.deps.code.slice(0, 8)})`
    : `${applied.version} → ${next}`;
}

/** A stack as of one update: its id and last update time (a new update is a new version to read). */
export function stackVersion(stack: StackSummary): string {
  return `${stack.id}@${stack.lastUpdated ?? ''}`;
}

/** The same synthesis as `cdk synth`, in-process (or on the daemon's synth pool): the change set's template. */
export async function synthesizeFor(
  ctx: TaskContext<DepsOf<typeof SYNTHESIZE_DEPS>>,
  o: Observed,
): Promise<SynthesizedStack> {
  // The config rendered (and memoized) in the render step: synthesis never renders it a second time.
  const opts = {
    templatesDir: ctx.deps.templatesDir,
    workDir: ctx.deps.workDir,
    fingerprint: o.fingerprint,
    nag: ctx.deps.nag,
    config: o.config,
    source: ctx.record.source,
    stackName: ctx.unit.stackName,
  };
  const synth = ctx.deps.synthesizer
    ? await ctx.deps.synthesizer(o.cluster, opts)
    : synthesis().synthesizeStack(o.cluster, opts);
  o.log.info({ stack: synth.stackName, synthMs: Math.round(synth.durationMs) }, 'synthesized');
  return synth;
}

/** The synthesis an earlier reconcile of these same inputs made for the roll key and kept (ReconcilerDeps.kept). */
export function keptSynthesis(ctx: TaskContext<'workDir' | 'kept'>, o: Observed): SynthesizedStack | undefined {
  const key = assemblyKey(o.cluster.metadata.name, ctx.unit.stackName);
  const dir = path.join(assemblyDir(ctx.deps.workDir, key), o.fingerprint.slice(0, 16));
  const synth = ctx.deps.kept?.take(ctx.unit.stackName, o.fingerprint, dir);
  if (synth) o.log.info({ stack: synth.stackName }, 'synthesis reused: the one its roll key was read from');
  return synth;
}
