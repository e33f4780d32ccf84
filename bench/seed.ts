/**
 * A fleet that is already settled, without synthesizing it: the status each
 * cluster would have after a successful apply (written through the store's
 * own writeStatus, with the checksum and inputs fingerprint the reconciler
 * computes for each of its stacks), and a CREATE_COMPLETE stack per stack in the fake.
 */
import { ClusterStatus, setConditions } from '../lib/model/cluster/schema/status';
import { validateCluster } from '../lib/model/cluster/validate';
import { renderPools } from '../lib/model/cloudconfig/render';
import { primaryPool, stackUnits } from '../lib/model/cluster/pools/pools';
import { need } from '../lib/engines/reconciler/workflow/task';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { configDigests } from '../lib/engines/reconciler/workflow/config-changes';
import { CONDITIONS } from '../lib/engines/reconciler/workflow/conditions';
import { ReconcilerDeps } from '../lib/engines/reconciler/workflow/context';
import { inputsFingerprint } from '../lib/engines/reconciler/workflow/fingerprint';
import type { World } from './world';
import { templateDirectory } from '../lib/platform/files/template-directory';

export interface SeededStack {
  readonly name: string;
  readonly region: string;
  /** The cluster's account: each account's stacks are listed with its own credentials, apart from the others'. */
  readonly account: string;
  readonly stackName: string;
  readonly checksum: string;
}

/**
 * Writes the settled status of every object in the store. The first store.list() also records each
 * object's spec hash and generation, as the first pass of a real reconciler would.
 */
export async function seedStatuses(
  deps: ReconcilerDeps,
  stackIdOf: (s: SeededStack) => string = (s) =>
    `arn:aws:cloudformation:${s.region}:000000000000:stack/${s.stackName}/seeded`,
  parallel = 1,
): Promise<SeededStack[]> {
  const templates = listTemplates(templateDirectory(deps.templatesDir));
  const out: SeededStack[] = [];
  // Writes `parallel` at a time (a remote store: the API server), in list order either way.
  const pending: Promise<unknown>[] = [];
  for (const record of await deps.store.list()) {
    const result = validateCluster(record.raw, { file: record.source, templates });
    if (!result.cluster) throw new Error(`seed: ${record.source} is invalid`);
    const cluster = result.cluster;
    const configs = renderPools(cluster, templateDirectory(deps.templatesDir));
    // Every stack of the cluster (model/cluster/pools/pools.ts stackUnits): the shared one carries the pool default's config
    // (else the first pool's), each pool's own stack its pool's; each with the fingerprint the reconciler computes for it.
    const units = stackUnits(cluster).map((unit) => {
      const config = need(configs.get(unit.pool ?? primaryPool(cluster.spec).name), `the config of ${unit.stackName}`);
      const seeded: SeededStack = {
        name: record.name,
        region: cluster.spec.region,
        account: cluster.spec.account,
        stackName: unit.stackName,
        checksum: config.checksum,
      };
      const fingerprint = inputsFingerprint(cluster, config.checksum, deps.code, unit.shared ? undefined : unit.pool);
      // The fields recordSuccess (lib/engines/reconciler/tasks/record-outcome.ts) writes after an apply.
      const settled = {
        conditions: setConditions(
          [],
          CONDITIONS.ready('StackCreated', `stack CREATE_COMPLETE, config ${config.checksum.slice(0, 12)} live`),
          record.generation,
          deps.now(),
        ),
        cloudConfigChecksum: config.checksum,
        observedGeneration: record.generation,
        stackName: seeded.stackName,
        stackId: stackIdOf(seeded),
        stackStatus: 'CREATE_COMPLETE',
        controller: {
          inputsFingerprint: fingerprint,
          configDigests: configDigests(config.node),
          failures: 0,
          recoveryAttempts: 0,
        },
      };
      return { unit, seeded, settled };
    });
    const [shared, ...pools] = units;
    const status: ClusterStatus = {
      ...shared.settled,
      ...(pools.length
        ? {
            pools: pools.map((p) => ({ name: p.unit.pool ?? '', ...p.settled })),
            poolsReady: `${units.length}/${units.length}`,
          }
        : {}),
    };
    pending.push(deps.store.writeStatus(record.name, status, record.resourceVersion));
    if (pending.length >= parallel) await Promise.all(pending.splice(0));
    out.push(...units.map((u) => u.seeded));
  }
  await Promise.all(pending);
  return out;
}

/**
 * CREATE_COMPLETE stacks in the fakes. Only their status and ConfigChecksum output matter to an unchanged
 * pass, so the live template is a stub with that output rather than a synthesized one.
 */
export function seedStacks(world: World, stacks: readonly SeededStack[]): void {
  for (const s of stacks) {
    world.fake(s.region, s.account).seed(s.stackName, {
      status: 'CREATE_COMPLETE',
      template: JSON.stringify({ Resources: {}, Outputs: { ConfigChecksum: { Value: s.checksum } } }),
    });
  }
}
