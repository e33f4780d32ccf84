import { StackSlots } from '../workflow/context';

/**
 * Stacks in progress across the fleet: --concurrency bounds these, so a 30-minute roll holds a slot, never a worker.
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
  constructor(private readonly limit: number) {}
  public tryAcquire(cluster: string): boolean {
    if (this.held.has(cluster)) return true;
    if (this.held.size >= this.limit) return false;
    this.held.set(cluster, false);
    return true;
  }
  public observed(cluster: string, inProgress: boolean): void {
    this.looked.add(cluster);
    if (inProgress) this.held.set(cluster, true);
    else this.held.delete(cluster);
  }
  /** A reconcile of `cluster` begins: whether it looks at the stack (observed) is known when it ends. */
  public begin(cluster: string): void {
    this.looked.delete(cluster);
  }
  /** The reconcile of `cluster` under way (or just ended) looked at its stack. */
  public lookedAt(cluster: string): boolean {
    return this.looked.has(cluster);
  }
  /** A reconcile of `cluster` ends (however it ends): its slot goes back unless its stack is in progress. */
  public reconciled(cluster: string): void {
    if (this.held.get(cluster) !== true) this.held.delete(cluster);
  }
  /** The object is gone (deleted, or outside this daemon's selector): whatever it held goes back. */
  public release(cluster: string): void {
    this.held.delete(cluster);
    this.looked.delete(cluster);
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
