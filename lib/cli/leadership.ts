import { UsageError } from '../errors';
import type { LeaderElector } from '../kube/leader-election';
import { checkShardName } from '../kube/shards';
import { Logger, ReconcilerDeps } from '../reconciler/workflow/context';
import { fencedAws } from '../reconciler/runtime/leader-fence';
import { kindsWith, leaderElectorFor, StoreOptions } from '../stores/registry';
import { wholeNumber } from './numbers';

/** Leader-election flags of `reconcile --watch` (on by default with --store kubernetes). */
export function leaderFlags<C extends { option: (flags: string, description: string, ...rest: any[]) => C }>(c: C): C {
  return c
    .option('--no-leader-elect', '--store kubernetes --watch: run without leader election (one replica only)')
    .option('--leader-election-namespace <ns>', 'namespace of the Lease (default the pod namespace, else the store namespace, else default)')
    .option('--shard <name>', '--store kubernetes: this shard\'s name: its Lease is worker-stacks-<name> (default: named from -l and the namespace; worker-stacks for the whole fleet)', checkShardName)
    .option('--shard-check-seconds <n>', 'while leading, how often to look for WorkerClusters no shard (or two) selects', wholeNumber(5, 3600), 60)
    .option('--leader-election-id <name>', 'name of the Lease (default: the shard\'s, see --shard)')
    .option('--lease-duration-seconds <n>', 'how long a lease not renewed stays taken', wholeNumber(2, 3600), 15)
    .option('--renew-deadline-seconds <n>', 'the leader stops (and starts no AWS write) when it could not renew for this long', wholeNumber(1, 3600), 10)
    .option('--retry-period-seconds <n>', 'between acquire and renew attempts', wholeNumber(1, 3600), 2);
}

/**
 * The elector for this replica, and the deps with their AWS writes behind its fence; undefined when leader election
 * is off (a store without leases, such as the file store; --once; --no-leader-elect).
 */
export function leadershipFor(opts: Record<string, any>, store: StoreOptions, deps: ReconcilerDeps, log: Logger): { elector: LeaderElector; deps: ReconcilerDeps } | undefined {
  const electing = kindsWith('leaderElection');
  if (opts.shard !== undefined && !electing.includes(store.kind)) throw new UsageError(`--shard is for --store ${electing.join(' or ')} (a shard is a label selector over WorkerClusters)`);
  if (!electing.includes(store.kind) || !opts.watch || opts.leaderElect === false) return undefined;
  if (!(opts.leaseDurationSeconds > opts.renewDeadlineSeconds && opts.renewDeadlineSeconds > opts.retryPeriodSeconds)) {
    throw new UsageError(`leader election needs --lease-duration-seconds (${opts.leaseDurationSeconds}) > --renew-deadline-seconds (${opts.renewDeadlineSeconds}) > --retry-period-seconds (${opts.retryPeriodSeconds})`);
  }
  const elector = leaderElectorFor(store, {
    shard: opts.shard,
    leaseNamespace: opts.leaderElectionNamespace,
    leaseName: opts.leaderElectionId,
    leaseDurationMs: opts.leaseDurationSeconds * 1000,
    renewDeadlineMs: opts.renewDeadlineSeconds * 1000,
    retryPeriodMs: opts.retryPeriodSeconds * 1000,
    shardCheckMs: (opts.shardCheckSeconds ?? 60) * 1000,
  }, log);
  return elector && { elector, deps: { ...deps, aws: fencedAws(deps.aws, elector.check) } };
}
