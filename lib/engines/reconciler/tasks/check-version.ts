import { compareVersions } from '../workflow/code-version';
import { TASK } from '../workflow/context';
import { Observed } from '../workflow/state';
import { need, task } from '../workflow/task';

/** How long an outdated daemon waits before it looks at the cluster again (the newer one does the work meanwhile). */
export const OUTDATED_REQUEUE_MS = 5 * 60_000;

/**
 * A daemon never applies over a cluster that a newer release applied last: two releases would otherwise take turns
 * producing different change sets for the same object (a roll back and forth during an upgrade of the daemon, or
 * with a forgotten old replica). The older one knows it is older (its own release against `appliedBy` in status),
 * writes nothing, says so, and requeues slowly; the newer one is unaffected. Same release, different template code (a
 * development build) cannot be ordered: it is logged, and the change set decides.
 */
export const checkVersion = task<Observed>()({
  name: TASK.checkVersion,
  deps: ['release', 'code'],
  when: (ctx) => Boolean(ctx.deps.release && ctx.recorder.controller.appliedBy),
  run(ctx, o) {
    const theirs = need(ctx.recorder.controller.appliedBy, 'status.controller.appliedBy');
    const ours = need(ctx.deps.release, "this daemon's release");
    const order = compareVersions(ours, theirs.version);
    if (order < 0) {
      const message = `this daemon runs worker-stacks ${ours}, but ${theirs.version} applied this cluster last; upgrade this daemon (nothing was changed)`;
      o.log.warn({ release: ours, appliedBy: theirs.version }, message);
      return { result: 'outdated', requeueAfterMs: OUTDATED_REQUEUE_MS, message };
    }
    if (order === 0 && theirs.code !== ctx.deps.code) {
      o.log.warn(
        { release: ours, code: ctx.deps.code.slice(0, 12), appliedByCode: theirs.code.slice(0, 12) },
        `a different build of worker-stacks ${ours} applied this cluster last; the change set shows what this build changes`,
      );
    }
    return undefined;
  },
});
