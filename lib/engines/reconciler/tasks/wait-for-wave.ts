import * as fs from 'node:fs';
import * as path from 'node:path';
import { configBucketName, configKeyPrefix } from '../../../core/naming';
import { memberSpec } from '../../rollout/coordinator';
import { fleetMember } from '../../rollout/fleet';
import { CONDITIONS } from '../workflow/conditions';
import { TASK } from '../workflow/context';
import { Gated, Observed, RollKeyed } from '../workflow/state';
import { need, task } from '../workflow/task';
import { short } from './prepare';
import { TaskContext } from '../workflow/task-context';

/**
 * Fleet rollout gate (lib/engines/rollout): before a change that replaces the nodes (its roll key differs from the live
 * stack's: a new config, image, instance types, subnets, capacity, or a release that writes the launch template
 * differently) starts, the cluster's wave, the earlier waves, its maintenance windows and its hold must allow it. A held
 * cluster is told why and requeued, never blocked; its new config is staged (published to S3, shown as desired) so
 * that releasing it is only the stack update. Changes that replace no node (listeners, rules, sizes, tags) and a
 * stack's first create are never held.
 */
export const waitForWave = task<Observed & RollKeyed, Gated>()({
  name: TASK.waitForWave,
  deps: ['rollout', 'now', 'workDir'],
  when: (ctx, o) => Boolean(ctx.deps.rollout && o.stack && o.roll.rolls),
  async run(ctx, o) {
    const desired = o.config.checksum;
    const self = fleetMember(ctx.record, { ...memberSpec(o.cluster), rollPending: true }, desired, o.stack);
    const d = await need(ctx.deps.rollout, 'the rollout gate').decide(self);
    const where = d.placement ? { policy: d.placement.policy.policy.metadata.name, wave: d.placement.wave.name } : {};
    const previous = ctx.status.rollout;
    if (d.go) {
      const heldSince = previous?.stagedChecksum === desired ? previous.heldSince : undefined;
      const waitedMs = heldSince !== undefined ? ctx.deps.now().getTime() - Date.parse(heldSince) : 0;
      if (where.wave) o.log.info({ ...where, waitedMs }, `wave ${where.wave}: the roll may start`);
      if (previous?.policy !== where.policy || previous?.wave !== where.wave)
        ctx.recorder.stage({ rollout: where.wave ? { ...previous, ...where } : undefined });
      return where.policy && where.wave
        ? { rollout: { policy: where.policy, wave: where.wave, event: 'started', waitedMs } }
        : undefined;
    }
    const staged = previous?.stagedChecksum === desired ? previous.stagedChecksum : await stage(ctx, o);
    const heldSince =
      previous?.heldSince && previous.stagedChecksum === desired ? previous.heldSince : ctx.deps.now().toISOString();
    const message = `${d.message} (replaces nodes: ${o.roll.cause}; live config ${short(o.live)}, desired ${short(desired)})`;
    ctx.recorder.stage(
      {
        desiredChecksum: desired,
        observedGeneration: ctx.generation,
        stackStatus: o.stack?.status,
        rollout: { ...where, stagedChecksum: staged, heldSince },
      },
      CONDITIONS.held(d.reason, message),
    );
    if (previous?.wave !== where.wave || getReason(ctx) !== d.reason)
      o.log.info({ reason: d.reason, ...where }, message);
    const rollout =
      where.policy && where.wave
        ? { rollout: { policy: where.policy, wave: where.wave, event: 'held' as const, reason: d.reason } }
        : {};
    return { result: 'held', requeueAfterMs: d.requeueAfterMs, message, ...rollout };
  },
});

function getReason(ctx: TaskContext<never>): string | undefined {
  return ctx.status.conditions.find((c) => c.type === 'Progressing')?.reason;
}

/**
 * Publishes the desired config object alone (content-addressed, so publishing it again later is a no-op): a held
 * config is in S3 and can be read, reviewed and fetched before its roll. Returns the staged checksum, or undefined
 * when publishing failed (it is tried again on the next look; the hold is not affected).
 */
async function stage(ctx: TaskContext<'workDir'>, o: Observed): Promise<string | undefined> {
  const c = o.config;
  const cluster = o.cluster;
  const dir = path.join(ctx.deps.workDir, `${cluster.metadata.name}.staged`);
  const file = path.join(dir, `${c.checksum}.${c.extension}`);
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, c.bytes);
    await ctx.region.publisher.publish([
      {
        sourcePath: file,
        bucketName: configBucketName(cluster.spec.account, cluster.spec.region),
        objectKey: `${configKeyPrefix(cluster.metadata.name)}${c.checksum}.${c.extension}`,
      },
    ]);
    return c.checksum;
  } catch (e) {
    o.log.warn({ err: (e as Error).message }, 'could not stage the held config object; trying again on the next look');
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
