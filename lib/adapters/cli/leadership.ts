import { Command } from 'commander';
import { UsageError } from '../../core/errors';
import type { LeaderElector } from '../../platform/kube/leader-election';
import { checkShardName } from '../../platform/kube/shards';
import { ReconcilerDeps, fencedAws } from '../../engines/reconciler';
import { Logger } from '../../core/logger';
import { kindsWith, leaderElectorFor, StoreOptions } from '../stores/registry';
import { wholeNumber } from './numbers';

/** The defaults of the leader election flags (seconds). */
const DEFAULTS = {
  shardCheckSeconds: 60,
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
} as const;

/** Leader-election flags of `reconcile --watch` (on by default with --store kubernetes). */
export function leaderFlags(c: Command): Command {
  return c
    .option('--no-leader-elect', '--store kubernetes --watch: run without leader election (one replica only)')
    .option(
      '--leader-election-namespace <ns>',
      'namespace of the Lease (default the pod namespace, else the store namespace, else default)',
    )
    .option(
      '--shard <name>',
      "--store kubernetes: this shard's name: its Lease is worker-stacks-<name> (default: named from -l and the namespace; worker-stacks for the whole fleet)",
      checkShardName,
    )
    .option(
      '--shard-check-seconds <n>',
      'while leading, how often to look for WorkerClusters no shard (or two) selects',
      wholeNumber(5, 3600),
      DEFAULTS.shardCheckSeconds,
    )
    .option('--leader-election-id <name>', "name of the Lease (default: the shard's, see --shard)")
    .option(
      '--lease-duration-seconds <n>',
      'how long a lease not renewed stays taken',
      wholeNumber(2, 3600),
      DEFAULTS.leaseDurationSeconds,
    )
    .option(
      '--renew-deadline-seconds <n>',
      'the leader stops (and starts no AWS write) when it could not renew for this long',
      wholeNumber(1, 3600),
      DEFAULTS.renewDeadlineSeconds,
    )
    .option(
      '--retry-period-seconds <n>',
      'between acquire and renew attempts',
      wholeNumber(1, 3600),
      DEFAULTS.retryPeriodSeconds,
    );
}

/** The flags leaderFlags declares, as commander parses them, and the mode (--watch). */
export interface LeaderFlagValues {
  readonly watch?: boolean;
  /** --no-leader-elect makes it false. */
  readonly leaderElect?: boolean;
  readonly shard?: string;
  readonly leaderElectionNamespace?: string;
  readonly leaderElectionId?: string;
  /** @default 15 */
  readonly leaseDurationSeconds?: number;
  /** @default 10 */
  readonly renewDeadlineSeconds?: number;
  /** @default 2 */
  readonly retryPeriodSeconds?: number;
  /** @default 60 */
  readonly shardCheckSeconds?: number;
}

/**
 * The elector for this replica, and the deps with their AWS writes behind its fence; undefined when leader election
 * is off (a store without leases, such as the file store; --once; --no-leader-elect).
 */
export function leadershipFor(
  flags: LeaderFlagValues,
  store: StoreOptions,
  deps: ReconcilerDeps,
  log: Logger,
): { elector: LeaderElector; deps: ReconcilerDeps } | undefined {
  const opts = { ...DEFAULTS, ...flags };
  const electing = kindsWith('leaderElection');
  if (opts.shard !== undefined && !electing.includes(store.kind))
    throw new UsageError(
      `--shard is for --store ${electing.join(' or ')} (a shard is a label selector over WorkerClusters)`,
    );
  if (!electing.includes(store.kind) || !opts.watch || opts.leaderElect === false) return undefined;
  if (!(opts.leaseDurationSeconds > opts.renewDeadlineSeconds && opts.renewDeadlineSeconds > opts.retryPeriodSeconds)) {
    throw new UsageError(
      `leader election needs --lease-duration-seconds (${String(opts.leaseDurationSeconds)}) > --renew-deadline-seconds (${String(opts.renewDeadlineSeconds)}) > --retry-period-seconds (${String(opts.retryPeriodSeconds)})`,
    );
  }
  const elector = leaderElectorFor(
    store,
    {
      shard: opts.shard,
      leaseNamespace: opts.leaderElectionNamespace,
      leaseName: opts.leaderElectionId,
      leaseDurationMs: opts.leaseDurationSeconds * 1000,
      renewDeadlineMs: opts.renewDeadlineSeconds * 1000,
      retryPeriodMs: opts.retryPeriodSeconds * 1000,
      shardCheckMs: opts.shardCheckSeconds * 1000,
    },
    log,
  );
  return elector && { elector, deps: { ...deps, aws: fencedAws(deps.aws, elector.check) } };
}
