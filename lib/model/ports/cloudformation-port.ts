/**
 * What the reconciler needs from CloudFormation, and nothing more. The SDK
 * adapter implements it against AWS (or any compatible endpoint); tests also
 * use a deterministic fake for what an emulator cannot do (rollbacks,
 * throttling, stuck stacks).
 */

export interface StackSummary {
  readonly name: string;
  readonly id: string;
  readonly status: string;
  readonly statusReason?: string;
  /** Output key → value; a key the template does not declare (or an emulator dropped) is absent. */
  readonly outputs: Readonly<Partial<Record<string, string>>>;
  /** When the template last changed (ISO 8601, DescribeStacks' LastUpdatedTime); undefined for a stack never updated. */
  readonly lastUpdated?: string;
  /** The stack's tags (DescribeStacks); undefined where the read does not carry them (ListStacks), `{}` for none. */
  readonly tags?: Readonly<Record<string, string>>;
}

export interface StackEvent {
  readonly id: string;
  readonly timestamp: Date;
  readonly logicalId: string;
  readonly resourceType: string;
  readonly status: string;
  readonly reason?: string;
}

export interface ChangeSetRequest {
  readonly stackName: string;
  readonly changeSetName: string;
  readonly type: 'CREATE' | 'UPDATE';
  /** Exactly one of templateBody (≤ 51,200 bytes) and templateUrl. */
  readonly templateBody?: string;
  readonly templateUrl?: string;
  readonly capabilities: readonly string[];
  readonly tags: Readonly<Record<string, string>>;
  readonly description: string;
  /** Idempotency token, derived from the cluster and the inputs. */
  readonly clientToken: string;
  /** CloudWatch alarms that roll the update back, watched during it and for `monitoringTimeMinutes` after. @default none */
  readonly rollbackConfiguration?: RollbackConfiguration;
}

export interface RollbackConfiguration {
  /** Alarm ARNs (at most 5). */
  readonly alarmArns: readonly string[];
  readonly monitoringTimeMinutes: number;
}

export interface ChangeSetInfo {
  readonly id: string;
  readonly name: string;
  /** CREATE_PENDING, CREATE_IN_PROGRESS, CREATE_COMPLETE, FAILED, DELETE_* */
  readonly status: string;
  /** UNAVAILABLE, AVAILABLE, EXECUTE_IN_PROGRESS, EXECUTE_COMPLETE, EXECUTE_FAILED, OBSOLETE */
  readonly executionStatus?: string;
  readonly statusReason?: string;
  readonly changes: number;
}

export interface WaitOptions {
  /** Give up waiting (not the stack operation) after this long; the next pass resumes. */
  readonly timeoutMs: number;
  /** Called with each new stack event, oldest first. */
  readonly onEvent?: (e: StackEvent) => void;
  /** Stop waiting at once (SIGTERM): the stack goes on, the next start resumes the wait. @default never */
  readonly signal?: AbortSignal;
}

export interface CloudFormationPort {
  /** Every stack of the account/region, in as few paginated calls as possible. */
  listStacks(): Promise<Map<string, StackSummary>>;
  /**
   * Only the stacks in an `*_IN_PROGRESS` state (ListStacks with a status filter, 100 per page), without outputs: what
   * a poll of stacks in progress needs. A stack that left the list is described on its own.
   */
  listStacksInProgress(): Promise<Map<string, StackSummary>>;
  describeStack(name: string): Promise<StackSummary | undefined>;
  createChangeSet(req: ChangeSetRequest): Promise<string>;
  describeChangeSet(stackName: string, changeSetName: string): Promise<ChangeSetInfo | undefined>;
  /** Waits until the change set is created (or failed) and describes it. */
  waitForChangeSet(stackName: string, changeSetName: string, timeoutMs: number): Promise<ChangeSetInfo>;
  executeChangeSet(stackName: string, changeSetName: string, clientToken: string): Promise<void>;
  deleteChangeSet(stackName: string, changeSetName: string): Promise<void>;
  /** Events after `afterEventId` (exclusive), oldest first; all recent ones when undefined. */
  stackEvents(stackName: string, afterEventId?: string): Promise<StackEvent[]>;
  /** The events of the stack's latest operation, oldest first: every page back to its "User Initiated" start. */
  operationEvents(stackName: string): Promise<StackEvent[]>;
  /** The live template's body (for a stack whose listing leaves its outputs out), undefined when it has none. */
  getTemplate(stackName: string): Promise<string | undefined>;
  /** Waits until the stack leaves *_IN_PROGRESS, or the timeout passes; returns what it last saw. */
  waitForStack(stackName: string, opts: WaitOptions): Promise<StackSummary | undefined>;
  deleteStack(stackName: string, clientToken: string): Promise<void>;
  continueUpdateRollback(stackName: string, clientToken: string): Promise<void>;
  /**
   * The account's stack quota in this region (DescribeAccountLimits `StackLimit`), undefined when CloudFormation does
   * not say. Optional: `validate` reads it only when asked to (it is offline by default, with AWS's default of 2000).
   */
  stackLimit?(): Promise<number | undefined>;
}

export const isInProgress = (status: string) => status.endsWith('_IN_PROGRESS');
export const isComplete = (status: string) =>
  status === 'CREATE_COMPLETE' || status === 'UPDATE_COMPLETE' || status === 'IMPORT_COMPLETE';
/** Stable, but the last operation did not apply: the previous template (and checksum) is live. */
export const isRolledBack = (status: string) =>
  status === 'UPDATE_ROLLBACK_COMPLETE' || status === 'IMPORT_ROLLBACK_COMPLETE';

/** The first failing resource of an operation, from its events: what an operator needs to read. */
export function firstFailure(events: readonly StackEvent[]): StackEvent | undefined {
  return (
    events.find((e) => /_FAILED$/.test(e.status) && e.reason && !/cancelled/i.test(e.reason)) ??
    events.find((e) => /_FAILED$/.test(e.status))
  );
}

/** Every CloudFormation stack status that means an operation is under way (ListStacks' StackStatusFilter). */
export const IN_PROGRESS_STATUSES = [
  'CREATE_IN_PROGRESS',
  'DELETE_IN_PROGRESS',
  'ROLLBACK_IN_PROGRESS',
  'UPDATE_COMPLETE_CLEANUP_IN_PROGRESS',
  'UPDATE_IN_PROGRESS',
  'UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS',
  'UPDATE_ROLLBACK_IN_PROGRESS',
  'REVIEW_IN_PROGRESS',
  'IMPORT_IN_PROGRESS',
  'IMPORT_ROLLBACK_IN_PROGRESS',
] as const;
