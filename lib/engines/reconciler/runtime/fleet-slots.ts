import { StackSlots } from '../workflow/context';

/**
 * Stacks in progress across the fleet (a cluster with pools in stacks of their own holds one slot per stack, keyed
 * `<cluster>/<pool>`; the shared stack's key is the cluster's name): --concurrency bounds these, so a 30-minute roll holds a slot, never a worker.
 * One owner, the controller: a reconcile may take a slot (acquire-slot, before it synthesizes), and the controller
 * gives it back when that reconcile ends, on every exit (success, error, stall, pause, invalid object), unless the
 * cluster's stack is then in progress: seen so live (observe, record-execution) or just started by this reconcile
 * (execute, recover). A slot held across reconciles is given back by the next reconcile that does not see the stack in
 * progress, or when the object is gone (deleted, or no longer this daemon's). No task ever releases one.
 * Level-based: a restarted daemon learns the stacks in progress from its first look at each.
 */
export class FleetSlots implements StackSlots {
  /** Cluster → its stack is in progress (true), or a reconcile of it holds the slot to start one (false). */
  private readonly held = new Map<string, boolean>();
  /** Clusters whose reconcile under way has looked at the stack. */
  private readonly looked = new Set<string>();
  /**
   * The keys of `held` and `looked` by cluster, in the order `held` has them: each reconcile asks about its own
   * cluster's keys, and a scan of every key (thousands in a fleet of pools) per reconcile made the fleet quadratic.
   */
  private readonly heldBy = new Map<string, Set<string>>();
  private readonly lookedBy = new Map<string, Set<string>>();
  constructor(private readonly limit: number) {}
  public tryAcquire(cluster: string): boolean {
    if (this.held.has(cluster)) return true;
    if (this.held.size >= this.limit) return false;
    this.hold(cluster, false);
    return true;
  }
  public observed(cluster: string, inProgress: boolean): void {
    this.looked.add(cluster);
    index(this.lookedBy, cluster).add(cluster);
    if (inProgress) this.hold(cluster, true);
    else this.unhold(cluster);
  }
  /** A reconcile of `cluster` begins: whether it looks at each of its stacks (observed) is known when it ends. */
  public begin(cluster: string): void {
    for (const key of this.lookedBy.get(cluster) ?? []) this.looked.delete(key);
    this.lookedBy.delete(cluster);
  }
  /** The pools of `cluster` whose own stacks hold a slot as in progress (the keys `<cluster>/<pool>`, by pool). */
  public poolsInProgress(cluster: string): string[] {
    return this.keysOf(cluster).flatMap((k) =>
      k !== cluster && this.held.get(k) ? [k.slice(cluster.length + 1)] : [],
    );
  }
  /** The reconcile of `cluster` under way (or just ended) looked at its stack. */
  public lookedAt(cluster: string): boolean {
    return this.looked.has(cluster);
  }
  /** A reconcile of `cluster` ends (however it ends): each of its stacks' slots goes back unless that stack is in progress. */
  public reconciled(cluster: string): void {
    for (const key of this.keysOf(cluster)) if (this.held.get(key) !== true) this.unhold(key);
  }
  /** The object is gone (deleted, or outside this daemon's selector): whatever any of its stacks held goes back. */
  public release(cluster: string): void {
    for (const key of this.keysOf(cluster)) this.unhold(key);
    this.begin(cluster);
  }
  /** The slot keys of a cluster's stacks: its name (the shared stack), and `<cluster>/<pool>` for each pool's own stack. */
  private keysOf(cluster: string): string[] {
    return [...(this.heldBy.get(cluster) ?? [])];
  }
  private hold(key: string, inProgress: boolean): void {
    this.held.set(key, inProgress);
    index(this.heldBy, key).add(key);
  }
  private unhold(key: string): void {
    this.held.delete(key);
    const keys = this.heldBy.get(clusterOf(key));
    keys?.delete(key);
    if (keys?.size === 0) this.heldBy.delete(clusterOf(key));
  }
  /** Slots held: stacks in progress, and reconciles about to start one. */
  public get size(): number {
    return this.held.size;
  }
  public names(): ReadonlySet<string> {
    return new Set(this.held.keys());
  }
  /** The clusters whose stack is in progress (seen so, or started by us). */
  public inProgress(): ReadonlySet<string> {
    return new Set([...this.held].filter(([, busy]) => busy).map(([name]) => name));
  }
}

/** The cluster of a slot key: the key itself, or what comes before the '/' of `<cluster>/<pool>` (see poolSlot). */
function clusterOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/** The set of keys of the key's cluster in `by`, made when there is none. */
function index(by: Map<string, Set<string>>, key: string): Set<string> {
  const cluster = clusterOf(key);
  let keys = by.get(cluster);
  if (!keys) by.set(cluster, (keys = new Set()));
  return keys;
}
