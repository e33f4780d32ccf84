import { RenderedConfig } from '../../../model/cloudconfig/render';
import { renderCluster } from '../../../model/cluster/derive';
import { RenderError } from '../../../core/errors';
import { primaryPool, stackUnits } from '../../../model/cluster/pools/pools';
import { WorkerCluster } from '../../../model/cluster/schema/schema';
import { configChanges, configDigests, describeConfigChanges } from '../workflow/config-changes';
import { TASK } from '../workflow/context';
import { Desired, Validated } from '../workflow/state';
import { task } from '../workflow/task';
import { inputsFingerprint } from '../workflow/fingerprint';
import { TaskContext } from '../workflow/task-context';
import { templateDirectory } from '../../../platform/files/template-directory';

// The render task and the per-stack config it picks (a pool's own, or for the shared stack the default pool's),
// rendered once per validated cluster for all of its stacks.

/** The node configs as `validate` and `render` derive them; a template that does not render stalls as RenderFailed with their message. */
export function rendered(ctx: TaskContext<'templatesDir'>, s: Validated): ReadonlyMap<string, RenderedConfig> {
  const known = renderedPools.get(s.cluster);
  if (known) return known;
  const r = renderCluster(s.cluster, ctx.record.source, templateDirectory(ctx.deps.templatesDir));
  if ('problems' in r) throw new RenderError(r.problems);
  // Keyed on the validated cluster (the derived cache keeps the same object while the object's bytes stay the same):
  // a cluster's stacks, reconciled one after the other, render its pools once.
  renderedPools.set(s.cluster, r.configs);
  return r.configs;
}

/** Every pool's config, by validated cluster (see rendered). */
const renderedPools = new WeakMap<WorkerCluster, ReadonlyMap<string, RenderedConfig>>();

/**
 * inputsFingerprint, memoized on the validated cluster (kept while the object's bytes stay the same, as rendered is):
 * a pool stack's fingerprint is not in the derived cache, and hashing the canonical spec on every look at a cluster
 * of several pools was a tenth of what a held cluster's reconcile cost.
 */
function unitFingerprint(cluster: WorkerCluster, checksum: string, code: string, pool: string | undefined): string {
  const key = `${code}\0${pool ?? ''}\0${checksum}`;
  let known = fingerprints.get(cluster);
  if (!known) fingerprints.set(cluster, (known = new Map<string, string>()));
  let value = known.get(key);
  if (value === undefined) known.set(key, (value = inputsFingerprint(cluster, checksum, code, pool)));
  return value;
}

/** Fingerprints by validated cluster, then code, pool and config checksum (see unitFingerprint). */
const fingerprints = new WeakMap<WorkerCluster, Map<string, string>>();

/**
 * The config of the stack this run reconciles: a pool's own; for the shared stack, the default pool's (the one it
 * holds), else the first pool's (the checksum its ConfigChecksum output carries).
 */
function unitConfig(ctx: TaskContext<'templatesDir'>, s: Validated): RenderedConfig {
  const pool = ctx.unit.pool ?? stackUnits(s.cluster)[0].pool ?? primaryPool(s.cluster.spec).name;
  const config = rendered(ctx, s).get(pool);
  if (!config) throw new Error(`no config rendered for pool ${pool} of ${s.cluster.metadata.name}`);
  return config;
}

/** 2. Render the big config; its checksum and the code and spec give the inputs' fingerprint. */
export const render = task<Validated, Pick<Desired, 'config' | 'fingerprint' | 'configChange' | 'log'>>()({
  name: TASK.render,
  deps: ['derived', 'templatesDir', 'code', 'images'],
  run(ctx, s) {
    const hit = ctx.deps.derived?.get(ctx.record.name, ctx.derivedKey);
    // The derived cache holds the shared stack's config of a single-pool object; every other is one of the object's
    // pools, rendered once per validated cluster (the cache keeps the same cluster while the bytes stay the same).
    const single = !ctx.unit.pool && !s.cluster.spec.pools;
    const config = (single ? hit?.config : undefined) ?? unitConfig(ctx, s);
    const fingerprint =
      (single ? hit?.fingerprint : undefined) ??
      unitFingerprint(s.cluster, config.checksum, ctx.deps.code, ctx.unit.pool);
    if (!hit && !ctx.unit.pool)
      ctx.deps.derived?.set(ctx.record.name, ctx.derivedKey, { cluster: s.cluster, config, fingerprint });
    const recorded = ctx.status.cloudConfigChecksum;
    const configChange =
      recorded && recorded !== config.checksum
        ? describeConfigChanges(configChanges(ctx.recorder.controller.configDigests, configDigests(config.node)))
        : undefined;
    // From here on every line names the desired checksum too.
    return { config, fingerprint, configChange, log: s.log.child({ checksum: config.checksum }) };
  },
});
