import {
  ClusterStatus,
  Condition,
  ControllerBookkeeping,
  EMPTY_STATUS,
  getCondition,
  PoolStatus,
  setConditions,
} from '../../../model/cluster/schema/status';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import type { ReasonedCondition } from './conditions';
import type { Logger } from '../../../core/logger';
import type { ClusterStore } from '../../../model/ports/cluster-store';
import type { EventSink } from './events';
import { clusterEventsFor } from './events';

/** The fields of a status a task may set directly (conditions and the controller's bookkeeping go their own ways). */
type StatusPatch = Partial<Omit<ClusterStatus, 'conditions' | 'controller'>>;

/**
 * What tasks see of the status: the status as this reconcile has changed it so far (read back by the tasks after),
 * and `stage` to change it. Nothing here writes: the workflow writes the staged status once, at the end of the
 * reconcile, on every exit (see reconcileCluster). The one exception is `writeBeforeMutation`, before a stack operation the reconciler counts.
 */
export interface PendingStatus {
  /** The status of the stack this workflow run reconciles: the top level (the shared stack), or a pool's entry. */
  readonly status: ClusterStatus;
  /** The whole pending status of the object (the top level and every pool's entry): read-only for a task. */
  readonly clusterStatus: ClusterStatus;
  readonly controller: ControllerBookkeeping;
  /** Merges `patch` (and `bookkeeping` into status.controller) and sets `conditions`, in the pending status only. */
  stage(
    patch: StatusPatch,
    conditions?: readonly ReasonedCondition[],
    bookkeeping?: Partial<ControllerBookkeeping>,
  ): void;
  /**
   * Writes the pending status now, before a stack operation the reconciler counts (ExecuteChangeSet; recovery's
   * DeleteStack and ContinueUpdateRollback): what is about to run (status.controller.executing, recoveryAttempts) must
   * be durable before AWS is touched, so that a crash or a lost leadership right after the call still knows whose
   * operation the stack is running and counts it: retries stay bounded across restarts. A stale read fails here (a
   * ConflictError) and nothing is called. The only write a task may cause (tasks/apply.ts only).
   */
  writeBeforeMutation(): Promise<void>;
}

/**
 * Owns a cluster's status during one reconcile: tasks stage changes (see PendingStatus), the workflow writes them
 * once. Conditions are set with the object's generation; an unchanged status writes nothing (an unchanged pass costs
 * no write). Never writes in a dry run (nothing is staged either, as nothing was ever written there). Events follow
 * a written status only: eventsFor(what was written before, what is written now).
 */

/** What the recorder needs of the reconciler's dependencies (a subset of ReconcilerDeps, so that context.ts, which
 * holds a recorder, and this file do not import each other). */
export interface RecorderDeps {
  readonly store: Pick<ClusterStore, 'writeStatus'>;
  readonly dryRun: boolean;
  readonly now: () => Date;
  readonly events?: EventSink;
  readonly log: Logger;
}

export class StatusRecorder implements PendingStatus {
  private pending: ClusterStatus;
  private written: ClusterStatus;
  private version: string;
  /** The object's pools with stacks of their own, as this reconcile knows them (expectPools). */
  private pools: readonly string[] = [];

  constructor(
    private readonly record: ClusterRecord,
    private readonly deps: RecorderDeps,
  ) {
    this.pending = this.written = record.status ?? EMPTY_STATUS;
    this.version = record.resourceVersion;
  }

  public get status(): ClusterStatus {
    return this.pending;
  }

  public get controller(): ControllerBookkeeping {
    return this.pending.controller ?? {};
  }

  public get clusterStatus(): ClusterStatus {
    return this.pending;
  }

  /** The view of one pool's entry (status.pools[]) for the workflow run of that pool's stack. */
  public pool(name: string, stackName: string): PendingStatus {
    return new PoolStatusView(this, name, stackName);
  }

  /** A pool's entry as it is pending now. */
  public poolEntry(name: string): PoolStatus | undefined {
    return this.pending.pools?.find((p) => p.name === name);
  }

  /** As `stage`, into the entry of pool `name` (created on first use, in the order pools are reconciled). */
  public stagePool(
    name: string,
    stackName: string,
    patch: StatusPatch,
    conditions: readonly ReasonedCondition[] = [],
    bookkeeping?: Partial<ControllerBookkeeping>,
  ): void {
    if (this.deps.dryRun) return;
    const old = this.poolEntry(name) ?? { name, stackName, conditions: [] };
    const controller = bookkeeping ? dropUndefined({ ...(old.controller ?? {}), ...bookkeeping }) : old.controller;
    const next: PoolStatus = dropUndefined({
      ...old,
      ...poolFields(patch),
      name,
      stackName,
      controller: controller && Object.keys(controller).length ? controller : undefined,
      conditions: setConditions(old.conditions, conditions, this.record.generation, this.deps.now()),
    });
    const pools = this.pending.pools ?? [];
    this.pending = {
      ...this.pending,
      pools: pools.some((p) => p.name === name) ? pools.map((p) => (p.name === name ? next : p)) : [...pools, next],
    };
  }

  /**
   * Once every stack of the cluster was looked at: the cluster-wide fields (clusterWide), and the entries of `pools`
   * only (a removed pool's goes once its stack is gone). A single-pool object is left exactly as its workflow staged it.
   */
  public finish(pools: readonly string[], keep: ReadonlySet<string> = new Set()): void {
    if (this.deps.dryRun) return;
    if (!pools.length && !this.pending.pools?.length) return;
    const entries = (this.pending.pools ?? []).filter((p) => pools.includes(p.name) || keep.has(p.name));
    this.pending = dropUndefined({ ...this.clusterWide(pools, entries), pools: entries.length ? entries : undefined });
  }

  /**
   * The pools of the object (each with a stack of its own), as far as this reconcile knows them: a write before a
   * stack operation (writeBeforeMutation) then says of the whole cluster what `finish` would, so that no write, not
   * even the one before a pool's ExecuteChangeSet, records the cluster Ready while one of its pools is not.
   */
  public expectPools(pools: readonly string[]): void {
    this.pools = pools;
  }

  /**
   * The pending status with the cluster-wide fields the pools' entries give: `poolsReady` ("n/m" of its stacks), the
   * top-level Ready True only when every stack is Ready (else False, naming the pools that are not), and Stalled True
   * when a pool's is.
   */
  private clusterWide(pools: readonly string[], entries: readonly PoolStatus[]): ClusterStatus {
    const entry = (p: string) => entries.find((e) => e.name === p) ?? EMPTY_STATUS;
    const notReady = pools.filter((p) => getCondition(entry(p), 'Ready')?.status !== 'True');
    const sharedReady = getCondition(this.pending, 'Ready')?.status === 'True';
    const ready = (sharedReady ? 1 : 0) + pools.length - notReady.length;
    let conditions = this.pending.conditions;
    if (sharedReady && notReady.length) {
      const why = notReady.map((p) => `${p} (${getCondition(entry(p), 'Ready')?.reason ?? 'not reconciled yet'})`);
      conditions = this.override(conditions, 'Ready', 'False', 'PoolsNotReady', `pools not ready: ${why.join(', ')}`);
    }
    // A pool that stopped needs a human as much as the shared stack would: the top level says so (with the pool's
    // reason), so that an alert on Stalled, and the fleet rollout's halt, see it.
    const stopped = pools.filter((p) => getCondition(entry(p), 'Stalled')?.status === 'True');
    if (getCondition(this.pending, 'Stalled')?.status !== 'True' && stopped.length) {
      const first = getCondition(entry(stopped[0]), 'Stalled');
      const why = stopped.map((p) => `pool ${p}: ${getCondition(entry(p), 'Stalled')?.message ?? ''}`).join('; ');
      conditions = this.override(conditions, 'Stalled', 'True', first?.reason ?? 'ReconcileFailed', why);
    }
    return dropUndefined({
      ...this.pending,
      conditions,
      poolsReady: pools.length ? `${ready}/${pools.length + 1}` : undefined,
    });
  }

  /**
   * `conditions` with the condition of `type` set to what the cluster's stacks together say; its time of transition
   * is the written one's when the status is the same, so a pass that changes nothing writes nothing.
   */
  private override(
    conditions: readonly Condition[],
    type: Condition['type'],
    status: Condition['status'],
    reason: string,
    message: string,
  ): Condition[] {
    const before = getCondition(this.written, type);
    const target: Condition = {
      type,
      status,
      reason,
      message,
      lastTransitionTime: before?.status === status ? before.lastTransitionTime : this.deps.now().toISOString(),
      observedGeneration: this.record.generation,
    };
    return [...conditions.filter((c) => c.type !== type), target].sort((a, b) => (a.type < b.type ? -1 : 1));
  }

  public stage(
    patch: StatusPatch,
    conditions: readonly ReasonedCondition[] = [],
    bookkeeping?: Partial<ControllerBookkeeping>,
  ): void {
    if (this.deps.dryRun) return;
    const controller = bookkeeping ? dropUndefined({ ...this.controller, ...bookkeeping }) : this.pending.controller;
    this.pending = dropUndefined({
      ...this.pending,
      ...patch,
      controller: controller && Object.keys(controller).length ? controller : undefined,
      conditions: setConditions(this.pending.conditions, conditions, this.record.generation, this.deps.now()),
    });
  }

  public writeBeforeMutation(): Promise<void> {
    // What is written says of the whole cluster what `finish` would, mid-reconcile (the pools not looked at yet keep
    // their entries as recorded). It is not staged: the reconcile goes on from what its stacks said, and `finish`
    // sums them up again at its end.
    return this.flush(this.pools.length ? this.clusterWide(this.pools, this.pending.pools ?? []) : this.pending);
  }

  /** Writes the pending status if it changed; the workflow calls this once, at the end of every reconcile. */
  public async flush(next: ClusterStatus = this.pending): Promise<void> {
    if (this.deps.dryRun || JSON.stringify(next) === JSON.stringify(this.written)) return;
    try {
      this.version = await this.deps.store.writeStatus(this.record.name, next, this.version);
    } catch (e) {
      // Not written, so not true: what the error path stages goes on top of what is on record (a failed write before
      // ExecuteChangeSet leaves no `executing` behind for a change set that was never executed).
      this.discard();
      throw e;
    }
    const before = this.written;
    this.written = next;
    // Events never hold the reconcile up (a lost event is only a lost event).
    const sink = this.deps.events;
    if (!sink) return;
    for (const e of clusterEventsFor(before, next)) {
      sink
        .emit(this.record.name, e)
        .catch((err: unknown) =>
          this.deps.log.warn(
            { cluster: this.record.name, event: e.reason, err: String(err) },
            'could not record the event',
          ),
        );
    }
  }

  /** Drops what was staged but not written (a write that failed: the next reconcile starts from a fresh read). */
  public discard(): void {
    this.pending = this.written;
  }
}

/** The fields of a status that a pool's entry has (all but the cluster-wide ones). */
function poolFields(patch: StatusPatch): Partial<PoolStatus> {
  const { pools: _pools, poolsReady: _ready, ...rest } = patch;
  return rest;
}

/** A pool's entry as the status of its own workflow run: the tasks read and stage it as they do the top level. */
class PoolStatusView implements PendingStatus {
  constructor(
    private readonly root: StatusRecorder,
    private readonly name: string,
    private readonly stackName: string,
  ) {}

  public get status(): ClusterStatus {
    const entry = this.root.poolEntry(this.name);
    if (!entry) return { stackName: this.stackName, conditions: [] };
    const { name: _name, ...rest } = entry;
    return rest;
  }

  public get controller(): ControllerBookkeeping {
    return this.status.controller ?? {};
  }

  public get clusterStatus(): ClusterStatus {
    return this.root.clusterStatus;
  }

  public stage(
    patch: StatusPatch,
    conditions?: readonly ReasonedCondition[],
    bookkeeping?: Partial<ControllerBookkeeping>,
  ): void {
    this.root.stagePool(this.name, this.stackName, patch, conditions, bookkeeping);
  }

  public writeBeforeMutation(): Promise<void> {
    return this.root.writeBeforeMutation();
  }
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
