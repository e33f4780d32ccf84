import { stripColours } from '../../core/ansi';
import { DEFAULT_POOL } from '../../model/cluster/pools/pools';
import { WorkerStackSnapshot } from './assembly';
import { ConfigDiff, diffConfigs } from './config-diff';
import { Capacity, PoolReview, PoolStatus, RollingUpdate } from './model';
import { diffTemplates, TemplateChanges } from './template-diff';
import { groupSettings, rollReasons } from './verdict';

/** A pool's stack on both sides: the shared stack for the pool `default`, else the pool's own stack. */
interface PoolSides {
  readonly name: string;
  readonly stackName: string;
  readonly old?: WorkerStackSnapshot;
  readonly now?: WorkerStackSnapshot;
  /** The pool lives in the cluster's shared stack (its diff is the cluster's own). */
  readonly shared: boolean;
}

/** What the cluster's review needs of its pools: each pool's entry, and the settings of the first pool that rolls. */
export interface PoolsOutcome {
  readonly pools: readonly PoolReview[];
  /** How the first rolling pool outside the shared stack rolls (for the cluster's verdict when its shared stack does not). */
  readonly rolling?: { readonly rollingUpdate: RollingUpdate | null; readonly capacity: Capacity | null };
}

const hasGroup = (s: WorkerStackSnapshot | undefined) => groupSettings(s?.template).capacity !== null;

/**
 * Every pool of a cluster, each on its own: which stack holds it, whether it rolls and why (its own launch template
 * and checksum, its own config-diff lines). The pool `default` is the shared stack's group, when it has one; the
 * other pools are their own stacks `WorkerStack-<cluster>-Pool-<pool>`. `whole`: the cluster's stacks are created
 * whole (a new or renamed cluster), so every pool is added.
 */
export function reviewPools(
  shared: { readonly old?: WorkerStackSnapshot; readonly now?: WorkerStackSnapshot; readonly stackName: string },
  own: {
    readonly old: ReadonlyMap<string, WorkerStackSnapshot>;
    readonly now: ReadonlyMap<string, WorkerStackSnapshot>;
  },
  whole: boolean,
  /** The cluster object itself is gone at head: its pools' stacks are not deleted with it (see cluster-review.ts). */
  clusterRemoved = false,
): PoolsOutcome {
  const sides: PoolSides[] = [];
  if (hasGroup(shared.now) || hasGroup(shared.old))
    sides.push({ name: DEFAULT_POOL, stackName: shared.stackName, old: shared.old, now: shared.now, shared: true });
  for (const name of [...new Set([...own.old.keys(), ...own.now.keys()])].sort()) {
    const old = own.old.get(name);
    const now = own.now.get(name);
    const stackName = (now ?? old)?.stackName ?? '';
    sides.push({ name, stackName, old, now, shared: false });
  }
  // A pool added beside a removed one (a rename) is created and Ready before the removed one's stack is deleted.
  const added = sides.filter((s) => !s.shared && !s.old && s.now && !whole).map((s) => s.name);
  const removed = sides.filter((s) => !s.shared && s.old && !s.now && !clusterRemoved).map((s) => s.name);
  const pools = sides.map((s) => reviewPool(s, whole, { added, removed, clusterRemoved }));
  const first = pools.find((p) => p.status === 'rolls' && !sides.find((s) => s.name === p.name)?.shared);
  const firstNow = first && sides.find((s) => s.name === first.name)?.now;
  return { pools, ...(firstNow ? { rolling: groupSettings(firstNow.template) } : {}) };
}

/** The other pools of the change, for what a pool's removal waits for. */
interface Siblings {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly clusterRemoved: boolean;
}

function reviewPool(s: PoolSides, whole: boolean, siblings: Siblings): PoolReview {
  const checksum = { base: s.old?.config?.checksum ?? null, head: s.now?.config?.checksum ?? null };
  const base = whole ? undefined : s.old;
  const config: ConfigDiff | null =
    s.shared || (checksum.base === checksum.head && !whole)
      ? null
      : diffConfigs(base?.config, s.now?.config, !base ? { maxLines: 8 } : {});
  const entry = (
    status: PoolStatus,
    why: string,
    reasons: readonly string[],
    changes: TemplateChanges | null,
  ): PoolReview => ({
    name: s.name,
    stackName: s.stackName,
    shared: s.shared,
    status,
    // A removed pool's nodes go with its stack: a roll of that pool, unless only the object went (its stacks stay).
    rolls: status === 'rolls' || (status === 'removed' && !siblings.clusterRemoved),
    why,
    rollReasons: reasons,
    checksum,
    capacity: groupSettings((s.now ?? s.old)?.template).capacity,
    // The shared stack's diff is the cluster's own (`template`); a pool's own stack carries its diff here.
    template: changes && !s.shared ? templateOf(changes) : null,
    // Likewise its node config diff: the shared stack's is the cluster's own `config`.
    config: status === 'removed' || s.shared ? null : config,
  });
  if (!s.now) {
    if (siblings.clusterRemoved)
      return entry(
        'removed',
        `the cluster object is gone from the head; the reconciler does not delete ${s.stackName} for it: its nodes keep running until the stack is deleted explicitly`,
        [],
        null,
      );
    const removal = removalWords(s, siblings.added);
    return entry('removed', removal.why, [removal.reason], null);
  }
  if (!base) {
    const changes = diffTemplates({}, s.now.template, s.now.logicalIdPaths);
    const first = siblings.removed.length
      ? `; it is created and Ready before the stack of pool ${siblings.removed.join(', pool ')} is deleted`
      : '';
    return entry(
      'added',
      `${s.stackName} is created with its own group: no running node is replaced${first}`,
      [],
      changes,
    );
  }
  const changes = diffTemplates(base.template, s.now.template, s.now.logicalIdPaths);
  const reasons = rollReasons(changes, checksum, { base: base.template, head: s.now.template });
  if (reasons.length) return entry('rolls', reasons.join('; '), reasons, changes);
  const own = changes.resources.length;
  if (checksum.base !== checksum.head)
    return entry('changes', 'its node config changed, its launch template did not: no node is replaced', [], changes);
  // The shared stack's other resources (listeners, rules) are the cluster's: they do not change the default pool.
  if (changes.empty || s.shared)
    return entry(
      'unchanged',
      `its launch template and node config (${checksum.head ? checksum.head.slice(0, 12) : 'none'}) are unchanged`,
      [],
      changes,
    );
  return entry(
    'changes',
    `${own} resource${own === 1 ? '' : 's'} of ${s.stackName} change${own === 1 ? 's' : ''} in place; its launch template and node config do not, so no node is replaced`,
    [],
    changes,
  );
}

/** A pool's nodes by the sizes its group had at base: `its 3 nodes` (desired, or min = max), else `its nodes (2–4)`. */
function nodesOf(capacity: Capacity | null): string {
  if (!capacity) return 'its nodes';
  const exact = capacity.desired ?? (capacity.min !== null && capacity.min === capacity.max ? capacity.min : null);
  if (exact !== null) return `its ${exact} node${exact === 1 ? '' : 's'}`;
  return `its nodes (${capacity.min ?? '?'}–${capacity.max ?? '?'})`;
}

/**
 * What removing a pool from the object does: the reconciler deletes its stack, and with it its group and nodes, once
 * the pools added beside it are created and the cluster's other stacks are settled (tasks/pool-removal.ts). A drain
 * hook inline in the group (this release: constructs/node-drain.ts) holds each node for the handler while the group
 * is deleted; a hook resource of its own (a pool stack of an earlier release) names the group, so CloudFormation
 * deletes it before the group and the nodes are not drained on their way out.
 */
function removalWords(s: PoolSides, added: readonly string[]): { why: string; reason: string } {
  const { rollingUpdate, capacity } = groupSettings(s.old?.template);
  const nodes = nodesOf(capacity);
  const after = added.length
    ? `pool ${added.join(', pool ')} (added) ${added.length === 1 ? 'is' : 'are'} created and Ready and `
    : '';
  const drain = !rollingUpdate?.drained
    ? ''
    : hookInGroup(s.old?.template)
      ? ', each drained first (its drain hook goes with its group)'
      : '; CloudFormation deletes its drain hook before its group, so they are not drained: drain them first';
  return {
    why: `${nodes} are terminated when the reconciler deletes ${s.stackName}, once ${after}the cluster's other stacks are settled and Ready${drain}`,
    reason: `${nodes} are terminated when its stack is deleted`,
  };
}

/** The group's termination hook is inline in it (LifecycleHookSpecificationList): it lasts until the group is gone. */
function hookInGroup(template: unknown): boolean {
  const resources = Object.values((template as { Resources?: Record<string, unknown> } | undefined)?.Resources ?? {});
  return resources.some((r) => {
    const g = r as { Type?: unknown; Properties?: { LifecycleHookSpecificationList?: unknown } };
    const hooks = g.Properties?.LifecycleHookSpecificationList;
    return (
      g.Type === 'AWS::AutoScaling::AutoScalingGroup' &&
      Array.isArray(hooks) &&
      hooks.some(
        (h) => (h as { LifecycleTransition?: unknown }).LifecycleTransition === 'autoscaling:EC2_INSTANCE_TERMINATING',
      )
    );
  });
}

function templateOf(c: TemplateChanges): PoolReview['template'] {
  // The diff engine colours with chalk on a colour terminal.
  const text = stripColours(c.text);
  return { resources: c.resources, outputs: c.outputs, sections: c.sections, text };
}

/** `pools: spot rolls; system, arm unchanged` (the pools' part of a cluster's verdict). */
export function poolsLine(pools: readonly PoolReview[]): string {
  const by = new Map<PoolStatus, string[]>();
  for (const p of pools) by.set(p.status, [...(by.get(p.status) ?? []), p.name]);
  const words: Record<PoolStatus, string> = {
    rolls: 'roll',
    changes: 'change in place',
    added: 'added',
    removed: 'removed',
    unchanged: 'unchanged',
  };
  const order: PoolStatus[] = ['rolls', 'changes', 'added', 'removed', 'unchanged'];
  const parts = order
    .filter((st) => by.has(st))
    .map((st) => {
      const names = by.get(st) ?? [];
      const one = names.length === 1;
      const word = st === 'rolls' && one ? 'rolls' : st === 'changes' && one ? 'changes in place' : words[st];
      return `${names.join(', ')} ${word}`;
    });
  return `pools: ${parts.join('; ')}`;
}
