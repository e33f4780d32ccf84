import { isComplete } from '../../../model/ports/cloudformation-port';
import { CONFIG_OBJECT_KEY, planCleanup } from '../../../platform/aws/config-objects';
import { ClusterStatus } from '../../../model/cluster/schema/status';
import { RenderedConfig } from '../../../model/cloudconfig/render';
import { rendered } from './render';
import { configBucketName, configKeyPrefix } from '../../../core/naming';
import { TASK } from '../workflow/context';
import { Found } from '../workflow/state';
import { need, task } from '../workflow/task';

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
export const cleanConfigObjects = task<Found>()({
  name: TASK.cleanConfigObjects,
  deps: ['dryRun', 'keepConfigObjects', 'templatesDir'],
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
      // Every pool's config is under the cluster's prefix: what any of its stacks carries, is rolling to, or asks for stays.
      const keep = configsInUse(ctx.recorder.clusterStatus, rendered(ctx, { ...f, cluster }).values());
      const objects = (await store.list(bucket, prefix)).filter(
        (o) => !keep.has(CONFIG_OBJECT_KEY.exec(o.key)?.[1] ?? ''),
      );
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
});

/** The checksums of every stack of the cluster: live, desired and executing (as recorded), and every pool's config now. */
function configsInUse(status: ClusterStatus, configs: Iterable<RenderedConfig>): Set<string> {
  const units = [status, ...(status.pools ?? [])];
  return new Set(
    [
      ...units.flatMap((u) => [u.cloudConfigChecksum, u.desiredChecksum, u.controller?.executing?.checksum]),
      ...[...configs].map((c) => c.checksum),
    ].filter((c): c is string => c !== undefined),
  );
}
