import { poolStackName, workerStackName } from '../../../core/naming';
import { ClusterSpec, WorkerCluster } from '../schema/schema';
import type { z } from 'zod';
import type { NodePoolSchema } from '../schema/node-pool-schema';

/** The pool a single-pool object's spec.pool is: it lives in the stack WorkerStack-<cluster>, as before pools existed. */
export const DEFAULT_POOL = 'default';

/** One pool of a cluster, whichever way it was written (spec.pool or spec.pools[]). */
export type NodePool = z.output<typeof NodePoolSchema>;

/**
 * Every pool of a validated cluster, in the object's order. `spec.pool` is one pool named `default` with no labels,
 * taints, capacity or config of its own: the same stack, template and node config as before pools existed, so nobody
 * edits an object to upgrade.
 */
export function poolsOf(spec: ClusterSpec): readonly NodePool[] {
  if (spec.pools) return spec.pools;
  if (!spec.pool) return [];
  return [{ ...spec.pool, name: DEFAULT_POOL, labels: {}, taints: [] }];
}

/** The pool called `name`, or undefined. */
export function poolNamed(spec: ClusterSpec, name: string): NodePool | undefined {
  return poolsOf(spec).find((p) => p.name === name);
}

/**
 * One CloudFormation stack of a cluster: the shared stack `WorkerStack-<cluster>` (the security group, role, load
 * balancer, drain queue, and the pool named default when there is one), or one other pool's own stack.
 */
export interface StackUnit {
  readonly stackName: string;
  /** The pool whose Auto Scaling group the stack holds; undefined for a shared stack without the default pool. */
  readonly pool?: string;
  /** True for WorkerStack-<cluster>: what every pool uses, deployed before the pools' own stacks. */
  readonly shared: boolean;
}

/** The cluster's stacks, the shared one first (the order `cdk deploy` and the reconciler create them in). */
export function stackUnits(cluster: WorkerCluster): readonly StackUnit[] {
  const name = cluster.metadata.name;
  const pools = poolsOf(cluster.spec);
  const units: StackUnit[] = [
    {
      stackName: workerStackName(name),
      pool: pools.some((p) => p.name === DEFAULT_POOL) ? DEFAULT_POOL : undefined,
      shared: true,
    },
  ];
  for (const p of pools) {
    if (p.name !== DEFAULT_POOL) units.push({ stackName: poolStackName(name, p.name), pool: p.name, shared: false });
  }
  return units;
}

/** Taints that keep ordinary pods off a node: a pool with one takes no listener's traffic unless a listener names it. */
const REPELLING = new Set(['NoSchedule', 'NoExecute']);

/**
 * The pools a listener's target group takes: the ones it names, else every pool without a NoSchedule/NoExecute taint
 * of its own. The cluster's taints (spec.cloudConfig.values.nodeTaints) are on every pool alike, so they choose no pool:
 * a single-pool object whose nodes all carry a NoSchedule taint (edge-ap1) keeps its listeners on its one pool.
 */
export function listenerPools(spec: ClusterSpec, listener: { readonly pools?: readonly string[] }): readonly string[] {
  if (listener.pools) return listener.pools;
  return poolsOf(spec)
    .filter((p) => !p.taints.some((t) => REPELLING.has(t.effect)))
    .map((p) => p.name);
}

/**
 * The pool of a single-pool cluster, or the first of several. For code that has not learnt pools yet; validation
 * guarantees one of spec.pool and spec.pools.
 */
export function primaryPool(spec: ClusterSpec): NodePool {
  const first = poolsOf(spec).at(0);
  if (!first) throw new Error('a validated cluster has spec.pool or spec.pools');
  return first;
}

type Rule = ClusterSpec['securityGroupRules'][number];

/**
 * The security-group rules every node of the cluster takes (on the shared worker security group): those that name no
 * pool. A rule that names pools goes on each named pool's own group instead (poolRules).
 */
export function clusterWideRules(spec: ClusterSpec): readonly Rule[] {
  return spec.securityGroupRules.filter((r) => r.pools === undefined);
}

/** The rules narrowed to `pool`: the rules of its own security group (none: the pool has no group of its own). */
export function poolRules(spec: ClusterSpec, pool: string): readonly Rule[] {
  return spec.securityGroupRules.filter((r) => r.pools?.includes(pool) === true);
}
