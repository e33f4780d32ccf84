import type { DeployClients } from '../../deploy/change-sets';
import { StackSummary } from '../../../model/ports/cloudformation-port';
import { IdentityPort } from '../../../platform/aws/identity';
import { WorkerCluster } from '../../../model/cluster/schema/schema';
import { ClusterStatus } from '../../../model/cluster/schema/status';
import { ClusterRecord, ClusterStore } from '../../../model/ports/cluster-store';
import { BackoffPolicy } from './backoff';
import { DerivedCache, derivedKey } from '../../../model/cluster/derived-cache';
import { EventSink } from './events';
import type { PendingStatus } from './status-recorder';
import type { SynthesizedStack, SynthesizeOptions } from '../../synthesis/synthesize';
import type { KeptSyntheses } from '../../synthesis/kept-syntheses';
import type { Start } from './state';
import { ConfigObjectStore } from '../../../platform/aws/config-objects';
import { RolloutGate } from '../../rollout/coordinator';
import type { Logger } from '../../../core/logger';
import { poolStackName, workerStackName } from '../../../core/naming';
import { ImageResolver, pinsKey } from '../../../model/channel/image-pins';

export interface RegionClients extends DeployClients {
  /** Lists and deletes old config objects of a settled cluster (clean-config-objects). @default none: nothing is removed */
  readonly configObjects?: ConfigObjectStore;
}

/** What to do about a live stack that is not what the reconciler applied. */
export type DriftPolicy = 'repair' | 'report';

/**
 * Stacks in progress across the fleet: --concurrency bounds them, not threads. Tasks only ask and report; the owner
 * (the controller's FleetSlots) gives a slot back when the reconcile that took it ends, unless the stack is in progress.
 */
export interface StackSlots {
  /** True when `cluster` may start a stack operation now (it holds a slot, or one is free); held until its reconcile ends. */
  tryAcquire(cluster: string): boolean;
  /** The cluster's stack was seen in progress, or this reconcile started an operation on it (held past the reconcile), or seen settled (freed). */
  observed(cluster: string, inProgress: boolean): void;
}

/** What the reconciler talks to: the object store, AWS, who the credentials are, where synthesis runs, events. */
export interface ReconcilerPorts {
  readonly store: ClusterStore;
  /**
   * AWS ports for one account and region (created once and reused): with assumed roles, every call of a cluster is
   * made with its own account's deployer credentials. Without `account`, or in single-credential mode, per region.
   */
  readonly aws: (region: string, account?: string) => RegionClients;
  readonly identity: IdentityPort;
  /** Where stacks are synthesized (a SynthPool of worker threads in the daemon). @default in this thread */
  readonly synthesizer?: Synthesizer;
  /** Events on the object (roll started, stack complete, rolled back, stalled). @default none (the file store) */
  readonly events?: EventSink;
}

/** What the operator chooses (the CLI's flags): how hard to try, how often to look, what to write. */
export interface ReconcilerPolicy {
  readonly backoff: BackoffPolicy;
  /** How long after a look at a stack in progress to look again. @default 5 s */
  readonly pollMs?: number;
  readonly changeSetTimeoutMs: number;
  /** Report what would happen; write nothing anywhere. */
  readonly dryRun: boolean;
  /** Run cdk-nag during synthesis. */
  readonly nag: boolean;
  /** ContinueUpdateRollback / delete-and-recreate attempts before an operator must step in. */
  readonly maxRecoveryAttempts: number;
  /** Executions (or other counted failures) of the same inputs before the cluster stalls. @default 2 */
  readonly maxUpdateAttempts?: number;
  /** @default repair */
  readonly drift?: DriftPolicy;
  /** Config objects kept besides the live and desired ones. @default 3 */
  readonly keepConfigObjects?: number;
}

/** Held by the runtime across reconciles, each with one owner there that releases what it holds. */
export interface RuntimeOwned {
  /** Validated clusters and rendered configs of unchanged objects, kept between passes. @default none: derive every time */
  readonly derived?: DerivedCache;
  /**
   * Syntheses made for a roll key whose reconcile ended before its change set (held), for that change set to reuse.
   * @default none: a held cluster is synthesized again when let go
   */
  readonly kept?: KeptSyntheses;
  /** Bounds the stacks in progress. @default unbounded */
  readonly slots?: StackSlots;
  /** The fleet rollout gate (waves, windows, holds: lib/engines/rollout). @default none: every roll may start */
  readonly rollout?: RolloutGate;
  /**
   * The image channels' pins as last read (lib/engines/channels: the daemon refreshes them at the start of every pass).
   * @default none: a pool that names a channel is refused (rule image-channel)
   */
  readonly images?: () => ImageResolver;
}

/** Facts of this process: its code and release, its files, its clock and log. */
export interface Ambient {
  readonly templatesDir: string;
  /** Where cloud assemblies are synthesized. */
  readonly workDir: string;
  /** Fingerprint of the code (see codeFingerprint). */
  readonly code: string;
  /** This daemon's release (package version): a cluster last applied by a newer release is left alone. @default no check */
  readonly release?: string;
  readonly log: Logger;
  readonly now: () => Date;
}

/**
 * Everything a reconcile is given, by who provides it (issue 34: the bag was one list of 25 fields). `--once`'s wait
 * deadline and the shutdown signal are the CLI's and the daemon's, not a task's. A task sees only the ones it
 * declares (task-context.ts).
 */
export interface ReconcilerDeps extends ReconcilerPorts, ReconcilerPolicy, RuntimeOwned, Ambient {}

/**
 * One stack of a cluster, reconciled on its own within the cluster's reconcile (see stackUnits): the shared stack
 * WorkerStack-<cluster>, whose status is the object's top level, or a pool's own stack, whose status is its entry
 * in status.pools.
 */
export interface ReconcileUnit {
  readonly stackName: string;
  /** The pool whose own stack this is; undefined for the shared stack. */
  readonly pool?: string;
  /** This unit's fleet slot (see StackSlots): the cluster's name for the shared stack, `<cluster>/<pool>` for a pool's. */
  readonly slot: string;
}

/** The shared stack's unit: the only one of a single-pool cluster, reconciled as before pools existed. */
export function sharedUnit(cluster: string): ReconcileUnit {
  return { stackName: workerStackName(cluster), slot: cluster };
}

/** A pool's own stack. */
export function poolUnit(cluster: string, pool: string): ReconcileUnit {
  return { stackName: poolStackName(cluster, pool), pool, slot: poolSlot(cluster, pool) };
}

/** The slot key of a pool's stack ('/' is in no cluster name: a DNS label). */
export function poolSlot(cluster: string, pool: string): string {
  return `${cluster}/${pool}`;
}

export type Synthesizer = (cluster: WorkerCluster, opts: SynthesizeOptions) => Promise<SynthesizedStack>;

export const DEFAULT_POLL_MS = 5000;
export const DEFAULT_MAX_UPDATE_ATTEMPTS = 2;

/**
 * What one reconcile of one cluster starts from, fixed for its length: the object as read, the dependencies, the
 * AWS clients of its account and region, and the pass's listing. What the phases find is returned by them (state.ts);
 * what they change in the status is staged on `recorder` and written by the workflow, once (status-recorder.ts).
 */
export class ReconcileContext {
  constructor(
    public readonly record: ClusterRecord,
    /** The status as this reconcile changed it so far; tasks stage changes here, never write. */
    public readonly recorder: PendingStatus,
    public readonly deps: ReconcilerDeps,
    public readonly clients: RegionClients | undefined,
    /** From the pass's batched listing; undefined means "not listed, ask". */
    public readonly listedStack: StackSummary | null | undefined,
    /** Version of the template directory this pass renders with (see templatesVersion). */
    public readonly templatesVersion?: string,
    /** listedStack was described alone after this cluster's last write, not taken from a shared listing. */
    public readonly listedDescribed = false,
    /** The stack this run of the workflow reconciles. @default the shared stack WorkerStack-<cluster> */
    public readonly unit: ReconcileUnit = sharedUnit(record.name),
  ) {}

  /** Where every reconcile starts: a logger naming the cluster, its generation and the live checksum as recorded. */
  public start(): Start {
    return Object.freeze({
      log: this.deps.log.child({
        cluster: this.record.name,
        ...(this.unit.pool ? { pool: this.unit.pool } : {}),
        generation: this.record.generation,
        liveChecksum: this.status.cloudConfigChecksum ?? null,
      }),
    });
  }

  public get status(): ClusterStatus {
    return this.recorder.status;
  }

  /**
   * The image channels' pins this reconcile reads: those at its first read. A pass's refresh during the reconcile is
   * the next reconcile's: else the key recorded as applied (appliedInputsKey) could name pins the applied template was
   * not derived from, and skipIfSameInputs would never roll the release the refresh pinned.
   */
  public get images(): ImageResolver | undefined {
    this.pins.read ??= { value: this.deps.images?.() };
    return this.pins.read.value;
  }
  // A holder, not a field set on first read: a task's view of the context (deps-guard.ts) reads and sets the same one.
  private readonly pins: { read?: { readonly value: ImageResolver | undefined } } = {};

  /**
   * Whether the pass refreshed the image channels' pins since this reconcile read them, for an object whose pools name
   * a channel: a release recorded or halted meanwhile. The execute task looks again rather than start a release the
   * refresh halted (the simulator found one more cluster taking a halted release so).
   */
  public pinsMoved(): boolean {
    const read = this.pins.read;
    if (!read || !this.deps.images) return false;
    const now = this.deps.images();
    return now !== read.value && pinsKey(this.record.raw, now) !== pinsKey(this.record.raw, read.value);
  }

  /** Key of what is derived from this object's content (see DerivedCache). */
  public get derivedKey(): string | undefined {
    return this.templatesVersion === undefined
      ? undefined
      : derivedKey(
          this.record.contentHash,
          this.record.source,
          this.templatesVersion,
          this.deps.code,
          pinsKey(this.record.raw, this.images),
        );
  }

  public get generation(): number {
    return this.record.generation;
  }

  public get pollMs(): number {
    return this.deps.pollMs ?? DEFAULT_POLL_MS;
  }

  public get region(): RegionClients {
    if (!this.clients) throw new Error(`no AWS clients for ${this.record.name}`);
    return this.clients;
  }
}

/** Task names: hooks bind to these, logs and metrics carry them. */
export const TASK = {
  finalize: 'finalize',
  skipIfSameInputs: 'skip-if-same-inputs',
  validate: 'validate',
  render: 'render',
  observe: 'observe',
  claim: 'claim',
  wait: 'wait',
  recordExecution: 'record-execution',
  skipIfUnchanged: 'skip-if-unchanged',
  checkVersion: 'check-version',
  paused: 'paused',
  reportDrift: 'report-drift',
  checkAccount: 'check-account',
  dryRun: 'dry-run',
  recover: 'recover',
  rollKey: 'roll-key',
  waitForWave: 'wait-for-wave',
  acquireSlot: 'acquire-slot',
  synthesize: 'synthesize',
  publish: 'publish',
  changeSet: 'change-set',
  execute: 'execute',
  cleanConfigObjects: 'clean-config-objects',
} as const;
export type TaskName = (typeof TASK)[keyof typeof TASK];

/** "UPDATE_ROLLBACK_COMPLETE" → "UpdateRollbackComplete" (condition reasons are CamelCase). */
export function camel(status: string): string {
  return status
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');
}
