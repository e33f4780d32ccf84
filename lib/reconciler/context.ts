import { AssetPublisher } from '../aws/s3-publisher';
import { CloudFormationPort, StackEvent, StackSummary } from '../aws/cloudformation-port';
import { IdentityPort } from '../aws/identity';
import { WorkerCluster } from '../cluster/schema';
import { ClusterStatus, ConditionInput, EMPTY_STATUS, setConditions } from '../cluster/status';
import { RenderedConfig } from '../cloudconfig/render';
import { ClusterRecord, ClusterStore } from '../stores/cluster-store';
import { BackoffPolicy } from './backoff';
import { DerivedCache, derivedKey } from './derived-cache';
import { SynthesizedStack, SynthesizeOptions } from './synthesize';

/** The subset of pino the reconciler uses; tests pass a recorder. */
export interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  child(bindings: object): Logger;
}

export interface RegionClients {
  readonly cfn: CloudFormationPort;
  readonly publisher: AssetPublisher;
}

export interface ReconcilerDeps {
  readonly store: ClusterStore;
  /** AWS ports for one region (created once per region and reused). */
  readonly aws: (region: string) => RegionClients;
  readonly identity: IdentityPort;
  readonly templatesDir: string;
  /** Where cloud assemblies are synthesized. */
  readonly workDir: string;
  /** Fingerprint of the code (see codeFingerprint). */
  readonly code: string;
  readonly log: Logger;
  readonly now: () => Date;
  readonly backoff: BackoffPolicy;
  /** How long one pass waits for a stack before it requeues. */
  readonly waitTimeoutMs: number;
  readonly changeSetTimeoutMs: number;
  /** Report what would happen; write nothing anywhere. */
  readonly dryRun: boolean;
  /** Run cdk-nag during synthesis. */
  readonly nag: boolean;
  /** ContinueUpdateRollback / delete-and-recreate attempts before an operator must step in. */
  readonly maxRecoveryAttempts: number;
  /** Aborted on shutdown (SIGTERM): waits stop at once and requeue; the next start resumes them. @default never */
  readonly signal?: AbortSignal;
  /** Validated clusters and rendered configs of unchanged objects, kept between passes. @default none: derive every time */
  readonly derived?: DerivedCache;
  /** Where stacks are synthesized (a SynthPool of worker threads in the daemon). @default in this thread */
  readonly synthesizer?: Synthesizer;
}

export type Synthesizer = (cluster: WorkerCluster, opts: SynthesizeOptions) => Promise<SynthesizedStack>;

export type Result = 'unchanged' | 'applied' | 'no-changes' | 'invalid' | 'failed' | 'waiting' | 'backoff' | 'dry-run' | 'conflict' | 'recorded';

export interface Outcome {
  readonly result: Result;
  /** Ask to be reconciled again after this long (controller-runtime's RequeueAfter). */
  readonly requeueAfterMs?: number;
  readonly message?: string;
  /** The desired config checksum, when the object rendered. */
  readonly checksum?: string;
}

/** What one reconcile of one cluster knows; tasks fill it in order. */
export class ReconcileContext {
  public status: ClusterStatus;
  public resourceVersion: string;
  public cluster?: WorkerCluster;
  public config?: RenderedConfig;
  public fingerprint?: string;
  public stack?: StackSummary;
  /** The stack was found in progress: wait for it, change nothing. */
  public resume = false;
  public synth?: SynthesizedStack;
  public changeSetName?: string;
  /** Set when the change set is ready to execute. */
  public changeSetToken?: string;
  public executed = false;
  public configChange?: string;
  public readonly events: StackEvent[] = [];
  /** Every line names the cluster, its generation and the live checksum; the desired one is bound once rendered. */
  public log: Logger;

  constructor(
    public readonly record: ClusterRecord,
    public readonly deps: ReconcilerDeps,
    public readonly clients: RegionClients | undefined,
    /** From the pass's batched listing; undefined means "not listed, ask". */
    public readonly listedStack: StackSummary | null | undefined,
    /** Version of the template directory this pass renders with (see templatesVersion). */
    public readonly templatesVersion?: string,
  ) {
    this.status = record.status ?? EMPTY_STATUS;
    this.resourceVersion = record.resourceVersion;
    this.log = deps.log.child({ cluster: record.name, generation: record.generation, liveChecksum: this.status.cloudConfigChecksum ?? null });
  }

  /** Key of what is derived from this object's content (see DerivedCache). */
  public get derivedKey(): string | undefined {
    return this.templatesVersion === undefined ? undefined : derivedKey(this.record.contentHash, this.record.source, this.templatesVersion, this.deps.code);
  }

  public get generation(): number {
    return this.record.generation;
  }

  public get region(): RegionClients {
    if (!this.clients) throw new Error(`no AWS clients for ${this.record.name}`);
    return this.clients;
  }

  /** Writes the status if it changed (an unchanged cluster writes nothing); never in a dry run. */
  public async writeStatus(next: ClusterStatus): Promise<void> {
    if (this.deps.dryRun || JSON.stringify(next) === JSON.stringify(this.status)) return;
    this.resourceVersion = await this.deps.store.writeStatus(this.record.name, next, this.resourceVersion);
    this.status = next;
  }

  public withConditions(status: ClusterStatus, conditions: ConditionInput[]): ClusterStatus {
    return { ...status, conditions: setConditions(status.conditions, conditions, this.generation, this.deps.now()) };
  }
}

/** Conditions for the three states a cluster settles in, and for work under way. */
export const CONDITIONS = {
  ready: (reason: string, message: string): ConditionInput[] => [
    { type: 'Ready', status: 'True', reason, message },
    { type: 'Progressing', status: 'False', reason: 'Idle', message: 'nothing in progress' },
    { type: 'Failed', status: 'False', reason: 'Succeeded', message: 'last attempt succeeded' },
  ],
  progressing: (reason: string, message: string): ConditionInput[] => [{ type: 'Progressing', status: 'True', reason, message }],
  failed: (reason: string, message: string): ConditionInput[] => [
    { type: 'Ready', status: 'False', reason, message },
    { type: 'Progressing', status: 'False', reason, message: 'stopped' },
    { type: 'Failed', status: 'True', reason, message },
  ],
};

/** One named step of the workflow. `when` false skips it; returning an Outcome ends the reconcile. */
export interface Task {
  readonly name: string;
  readonly when?: (ctx: ReconcileContext) => boolean;
  run(ctx: ReconcileContext): Promise<Outcome | void>;
}

/** "UPDATE_ROLLBACK_COMPLETE" → "UpdateRollbackComplete" (condition reasons are CamelCase). */
export function camel(status: string): string {
  return status
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}
