import {
  ChangeSetInfo,
  ChangeSetRequest,
  CloudFormationPort,
  isInProgress,
  StackEvent,
  StackSummary,
  WaitOptions,
} from '../../lib/model/ports/cloudformation-port';
import { FakeClock } from './fake-ports';
import { NodeHealth, signalFailure } from './fake-signals';

/**
 * A deterministic, in-memory CloudFormation for what an emulator cannot do:
 * rollbacks, stuck operations, UPDATE_ROLLBACK_FAILED, throttling. A state
 * machine per stack; time only moves when `waitForStack` polls (each poll
 * advances the shared FakeClock by `pollMs`), so every run is the same run.
 */

/** The resource an operation fails on, as its stack event names it. */
export interface FailingResource {
  readonly logicalId: string;
  readonly resourceType: string;
  readonly reason: string;
}

/**
 * What the next operation on a stack does. `polls` is how many waitForStack
 * polls it stays *_IN_PROGRESS (0: it is terminal when the call returns).
 *   complete: CREATE/UPDATE/DELETE_COMPLETE, UPDATE_ROLLBACK_COMPLETE for a ContinueUpdateRollback;
 *   fail: create → ROLLBACK_COMPLETE, update → UPDATE_ROLLBACK_COMPLETE (old template and outputs kept),
 *         delete → DELETE_FAILED, continue-rollback → UPDATE_ROLLBACK_FAILED again;
 *   rollback-fails: update → UPDATE_ROLLBACK_FAILED, create → ROLLBACK_FAILED.
 */
export interface Behaviour {
  readonly kind: 'complete' | 'fail' | 'rollback-fails';
  readonly polls: number;
  readonly resource?: FailingResource;
}

export const complete = (polls = 1): Behaviour => ({ kind: 'complete', polls });
export const fail = (resource: FailingResource, polls = 1): Behaviour => ({ kind: 'fail', polls, resource });
export const rollbackFails = (resource: FailingResource, polls = 1): Behaviour => ({
  kind: 'rollback-fails',
  polls,
  resource,
});
/** Stays *_IN_PROGRESS until `release()`. */
export const stuck = (): Behaviour => ({ kind: 'complete', polls: Number.POSITIVE_INFINITY });

export const NO_CHANGES_REASON =
  "The submitted information didn't contain changes. Submit different information to create a change set.";

export const MUTATING = [
  'createChangeSet',
  'executeChangeSet',
  'deleteChangeSet',
  'deleteStack',
  'continueUpdateRollback',
] as const;
const METHODS = [
  'listStacks',
  'listStacksInProgress',
  'describeStack',
  'describeChangeSet',
  'waitForChangeSet',
  'stackEvents',
  'operationEvents',
  'getTemplate',
  'waitForStack',
  ...MUTATING,
] as const;
export type Method = (typeof METHODS)[number];

type Kind = 'create' | 'update' | 'delete' | 'continue';
/** The kind of a stack operation (create, update, delete, continue-rollback), as the hooks below name it. */
export type OperationKind = Kind;

/** An operation as it starts: the template live before it (none before a first create) and the one it applies (none for a delete). */
export interface OperationStart {
  readonly stackName: string;
  readonly kind: OperationKind;
  readonly from?: string;
  readonly to?: string;
}

interface Operation {
  readonly kind: Kind;
  readonly behaviour: Behaviour;
  /** Clock time at which the operation reaches its terminal state (Infinity: stuck until released). */
  readonly endsAt: number;
  /** The template that becomes live if the operation completes. */
  readonly template?: string;
}

interface ChangeSet {
  readonly id: string;
  readonly name: string;
  readonly type: 'CREATE' | 'UPDATE';
  readonly template: string;
  status: string;
  executionStatus: string;
  readonly statusReason?: string;
  readonly changes: number;
  readonly clientToken: string;
  /** The stack's tags from its execution on (CloudFormation applies a change set's tags to the stack). */
  readonly tags: Readonly<Record<string, string>>;
}

interface FakeStack {
  readonly name: string;
  readonly id: string;
  status: string;
  statusReason?: string;
  /** The template that is live (after a rollback: the previous one); undefined before the first create. */
  template?: string;
  outputs: Record<string, string>;
  /** The stack's tags: the creating change set's, then the last executed one's. */
  tags: Record<string, string>;
  /** When the last operation started that changed the template (ISO 8601), as DescribeStacks' LastUpdatedTime. */
  lastUpdated?: string;
  readonly events: StackEvent[];
  readonly changeSets: Map<string, ChangeSet>;
  readonly tokens: Set<string>;
  op?: Operation;
  /** An operation accepted but not started yet (startDelayMs): the stack still shows its old status. */
  pending?: { readonly at: number; readonly kind: Kind; readonly template?: string };
}

export interface SeedOptions {
  readonly status: string;
  /** The live template (its Outputs become the stack's outputs). */
  readonly template?: string;
  /** Resources whose last event failed, e.g. the ones a DELETE_FAILED stack could not delete. */
  readonly failed?: readonly FailingResource[];
  /** The stack's tags (another object's owner tag, or none: a stack an older release made). @default none */
  readonly tags?: Readonly<Record<string, string>>;
}

export interface FakeCloudFormationProps {
  readonly clock: FakeClock;
  readonly region?: string;
  readonly account?: string;
  /** Clock time one waitForStack poll takes. @default 5000 */
  readonly pollMs?: number;
  /** Reads a template CloudFormation would fetch from S3 (TemplateURL). */
  readonly readTemplateUrl?: (url: string) => string;
  /**
   * Request-rate quotas per CloudFormation API, as token buckets on the fake clock (the bench's 1,000-cluster
   * scenario): a call with no token left is throttled (ThrottlingException) and counted in `throttledCalls`.
   * A listing is one DescribeStacks request (and token) per page of 100 stacks, sent one after the other. @default none: nothing is throttled by rate
   */
  readonly quotas?: Readonly<Partial<Record<CfnApi, TokenBucketQuota>>>;
  /**
   * The client's pacing (the daemon's RequestRateLimiter, which the SDK adapter applies in a middleware before each
   * request it sends): called before each request (each page of a listing), it answers the ms to wait, and the clock
   * moves on that far before the request is sent. @default none: every request is sent at once
   */
  readonly pace?: (api: CfnApi) => number;
  /** Clock time each call takes (request latency), so that calls spread over time as real ones do. @default 0 */
  readonly latencyMs?: number;
  /**
   * How far behind the truth the listings (DescribeStacks of the region, ListStacks in progress) are: each stack as
   * it was this long ago, as an eventually consistent read or a cache can show it. DescribeStack by name is always
   * fresh. @default 0
   */
  readonly listingLagMs?: number;
  /**
   * Clock time between ExecuteChangeSet (or DeleteStack) answering and the stack showing *_IN_PROGRESS: meanwhile it
   * shows its old status while the change set is EXECUTE_IN_PROGRESS, as CloudFormation may. @default 0
   */
  readonly startDelayMs?: number;
  /** DescribeStacks reports LastUpdatedTime (moto 5.2.5 does not). @default true */
  readonly reportsLastUpdated?: boolean;
  /** The account's stack quota in the region, as DescribeAccountLimits says it (StackLimit). @default 2000 */
  readonly stackLimit?: number;
}

/** The CloudFormation API a port method calls. */
export type CfnApi =
  | 'DescribeStacks'
  | 'ListStacks'
  | 'DescribeChangeSet'
  | 'CreateChangeSet'
  | 'ExecuteChangeSet'
  | 'DeleteChangeSet'
  | 'DescribeStackEvents'
  | 'GetTemplate'
  | 'DeleteStack'
  | 'ContinueUpdateRollback';

export interface TokenBucketQuota {
  /** Tokens added per second. */
  readonly ratePerSecond: number;
  /** Bucket size: the burst. */
  readonly burst: number;
}

const API_OF: Record<Method, CfnApi> = {
  listStacks: 'DescribeStacks',
  listStacksInProgress: 'ListStacks',
  describeStack: 'DescribeStacks',
  describeChangeSet: 'DescribeChangeSet',
  waitForChangeSet: 'DescribeChangeSet',
  stackEvents: 'DescribeStackEvents',
  operationEvents: 'DescribeStackEvents',
  getTemplate: 'GetTemplate',
  waitForStack: 'DescribeStacks',
  createChangeSet: 'CreateChangeSet',
  executeChangeSet: 'ExecuteChangeSet',
  deleteChangeSet: 'DeleteChangeSet',
  deleteStack: 'DeleteStack',
  continueUpdateRollback: 'ContinueUpdateRollback',
};

export class FakeCloudFormation implements CloudFormationPort {
  /** Every call per method, throttled ones included. */
  public readonly calls = new Map<Method, number>();
  /** Calls refused by a rate quota (see FakeCloudFormationProps.quotas), per API. */
  public readonly throttledCalls = new Map<CfnApi, number>();
  /** Tokens consumed per API (a listing: one per page). */
  public readonly apiRequests = new Map<CfnApi, number>();
  private readonly buckets = new Map<CfnApi, { tokens: number; at: number }>();
  /** Called after each waitForStack poll, with the stack as it is then (tests look at the status file there). */
  public onPoll?: (stack: StackSummary) => void;
  /** Called as each operation starts (the simulator's invariants judge what it replaces, and when). @default none */
  public onBegin?: (op: OperationStart) => void;
  /**
   * Called as a stack reaches a terminal state (an operation's end, an out-of-band change or delete), with its live
   * template then. @default none
   */
  public onSettle?: (stackName: string, status: string, template: string | undefined) => void;
  /**
   * The outcome of a create or update by what it applies, before the stack's scripts and default (the simulator's bad
   * image releases: any stack applying one fails). @default none
   */
  public behaviourOf?: (stackName: string, kind: OperationKind, template: string | undefined) => Behaviour | undefined;
  private readonly stacks = new Map<string, FakeStack>(); // by id, deleted ones too
  private readonly live = new Map<string, string>(); // name → id
  private readonly scripts = new Map<string, Behaviour[]>();
  private readonly defaults = new Map<string, Behaviour>();
  private readonly throttled = new Map<Method, number>();
  private readonly health = new Map<string, NodeHealth>();
  private readonly clock: FakeClock;
  private readonly pollMs: number;
  private seq = 0;
  /** Every state a stack was in, from when (for listings that lag: listingLagMs). */
  private readonly history: Array<{
    readonly at: number;
    readonly id: string;
    readonly live: boolean;
    readonly summary: StackSummary;
  }> = [];
  /** How far behind the truth listings are (see FakeCloudFormationProps.listingLagMs); tests may change it. */
  public listingLagMs: number;
  /** See FakeCloudFormationProps.startDelayMs; tests may change it. */
  public startDelayMs: number;
  /** See FakeCloudFormationProps.reportsLastUpdated; tests may change it. */
  public reportsLastUpdated: boolean;

  constructor(private readonly props: FakeCloudFormationProps) {
    this.clock = props.clock;
    this.pollMs = props.pollMs ?? 5000;
    this.listingLagMs = props.listingLagMs ?? 0;
    this.startDelayMs = props.startDelayMs ?? 0;
    this.reportsLastUpdated = props.reportsLastUpdated ?? true;
  }

  // ---- scripting -------------------------------------------------------------------------

  /** The next operations on `stackName` behave like this, in order; then the default. */
  public script(stackName: string, ...behaviours: Behaviour[]): this {
    this.scripts.set(stackName, [...(this.scripts.get(stackName) ?? []), ...behaviours]);
    return this;
  }

  /** What every unscripted operation on `stackName` does. @default complete(1) */
  public setDefault(stackName: string, behaviour: Behaviour): this {
    this.defaults.set(stackName, behaviour);
    return this;
  }

  /** The first `n` calls of `method` from now throw a ThrottlingException. */
  public throttle(method: Method, n: number): this {
    this.throttled.set(method, n);
    return this;
  }

  /**
   * How the nodes of a stack answer the health signal an operation waits on (a create with a CreationPolicy, an
   * update that rolls the group with WaitOnResourceSignals): an unscripted operation then ends as CloudFormation's
   * would, after the pause time, with the signal count in the group's event. @default healthy
   */
  public nodes(stackName: string, health: NodeHealth): this {
    this.health.set(stackName, health);
    return this;
  }

  /** A stuck (or slow) operation ends now, as its behaviour says. */
  public release(stackName: string): void {
    const s = this.byName(stackName);
    if (!s?.op) throw new Error(`fake: ${stackName} has no operation in progress`);
    this.finish(s);
  }

  /** Puts a stack in a state directly (as if reached outside this test). */
  public seed(name: string, opts: SeedOptions): string {
    const s = this.newStack(name, opts.status);
    s.template = opts.template;
    s.outputs = opts.template ? outputsOf(opts.template) : {};
    s.tags = { ...opts.tags };
    for (const r of opts.failed ?? []) this.event(s, r.logicalId, r.resourceType, opts.status, r.reason);
    this.event(s, name, STACK_TYPE, opts.status);
    this.remember(s);
    return s.id;
  }

  /** An operator changes the stack's tags (UpdateStack with the previous template and new tags). */
  public setTags(stackName: string, tags: Readonly<Record<string, string>>): void {
    const s = this.byName(stackName);
    if (!s) throw new Error(`fake: no stack ${stackName}`);
    s.tags = { ...tags };
    this.remember(s);
  }

  /**
   * Someone else changes the stack (the console, another tool, an UpdateStack): the template becomes live at once,
   * with its outputs, as a completed update.
   */
  public changeOutOfBand(stackName: string, template: string): void {
    const s = this.byName(stackName);
    if (!s) throw new Error(`fake: no stack ${stackName}`);
    this.event(s, s.name, STACK_TYPE, 'UPDATE_IN_PROGRESS', 'User Initiated');
    s.template = template;
    s.outputs = outputsOf(template);
    s.lastUpdated = new Date(this.clock.ms).toISOString();
    this.settle(s, 'UPDATE_COMPLETE');
  }

  /** Someone else starts an update of the stack (the console, another tool): it runs as the next behaviour says. */
  public updateOutOfBand(stackName: string, template: string): void {
    const s = this.byName(stackName);
    if (!s) throw new Error(`fake: no stack ${stackName}`);
    this.begin(s, 'update', template);
  }

  /** Someone deletes the stack behind the reconciler's back. */
  public deleteOutOfBand(stackName: string): void {
    const s = this.byName(stackName);
    if (!s) throw new Error(`fake: no stack ${stackName}`);
    this.live.delete(s.name);
    this.settle(s, 'DELETE_COMPLETE');
  }

  // ---- inspection ------------------------------------------------------------------------

  public count(...methods: Method[]): number {
    const all: readonly Method[] = methods.length ? methods : METHODS;
    return all.reduce((n, m) => n + (this.calls.get(m) ?? 0), 0);
  }

  /** Calls that change something in CloudFormation. */
  public mutatingCalls(): number {
    return this.count(...MUTATING);
  }

  public resetCalls(): void {
    this.calls.clear();
  }

  /**
   * The stack's operation in progress replaces its nodes: an update toward a template whose ConfigChecksum is not the
   * live one (the simulator's maxConcurrentPools invariant). Not a call.
   */
  public rollsNodes(stackName: string): boolean {
    const s = this.byName(stackName);
    const target = s?.op?.kind === 'update' && s.op.template ? outputsOf(s.op.template).ConfigChecksum : undefined;
    return target !== undefined && target !== s?.outputs.ConfigChecksum;
  }

  /**
   * The stack's live template and its operation in progress (the template it applies), without counting a call
   * (undefined when absent or deleted).
   */
  public inspect(
    stackName: string,
  ):
    | { readonly template?: string; readonly op?: { readonly kind: OperationKind; readonly template?: string } }
    | undefined {
    const s = this.byName(stackName);
    return s && { template: s.template, op: s.op && { kind: s.op.kind, template: s.op.template } };
  }

  /** The stack as DescribeStacks would show it by name (undefined when absent or deleted), without counting a call. */
  public peek(stackName: string): StackSummary | undefined {
    const s = this.byName(stackName);
    return s && this.summary(s);
  }

  /** Every event of a stack, oldest first, without counting a call. */
  public eventsOf(stackName: string): readonly StackEvent[] {
    return this.byName(stackName)?.events ?? [];
  }

  /** Every CreateChangeSet request, in order. */
  public readonly requests: ChangeSetRequest[] = [];

  /** Stack operations started (create, update, delete, continue-rollback) on `stackName`, by kind. */
  public readonly started: Array<{ stackName: string; kind: Kind }> = [];

  // ---- the port --------------------------------------------------------------------------

  public async listStacks(): Promise<Map<string, StackSummary>> {
    // DescribeStacks pages of 100 stacks.
    this.enter('listStacks', Math.max(1, Math.ceil(this.live.size / 100)));
    return new Map(this.listed().map((st) => [st.name, st]));
  }

  /** DescribeAccountLimits' StackLimit (not rate-limited here: `validate` reads it once per region). */
  public async stackLimit(): Promise<number | undefined> {
    return this.props.stackLimit ?? 2000;
  }

  /** Like ListStacks with an in-progress status filter: no outputs. */
  public async listStacksInProgress(): Promise<Map<string, StackSummary>> {
    const inProgress = this.listed().filter((st) => st.status.endsWith('_IN_PROGRESS'));
    // ListStacks pages of 100 summaries.
    this.enter('listStacksInProgress', Math.max(1, Math.ceil(inProgress.length / 100)));
    return new Map(inProgress.map((st) => [st.name, { ...st, outputs: {}, tags: undefined }]));
  }

  /** The live stacks as a listing shows them: as they were listingLagMs ago. */
  private listed(): StackSummary[] {
    if (this.listingLagMs <= 0) return [...this.live.values()].map((id) => this.summary(this.stacks.get(id)!));
    const asOf = this.clock.ms - this.listingLagMs;
    const then = new Map<string, { live: boolean; summary: StackSummary }>();
    for (const h of this.history) if (h.at <= asOf) then.set(h.id, h);
    return [...then.values()].filter((h) => h.live).map((h) => ({ ...h.summary, outputs: { ...h.summary.outputs } }));
  }

  public async describeStack(name: string): Promise<StackSummary | undefined> {
    this.enter('describeStack');
    const s = this.find(name);
    return s && this.summary(s);
  }

  public async createChangeSet(req: ChangeSetRequest): Promise<string> {
    this.enter('createChangeSet');
    this.requests.push(req);
    if (Boolean(req.templateBody) === Boolean(req.templateUrl))
      throw validation('Specify exactly one of TemplateBody and TemplateURL');
    const template = req.templateBody ?? this.readUrl(req.templateUrl!);
    let s = this.byName(req.stackName);
    if (req.type === 'CREATE') {
      if (s && s.status !== 'REVIEW_IN_PROGRESS')
        throw named(
          'AlreadyExistsException',
          `Stack [${req.stackName}] already exists and cannot be created again with the changeSet [${req.changeSetName}].`,
        );
      if (!s) {
        s = this.newStack(req.stackName, 'REVIEW_IN_PROGRESS');
        s.tags = { ...req.tags };
        this.remember(s);
      }
    } else if (!s || s.status === 'REVIEW_IN_PROGRESS') {
      throw validation(`Stack [${req.stackName}] does not exist`);
    } else if (busy(s) || s.pending || NOT_UPDATABLE.has(s.status)) {
      throw validation(`Stack:${s.id} is in ${s.status} state and can not be updated.`);
    }
    if (s.changeSets.has(req.changeSetName))
      throw named('AlreadyExistsException', `ChangeSet [${req.changeSetName}] already exists`);
    const changed = changedResources(s.template, template);
    const same = req.type === 'UPDATE' && s.template === template;
    const cs: ChangeSet = {
      id: `arn:aws:cloudformation:${this.region}:${this.account}:changeSet/${req.changeSetName}/${this.uuid()}`,
      name: req.changeSetName,
      type: req.type,
      template,
      status: same ? 'FAILED' : 'CREATE_COMPLETE',
      executionStatus: same ? 'UNAVAILABLE' : 'AVAILABLE',
      statusReason: same ? NO_CHANGES_REASON : undefined,
      changes: same ? 0 : changed.length,
      clientToken: req.clientToken,
      tags: { ...req.tags },
    };
    s.changeSets.set(cs.name, cs);
    return cs.id;
  }

  public async describeChangeSet(stackName: string, changeSetName: string): Promise<ChangeSetInfo | undefined> {
    this.enter('describeChangeSet');
    const cs = this.find(stackName)?.changeSets.get(changeSetName);
    return cs && infoOf(cs);
  }

  public async waitForChangeSet(stackName: string, changeSetName: string): Promise<ChangeSetInfo> {
    this.enter('waitForChangeSet');
    const cs = this.find(stackName)?.changeSets.get(changeSetName);
    if (!cs) throw named('ChangeSetNotFoundException', `ChangeSet [${changeSetName}] does not exist`);
    return infoOf(cs);
  }

  public async executeChangeSet(stackName: string, changeSetName: string, clientToken: string): Promise<void> {
    this.enter('executeChangeSet');
    const s = this.find(stackName);
    const cs = s?.changeSets.get(changeSetName);
    if (!s || !cs) throw named('ChangeSetNotFoundException', `ChangeSet [${changeSetName}] does not exist`);
    if (s.tokens.has(clientToken)) return; // a retried request with the same token: already done
    if (cs.executionStatus !== 'AVAILABLE' || busy(s) || s.pending) {
      throw named(
        'InvalidChangeSetStatusException',
        `ChangeSet [${cs.id}] cannot be executed in its current status of [${cs.status}/${cs.executionStatus}] on a stack in ${s.status}`,
      );
    }
    s.tokens.add(clientToken);
    cs.executionStatus = 'EXECUTE_IN_PROGRESS';
    // CloudFormation deletes every other change set of the stack when one is executed.
    for (const other of [...s.changeSets.keys()]) if (other !== cs.name) s.changeSets.delete(other);
    s.tags = { ...cs.tags };
    this.start(s, cs.type === 'CREATE' ? 'create' : 'update', cs.template);
  }

  public async deleteChangeSet(stackName: string, changeSetName: string): Promise<void> {
    this.enter('deleteChangeSet');
    const s = this.find(stackName);
    const cs = s?.changeSets.get(changeSetName);
    if (!s || !cs) throw named('ChangeSetNotFoundException', `ChangeSet [${changeSetName}] does not exist`);
    if (cs.executionStatus === 'EXECUTE_IN_PROGRESS')
      throw named('InvalidChangeSetStatusException', 'cannot delete a change set that is executing');
    s.changeSets.delete(changeSetName);
  }

  public async stackEvents(stackName: string, afterEventId?: string): Promise<StackEvent[]> {
    this.enter('stackEvents');
    const s = this.find(stackName);
    if (!s) throw validation(`Stack [${stackName}] does not exist`);
    const i = afterEventId ? s.events.findIndex((e) => e.id === afterEventId) : -1;
    return s.events.slice(i + 1);
  }

  public async operationEvents(stackName: string): Promise<StackEvent[]> {
    this.enter('operationEvents');
    const s = this.find(stackName);
    if (!s) throw validation(`Stack [${stackName}] does not exist`);
    let start = s.events.length - 1;
    while (start > 0 && !(s.events[start].logicalId === s.name && s.events[start].reason === 'User Initiated')) start--;
    return s.events.slice(Math.max(0, start));
  }

  public async getTemplate(stackName: string): Promise<string | undefined> {
    this.enter('getTemplate');
    const s = this.find(stackName);
    if (!s) throw validation(`Stack [${stackName}] does not exist`);
    return s.template;
  }

  public async waitForStack(stackName: string, opts: WaitOptions): Promise<StackSummary | undefined> {
    this.enter('waitForStack');
    const s = this.find(stackName);
    if (!s) return undefined;
    // Like the SDK adapter: progress is the events that appear while it waits.
    let seen = s.events.length;
    const started = this.clock.ms;
    while ((busy(s) || s.pending) && this.clock.ms - started < opts.timeoutMs && !opts.signal?.aborted) {
      this.clock.advance(this.pollMs);
      this.tick();
      for (const e of s.events.slice(seen)) opts.onEvent?.(e);
      seen = s.events.length;
      this.onPoll?.(this.summary(s));
      // Each poll yields to the event loop, as a real wait does, so a timer (a shutdown, say) can act in between.
      await new Promise((r) => setImmediate(r));
    }
    return this.summary(s);
  }

  public async deleteStack(stackName: string, clientToken: string): Promise<void> {
    this.enter('deleteStack');
    const s = this.find(stackName);
    if (!s || s.status === 'DELETE_COMPLETE' || s.tokens.has(clientToken)) return; // deleting what is gone succeeds
    if (busy(s) || s.pending) throw validation(`Stack [${s.name}] is in ${s.status} state and can not be deleted`);
    s.tokens.add(clientToken);
    this.start(s, 'delete');
  }

  public async continueUpdateRollback(stackName: string, clientToken: string): Promise<void> {
    this.enter('continueUpdateRollback');
    const s = this.find(stackName);
    if (!s) throw validation(`Stack [${stackName}] does not exist`);
    if (s.tokens.has(clientToken)) return;
    if (s.status !== 'UPDATE_ROLLBACK_FAILED')
      throw validation(`Stack [${s.name}] is in ${s.status} state and can not continue the rollback`);
    s.tokens.add(clientToken);
    this.start(s, 'continue');
  }

  // ---- time ------------------------------------------------------------------------------

  /**
   * Lets `ms` of clock time pass, one poll interval at a time, as a requeued reconcile would sleep: operations that
   * end meanwhile reach their terminal state, and `onPoll` sees every stack still in progress after each step.
   */
  public advance(ms: number): void {
    const until = this.clock.ms + ms;
    while (this.clock.ms < until) {
      this.clock.advance(Math.min(this.pollMs, until - this.clock.ms));
      this.tick();
      for (const s of this.stacks.values()) if (s.op) this.onPoll?.(this.summary(s));
    }
    // A clock shared with other fakes may have moved without this one: operations due by now end now.
    this.tick();
  }

  /** Operations whose time has come end now (every call and every poll looks at the stacks as they are at that time). */
  private tick(): void {
    for (const s of this.stacks.values()) {
      if (s.pending && this.clock.ms >= s.pending.at) {
        const { kind, template } = s.pending;
        s.pending = undefined;
        this.begin(s, kind, template);
      }
      if (s.op && this.clock.ms >= s.op.endsAt) this.finish(s);
    }
  }

  // ---- the state machine -----------------------------------------------------------------

  private start(s: FakeStack, kind: Kind, template?: string): void {
    if (this.startDelayMs > 0) s.pending = { at: this.clock.ms + this.startDelayMs, kind, template };
    else this.begin(s, kind, template);
  }

  private begin(s: FakeStack, kind: Kind, template?: string): void {
    let behaviour =
      this.behaviourOf?.(s.name, kind, template) ??
      this.scripts.get(s.name)?.shift() ??
      this.defaults.get(s.name) ??
      complete();
    const gate =
      kind === 'create' || kind === 'update'
        ? signalFailure(kind, s.template, template, this.health.get(s.name) ?? 'healthy')
        : undefined;
    if (gate && behaviour.kind === 'complete') behaviour = fail(gate.resource, Math.ceil(gate.afterMs / this.pollMs));
    this.started.push({ stackName: s.name, kind });
    const status = {
      create: 'CREATE_IN_PROGRESS',
      update: 'UPDATE_IN_PROGRESS',
      delete: 'DELETE_IN_PROGRESS',
      continue: 'UPDATE_ROLLBACK_IN_PROGRESS',
    }[kind];
    s.status = status;
    s.statusReason = 'User Initiated';
    if (kind === 'update') s.lastUpdated = new Date(this.clock.ms).toISOString();
    this.event(s, s.name, STACK_TYPE, status, 'User Initiated');
    s.op = { kind, behaviour, endsAt: this.clock.ms + behaviour.polls * this.pollMs, template };
    this.remember(s);
    this.onBegin?.({ stackName: s.name, kind, from: s.template, to: template });
    if (behaviour.polls <= 0) this.finish(s);
  }

  private finish(s: FakeStack): void {
    const op = s.op!;
    s.op = undefined;
    const { kind: outcome, resource: r } = op.behaviour;
    const ok = outcome === 'complete';
    const cancelled = (verb: string) => {
      for (const id of changedResources(s.template, op.template)
        .filter((x) => x !== r?.logicalId)
        .slice(0, 1))
        this.event(s, id, typeOf(op.template, id), `${verb}_FAILED`, `Resource ${verb.toLowerCase()} cancelled`);
    };
    if (op.kind === 'create' || op.kind === 'update') {
      const verb = op.kind.toUpperCase();
      if (ok) {
        for (const id of changedResources(s.template, op.template))
          this.event(s, id, typeOf(op.template ?? s.template, id), `${verb}_COMPLETE`);
        s.template = op.template;
        s.outputs = outputsOf(op.template!);
        this.settle(s, `${verb}_COMPLETE`);
        return;
      }
      if (r) this.event(s, r.logicalId, r.resourceType, `${verb}_FAILED`, r.reason);
      cancelled(verb);
      const rolling = op.kind === 'create' ? 'ROLLBACK' : 'UPDATE_ROLLBACK';
      this.event(
        s,
        s.name,
        STACK_TYPE,
        `${rolling}_IN_PROGRESS`,
        `The following resource(s) failed to ${op.kind}: [${r?.logicalId ?? ''}].`,
      );
      if (outcome === 'rollback-fails') {
        if (r) this.event(s, r.logicalId, r.resourceType, `${verb}_FAILED`, `${r.reason} (during rollback)`);
        this.settle(s, `${rolling}_FAILED`, `The following resource(s) failed to roll back: [${r?.logicalId ?? ''}].`);
        return;
      }
      if (op.kind === 'create') s.outputs = {}; // nothing was ever live; the old template and outputs stay for an update
      this.settle(s, `${rolling}_COMPLETE`);
      return;
    }
    if (op.kind === 'delete') {
      if (ok) {
        this.live.delete(s.name);
        this.settle(s, 'DELETE_COMPLETE');
        return;
      }
      if (r) this.event(s, r.logicalId, r.resourceType, 'DELETE_FAILED', r.reason);
      this.settle(s, 'DELETE_FAILED', `The following resource(s) failed to delete: [${r?.logicalId ?? ''}].`);
      return;
    }
    if (ok) {
      this.settle(s, 'UPDATE_ROLLBACK_COMPLETE');
      return;
    }
    if (r) this.event(s, r.logicalId, r.resourceType, 'UPDATE_FAILED', r.reason);
    this.settle(s, 'UPDATE_ROLLBACK_FAILED', `The following resource(s) failed to roll back: [${r?.logicalId ?? ''}].`);
  }

  private settle(s: FakeStack, status: string, reason?: string): void {
    s.status = status;
    s.statusReason = reason;
    this.event(s, s.name, STACK_TYPE, status, reason);
    for (const cs of s.changeSets.values())
      if (cs.executionStatus === 'EXECUTE_IN_PROGRESS')
        cs.executionStatus =
          /_COMPLETE$/.test(status) && !/ROLLBACK/.test(status) ? 'EXECUTE_COMPLETE' : 'EXECUTE_FAILED';
    this.remember(s);
    this.onSettle?.(s.name, status, s.template);
  }

  private summary(s: FakeStack): StackSummary {
    return {
      name: s.name,
      id: s.id,
      status: s.status,
      statusReason: s.statusReason,
      outputs: { ...s.outputs },
      lastUpdated: this.reportsLastUpdated ? s.lastUpdated : undefined,
      tags: { ...s.tags },
    };
  }

  /** The stack's state from now on, for listings that lag. */
  private remember(s: FakeStack): void {
    this.history.push({ at: this.clock.ms, id: s.id, live: this.live.get(s.name) === s.id, summary: this.summary(s) });
  }

  private newStack(name: string, status: string): FakeStack {
    const s: FakeStack = {
      name,
      id: `arn:aws:cloudformation:${this.region}:${this.account}:stack/${name}/${this.uuid()}`,
      status,
      outputs: {},
      tags: {},
      events: [],
      changeSets: new Map(),
      tokens: new Set(),
    };
    this.stacks.set(s.id, s);
    this.live.set(name, s.id);
    this.remember(s);
    return s;
  }

  private event(s: FakeStack, logicalId: string, resourceType: string, status: string, reason?: string): void {
    s.events.push({
      id: `${s.name}-event-${s.events.length + 1}`,
      timestamp: new Date(this.clock.ms),
      logicalId,
      resourceType,
      status,
      reason,
    });
  }

  /**
   * One call of the port: `pages` requests of its API one after the other, as the SDK's paginator sends them (a listing
   * of 1,000 stacks is 10 DescribeStacks requests, each taking the latency and one token of the API's bucket when it
   * is sent, each throttled on its own; the first one throttled fails the call).
   */
  private enter(method: Method, pages = 1): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    const api = API_OF[method];
    for (let page = 0; page < pages; page++) {
      const wait = this.props.pace?.(api) ?? 0;
      if (wait > 0) this.clock.advance(wait);
      if (this.props.latencyMs) this.clock.advance(this.props.latencyMs);
      this.tick();
      this.apiRequests.set(api, (this.apiRequests.get(api) ?? 0) + 1);
      const quota = this.props.quotas?.[api];
      if (!quota) continue;
      const b = this.buckets.get(api) ?? { tokens: quota.burst, at: this.clock.ms };
      b.tokens = Math.min(quota.burst, b.tokens + ((this.clock.ms - b.at) / 1000) * quota.ratePerSecond);
      b.at = this.clock.ms;
      this.buckets.set(api, b);
      if (b.tokens < 1) {
        this.throttledCalls.set(api, (this.throttledCalls.get(api) ?? 0) + 1);
        throw named('ThrottlingException', 'Rate exceeded');
      }
      b.tokens -= 1;
    }
    const left = this.throttled.get(method) ?? 0;
    if (left > 0) {
      this.throttled.set(method, left - 1);
      throw named('ThrottlingException', 'Rate exceeded');
    }
  }

  /** By name: the live stack; by id (ARN): any stack, deleted ones too (as CloudFormation does). */
  private find(nameOrId: string): FakeStack | undefined {
    return this.stacks.get(nameOrId) ?? this.byName(nameOrId);
  }

  private byName(name: string): FakeStack | undefined {
    const id = this.live.get(name);
    return id ? this.stacks.get(id) : undefined;
  }

  private readUrl(url: string): string {
    if (!this.props.readTemplateUrl)
      throw new Error(`fake: TemplateURL ${url} given, but no readTemplateUrl was wired`);
    return this.props.readTemplateUrl(url);
  }

  private uuid(): string {
    return `00000000-0000-4000-8000-${String(++this.seq).padStart(12, '0')}`;
  }

  private get region(): string {
    return this.props.region ?? 'us-east-1';
  }

  private get account(): string {
    return this.props.account ?? '222222222222';
  }
}

const STACK_TYPE = 'AWS::CloudFormation::Stack';
/** States CloudFormation refuses to update from (only a delete, or ContinueUpdateRollback, leaves them). */
const NOT_UPDATABLE = new Set([
  'ROLLBACK_COMPLETE',
  'ROLLBACK_FAILED',
  'UPDATE_ROLLBACK_FAILED',
  'DELETE_FAILED',
  'CREATE_FAILED',
]);

/** An operation is running (a stack under review is waiting for its first change set, not busy). */
const busy = (s: FakeStack) => isInProgress(s.status) && s.status !== 'REVIEW_IN_PROGRESS';

function infoOf(cs: ChangeSet): ChangeSetInfo {
  return {
    id: cs.id,
    name: cs.name,
    status: cs.status,
    executionStatus: cs.executionStatus,
    statusReason: cs.statusReason,
    changes: cs.changes,
  };
}

/** Outputs as CloudFormation resolves them: literal strings as they are, references to a placeholder. */
export function outputsOf(template: string): Record<string, string> {
  const outputs = (JSON.parse(template).Outputs ?? {}) as Record<string, { Value: unknown }>;
  return Object.fromEntries(
    Object.entries(outputs).map(([k, o]) => [
      k,
      typeof o.Value === 'string' ? o.Value : `fake:${JSON.stringify(o.Value)}`,
    ]),
  );
}

/** Logical ids whose definition differs between two templates (all of `after` when there is no `before`). */
function changedResources(before: string | undefined, after: string | undefined): string[] {
  const a = (before ? JSON.parse(before).Resources : {}) ?? {};
  const b = (after ? JSON.parse(after).Resources : {}) ?? {};
  return [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]))
    .sort();
}

function typeOf(template: string | undefined, logicalId: string): string {
  return (template && JSON.parse(template).Resources?.[logicalId]?.Type) ?? 'AWS::CloudFormation::Resource';
}

function named(name: string, message: string): Error {
  const e = new Error(message);
  e.name = name;
  return e;
}

function validation(message: string): Error {
  return named('ValidationError', message);
}
