import { CloudFormationPort, isComplete, isInProgress, StackSummary } from '../../lib/model/ports/cloudformation-port';
import { CrashSignal } from '../../lib/engines/reconciler/compose/workflow';
import { FakeCloudFormation, Method, MUTATING } from '../fakes/fake-cloudformation';
import { FakeClock } from '../fakes/fake-ports';

/** A call fault AWS can answer with: throttling, a 5xx, or a timeout (for a write: applied, but the answer is lost). */
export type CallFault = 'throttle' | 'server' | 'timeout';

/** What the truth looked like at one moment, as a listing taken then would show it. */
interface Snapshot {
  readonly seq: number;
  readonly stacks: ReadonlyMap<string, StackSummary>;
}

/** One read handed to a process: the snapshot's moment and the stack as it showed it (undefined: absent). */
export interface Read {
  readonly seq: number;
  readonly stack?: StackSummary;
}

/** What the ledger tells the invariants about one call that reached AWS. */
export interface Writer {
  readonly process: number;
  /** The process may write now (it is the leader the world elected). */
  readonly leading: boolean;
  /** The process was killed: it makes no call any more (checked where the call lands, not only where it leaves). */
  readonly dead: boolean;
}

const READS = new Set<Method>(['listStacks', 'listStacksInProgress', 'describeStack']);
const OURS = new Set<string>(['executeChangeSet', 'deleteStack', 'continueUpdateRollback']);

/**
 * The simulator's AWS: the fake CloudFormation (the truth), seen through faults. It keeps the ledger the invariants
 * read: every snapshot of the truth in order (`seq`), the reads each process was handed, our executions per stack
 * and fingerprint, and which operations in progress are ours. Reads can be stale (an older snapshot: CloudFormation's
 * eventual consistency, a lagging cache), calls can be throttled, fail with a 5xx or time out.
 */
export class SimAws {
  public readonly clock = new FakeClock();
  public readonly fake = new FakeCloudFormation({ clock: this.clock });
  public seq = 0;
  private readonly history: Snapshot[] = [];
  /** seq of the last execution of ours per stack name (a Ready must rest on a read taken after it). */
  public readonly lastExecute = new Map<string, number>();
  /** Stacks whose operation in progress we started (execute, delete, continue-rollback). */
  public readonly ours = new Set<string>();
  /** Consecutive executions of one fingerprint per stack id, since an execution of the stack last succeeded. */
  public readonly executions = new Map<string, { fingerprint: string; n: number }>();
  /** Reads per process, per stack name, since our last execution on that stack. */
  public readonly reads = new Map<number, Map<string, Read[]>>();
  private stale = { lag: 0, left: 0 };
  private faults: Array<{ method: Method | '*'; kind: CallFault; left: number }> = [];
  /** The process whose call is in the fake's synchronous part now (undefined: none, or someone else's operation). */
  public caller?: number;
  /** Invariant violations seen at call time (the process's error path must not swallow them: they are kept here). */
  public readonly violations: string[] = [];

  constructor(
    public readonly stackNames: readonly string[],
    private readonly maxUpdateAttempts: number,
  ) {
    this.snapshot();
  }

  /** The next `count` reads return the truth as it was `lag` changes ago. */
  public staleReads(lag: number, count: number): void {
    this.stale = { lag, left: count };
  }

  /** The next `n` calls of `method` ('*': any) fail with `kind`. */
  public fault(method: Method | '*', kind: CallFault, n: number): void {
    this.faults.push({ method, kind, left: n });
  }

  /** Faults stop (the liveness phase). */
  public calm(): void {
    this.stale = { lag: 0, left: 0 };
    this.faults = [];
  }

  /** Time passes: operations due end, and the truth is snapshotted. */
  public advance(ms: number): void {
    this.fake.advance(ms);
    this.snapshot();
  }

  /** The stack as it is (no call counted). */
  public truth(name: string): StackSummary | undefined {
    return this.fake.peek(name);
  }

  /** Records the truth when it changed; settles the ledger of operations that ended. */
  public snapshot(): void {
    this.fake.advance(0);
    const stacks = new Map<string, StackSummary>();
    for (const n of this.stackNames) {
      const s = this.fake.peek(n);
      if (s) stacks.set(n, s);
      if (this.ours.has(n) && !(s && isInProgress(s.status))) {
        this.ours.delete(n);
        // An execution of ours that completed resets the count of that stack's executions.
        if (s && isComplete(s.status)) this.executions.delete(s.id);
      }
    }
    const last = this.history.at(-1);
    if (last && JSON.stringify([...last.stacks]) === JSON.stringify([...stacks])) return;
    this.history.push({ seq: ++this.seq, stacks });
    if (this.history.length > 16) this.history.shift();
  }

  /**
   * The port as process `id` sees it. `writer()` says, at the moment a write reaches AWS, whether that process may
   * write (the leader-fence invariant); the fence itself (lib/engines/reconciler/runtime/leader-fence.ts) sits in front of this.
   */
  public port(id: number, writer: () => Writer): CloudFormationPort {
    const target = this.fake as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    const handler: ProxyHandler<CloudFormationPort> = {
      get: (_t, prop) => {
        const method = String(prop) as Method;
        if (typeof target[method] !== 'function') return undefined;
        return async (...args: unknown[]) => {
          if (writer().dead) throw new CrashSignal(`process ${id} is dead`);
          if (READS.has(method)) return this.read(id, method, args);
          const mutating = (MUTATING as readonly string[]).includes(method);
          if (mutating) this.beforeWrite(method, args, writer());
          const fault = this.take(method);
          if (fault && !(fault === 'timeout' && mutating)) throw callError(fault, method);
          const startedBefore = this.fake.started.length;
          // Whose call it is, for the fake's hooks (onBegin) that run in its synchronous part: the invariants read it.
          this.caller = id;
          const pending = target[method].apply(this.fake, args);
          this.caller = undefined;
          const result = await pending;
          if (mutating) await this.afterWrite(method, args, this.fake.started.length > startedBefore);
          if (fault) throw callError(fault, method); // a write that was applied, whose answer was lost
          return result;
        };
      },
    };
    return new Proxy({} as CloudFormationPort, handler);
  }

  private async read(id: number, method: Method, args: unknown[]): Promise<unknown> {
    const fault = this.take(method);
    this.snapshot();
    const lag = this.stale.left > 0 ? this.stale.lag : 0;
    if (this.stale.left > 0) this.stale.left--;
    const snap = this.history[Math.max(0, this.history.length - 1 - lag)];
    this.fake.calls.set(method, (this.fake.calls.get(method) ?? 0) + 1);
    if (fault) throw callError(fault, method);
    const mine = this.reads.get(id) ?? new Map<string, Read[]>();
    this.reads.set(id, mine);
    const note = (name: string, stack?: StackSummary) =>
      mine.set(name, [...(mine.get(name) ?? []).slice(-7), { seq: snap.seq, stack }]);
    if (method === 'describeStack') {
      const key = String(args[0]);
      const byName = snap.stacks.get(key) ?? [...snap.stacks.values()].find((s) => s.id === key);
      // A deleted stack by id: CloudFormation keeps answering for it; the snapshot holds only live ones.
      const stack = byName ?? (key.startsWith('arn:') ? await this.fake.describeStack(key) : undefined);
      if (!key.startsWith('arn:')) note(key, stack);
      else if (stack) note(stack.name, stack);
      return stack && { ...stack, outputs: { ...stack.outputs } };
    }
    const inProgressOnly = method === 'listStacksInProgress';
    const listed = [...snap.stacks].filter(([, s]) => !inProgressOnly || isInProgress(s.status));
    // A listing shows every stack it holds; a stack it does not hold was absent then (in-progress listings: not busy).
    for (const n of this.stackNames) if (!inProgressOnly) note(n, snap.stacks.get(n));
    return new Map(
      listed.map(([n, s]) => [n, inProgressOnly ? { ...s, outputs: {} } : { ...s, outputs: { ...s.outputs } }]),
    );
  }

  /**
   * An operator asked for another try of inputs that failed (`channels resume` of a halted release: its clusters roll
   * to it again): earlier executions no longer count against --max-update-attempts.
   */
  public operatorRetried(): void {
    this.executions.clear();
  }

  private beforeWrite(method: Method, args: unknown[], w: Writer): void {
    if (!w.leading)
      this.violations.push(`[leaders] two leaders: process ${w.process}, not the leader, reached AWS with ${method}`);
    if (method !== 'createChangeSet' && method !== 'executeChangeSet') return;
    const name = method === 'createChangeSet' ? (args[0] as { stackName: string }).stackName : String(args[0]);
    this.snapshot();
    const s = this.truth(name);
    if (this.ours.has(name) && s && isInProgress(s.status)) {
      this.violations.push(
        `[in-progress] ${method} on ${name} while our own operation on it is ${s.status} (a decision from a read older than our own write)`,
      );
    }
  }

  /** `started`: the call started an operation (a repeated token starts none). */
  private async afterWrite(method: Method, args: unknown[], started: boolean): Promise<void> {
    const name = String(args[0]);
    this.snapshot();
    if (!OURS.has(method) || !started) return;
    const s = this.truth(name) ?? (await this.fake.describeStack(name));
    if (!s) return;
    if (isInProgress(s.status)) this.ours.add(s.name);
    if (method !== 'executeChangeSet') return;
    this.lastExecute.set(s.name, ++this.seq);
    this.reads.forEach((m) => m.delete(s.name));
    this.snapshot();
    const fingerprint = /^ws-([0-9a-f]+)-/.exec(String(args[1]))?.[1] ?? String(args[1]);
    const prev = this.executions.get(s.id);
    const n = prev?.fingerprint === fingerprint ? prev.n + 1 : 1;
    this.executions.set(s.id, { fingerprint, n });
    if (n > this.maxUpdateAttempts)
      this.violations.push(
        `[executions] ${n} executions of inputs ${fingerprint} on ${s.name}, more than --max-update-attempts ${this.maxUpdateAttempts}`,
      );
  }

  private take(method: Method): CallFault | undefined {
    const f = this.faults.find((x) => x.left > 0 && (x.method === '*' || x.method === method));
    if (!f) return undefined;
    f.left--;
    return f.kind;
  }
}

function callError(kind: CallFault, method: string): Error {
  const e = new Error(
    `${method}: ${kind === 'throttle' ? 'Rate exceeded' : kind === 'server' ? 'We encountered an internal error. Please try again.' : 'the request timed out'}`,
  ) as Error & { $metadata?: object; $fault?: string };
  e.name = kind === 'throttle' ? 'ThrottlingException' : kind === 'server' ? 'InternalFailure' : 'TimeoutError';
  if (kind === 'server') Object.assign(e, { $metadata: { httpStatusCode: 500 }, $fault: 'server' });
  return e;
}
