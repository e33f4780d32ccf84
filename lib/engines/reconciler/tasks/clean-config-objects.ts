import { isComplete } from '../../../model/ports/cloudformation-port';
import { planCleanup } from '../../../platform/aws/config-objects';
import { configBucketName, configKeyPrefix } from '../../../core/naming';
import { TASK } from '../workflow/context';
import { Found } from '../workflow/state';
import { need, Task } from '../workflow/task';

/** Config objects kept besides the live and the desired one: rollback targets. */
export const DEFAULT_KEEP_CONFIG_OBJECTS = 3;

/**
 * After a cluster has settled (its stack complete, carrying the desired config, nothing executing), its config
 * objects that are neither live, desired, nor among the newest `keepConfigObjects` others are deleted. Only then:
 * during a roll, instances of the previous launch template version still boot from the previous object. Runs once
 * per settled config (status.controller.cleanedFor). A failure here fails nothing: it is logged and tried again the
 * next time the cluster settles or is looked at. A removed cluster is never reconciled, so its objects stay until
 * its stack is deleted.
 */
export const cleanConfigObjects: Task<Found> = {
  name: TASK.cleanConfigObjects,
  when: (ctx, f) =>
    Boolean(
      ctx.clients?.configObjects &&
      f.cluster &&
      f.config &&
      f.stack &&
      isComplete(f.stack.status) &&
      f.live === f.config.checksum,
    ) &&
    !ctx.recorder.controller.executing &&
    !ctx.deps.dryRun &&
    ctx.recorder.controller.cleanedFor !== f.live,
  async run(ctx, f) {
    // `when` saw all of these: a settled cluster, on its desired config.
    const { cluster, config, live } = f as Found & Required<Pick<Found, 'cluster' | 'config' | 'live'>>;
    const bucket = configBucketName(cluster.spec.account, cluster.spec.region);
    const prefix = configKeyPrefix(cluster.metadata.name);
    const store = need(ctx.region.configObjects, 'the config object store');
    try {
      const objects = await store.list(bucket, prefix);
      const plan = planCleanup(objects, {
        live,
        desired: config.checksum,
        keepLast: ctx.deps.keepConfigObjects ?? DEFAULT_KEEP_CONFIG_OBJECTS,
      });
      const r = plan.remove.length ? await store.delete(bucket, plan.remove) : { deleted: [], errors: [] };
      if (r.errors.length)
        f.log.warn(
          { bucket, errors: r.errors },
          `could not delete ${r.errors.length} old config objects; trying again later`,
        );
      else ctx.recorder.stage({}, [], { cleanedFor: live });
      if (r.deleted.length)
        f.log.info(
          { bucket, deleted: r.deleted, kept: plan.keep.length },
          `deleted ${r.deleted.length} old config objects of ${cluster.metadata.name}`,
        );
    } catch (e) {
      f.log.warn({ bucket, err: (e as Error).message }, 'could not clean up old config objects; trying again later');
    }
  },
};
