import { CloudFormationPort, isInProgress, StackSummary } from '../../../model/ports/cloudformation-port';
import { ClusterRecord } from '../../../model/ports/cluster-store';
import { poolStackName, workerStackName } from '../../../core/naming';
import { DEFAULT_POLL_MS, poolSlot, ReconcilerDeps } from '../workflow/context';
import { Outcome } from '../workflow/outcomes';
import { accountOf } from '../compose/workflow';
import { FleetSlots } from './fleet-slots';
import { regionOf, wasInProgress } from './stack-listings';

// Kept apart from the controller's reconciles: the one place a slot follows a stack that the workflow did not look at
// (the workflow's own looks keep the slots of the stacks it saw). It describes those stacks itself, so --concurrency
// still bounds a roll whose cluster stopped before its observe, across edits and restarts.

/** A stack CloudFormation is working on (REVIEW_IN_PROGRESS is a change set's empty stack: nothing rolls). */
const inProgress = (s: StackSummary | null | undefined): boolean =>
  Boolean(s && isInProgress(s.status) && s.status !== 'REVIEW_IN_PROGRESS');

/** Follows, for the controller that owns the slots, the stacks a reconcile ended without looking at. */
export class UnlookedStacks {
  constructor(
    private readonly deps: ReconcilerDeps,
    private readonly slots: FleetSlots,
  ) {}

  /**
   * A reconcile that stopped before it looked at the stack (an invalid object, a template that does not render) still
   * leaves the slot as the stack is: a roll under way keeps its slot, and a restarted daemon learns it here, so
   * --concurrency still bounds it; the cluster is looked at again after a poll until the roll ends and the slot goes
   * back. (Without this, an object edited to invalid mid-roll held its slot for good, and one invalid after a restart
   * held none.)
   */
  public async follow(
    record: ClusterRecord,
    listed: { readonly stack: StackSummary | null | undefined; readonly described: boolean },
    outcome: Outcome,
  ): Promise<Outcome> {
    const name = record.name;
    const pools = await this.followPools(record, outcome);
    if (this.slots.lookedAt(name)) return pools;
    outcome = pools;
    let stack = listed.stack;
    // A roll recorded as under way is not shown ended by a listing (it may be older than the roll): the stack is described.
    if (!inProgress(stack) && !listed.described && wasInProgress(record)) stack = await this.describe(record);
    if (stack === undefined) return outcome;
    // Our change set recorded as executing, and a read that does not show the stack in progress (one taken before
    // the execution began: the change set's empty REVIEW_IN_PROGRESS stack, or none): the change set itself says.
    const executing = record.status?.controller?.executing;
    const rolling = inProgress(stack) || (executing ? await this.executes(record, executing.changeSet) : false);
    if (rolling === undefined) return outcome;
    this.slots.observed(name, rolling);
    return this.pollWhile(rolling, outcome);
  }

  /** Whether the change set is executing now (EXECUTE_IN_PROGRESS); undefined when it could not be read. */
  private executes(record: ClusterRecord, changeSet: string): Promise<boolean | undefined> {
    return this.read(record, (cfn) =>
      cfn
        .describeChangeSet(workerStackName(record.name), changeSet)
        .then((cs) => cs?.executionStatus === 'EXECUTE_IN_PROGRESS'),
    );
  }

  /**
   * As follow, for the pools' own stacks: one whose roll holds a slot and that this reconcile did not look at
   * (an invalid object, a shared stack that stopped the pools) is described, and its slot goes back once it settles.
   */
  private async followPools(record: ClusterRecord, outcome: Outcome): Promise<Outcome> {
    let rolling = false;
    for (const pool of this.slots.poolsInProgress(record.name)) {
      const key = poolSlot(record.name, pool);
      if (this.slots.lookedAt(key)) continue;
      const stack = await this.describe(record, poolStackName(record.name, pool));
      if (stack === undefined) continue;
      const busy = inProgress(stack);
      this.slots.observed(key, busy);
      rolling ||= busy;
    }
    return this.pollWhile(rolling, outcome);
  }

  /** The outcome, requeued at the poll interval while a stack it follows is still in progress. */
  private pollWhile(rolling: boolean, outcome: Outcome): Outcome {
    if (!rolling) return outcome;
    return {
      ...outcome,
      requeueAfterMs: outcome.requeueAfterMs ?? this.deps.pollMs ?? DEFAULT_POLL_MS,
      stackInProgress: true,
    };
  }

  /** One of the cluster's stacks as CloudFormation describes it now: null when absent, undefined when it could not be read. */
  private describe(
    record: ClusterRecord,
    stackName = workerStackName(record.name),
  ): Promise<StackSummary | null | undefined> {
    return this.read(record, (cfn) => cfn.describeStack(stackName).then((st) => st ?? null));
  }

  /** A read of the cluster's account and region: undefined when it has no region or the read failed. */
  private read<T>(record: ClusterRecord, call: (cfn: CloudFormationPort) => Promise<T>): Promise<T | undefined> {
    const region = regionOf(record);
    if (!region) return Promise.resolve(undefined);
    return call(this.deps.aws(region, accountOf(record.raw)).cfn).catch(() => undefined);
  }
}
