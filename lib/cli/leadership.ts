import * as fs from 'node:fs';
import * as os from 'node:os';
import { Command } from 'commander';
import { UsageError } from '../errors';
import { KubeClient } from '../kube/client';
import { LabelSelector } from '../kube/label-selector';
import { apiLeaseStore, LeaderElector } from '../kube/leader-election';
import { checkShardName, describeScope, ShardMonitor, shardGuard, shardLeaseMetadata, shardLeaseName, ShardScope } from '../kube/shards';
import { Logger, ReconcilerDeps } from '../reconciler/workflow/context';
import { fencedAws } from '../reconciler/runtime/leader-fence';
import { StoreOptions } from '../stores/create-store';
import { wholeNumber } from './numbers';

/** Leader-election flags of `reconcile --watch` (on by default with --store kubernetes). */
export function leaderFlags(c: Command): Command {
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

/** The parsed leaderFlags. */
export interface LeaderOptions {
  /** false with --no-leader-elect. @default true */
  readonly leaderElect?: boolean;
  /** --leader-election-namespace <ns>. @default $POD_NAMESPACE, the pod's, the store's, else the kubeconfig's */
  readonly leaderElectionNamespace?: string;
  /** --shard <name>. @default named from the selector and the namespace */
  readonly shard?: string;
  /** --shard-check-seconds <n>. @default 60 */
  readonly shardCheckSeconds: number;
  /** --leader-election-id <name>. @default the shard's Lease name */
  readonly leaderElectionId?: string;
  /** --lease-duration-seconds <n>. @default 15 */
  readonly leaseDurationSeconds: number;
  /** --renew-deadline-seconds <n>. @default 10 */
  readonly renewDeadlineSeconds: number;
  /** --retry-period-seconds <n>. @default 2 */
  readonly retryPeriodSeconds: number;
  /** --watch of `reconcile`: leader election is for the daemon only. @default false */
  readonly watch?: boolean;
}

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The elector for this replica, and the deps with their AWS writes behind its fence; undefined when leader election
 * is off (the file store, --once, --no-leader-elect).
 */
export function leadershipFor(opts: LeaderOptions, store: StoreOptions, deps: ReconcilerDeps, log: Logger): { elector: LeaderElector; deps: ReconcilerDeps } | undefined {
  if (opts.shard !== undefined && store.kind !== 'kubernetes') throw new UsageError('--shard is for --store kubernetes (a shard is a label selector over WorkerClusters)');
  if (store.kind !== 'kubernetes' || !opts.watch || opts.leaderElect === false) return undefined;
  if (!(opts.leaseDurationSeconds > opts.renewDeadlineSeconds && opts.renewDeadlineSeconds > opts.retryPeriodSeconds)) {
    throw new UsageError(`leader election needs --lease-duration-seconds (${opts.leaseDurationSeconds}) > --renew-deadline-seconds (${opts.renewDeadlineSeconds}) > --retry-period-seconds (${opts.retryPeriodSeconds})`);
  }
  const client = KubeClient.fromOptions({ kubeconfig: store.kubernetes?.kubeconfig });
  const namespace = opts.leaderElectionNamespace ?? process.env.POD_NAMESPACE ?? readIfExists(SA_NAMESPACE) ?? store.kubernetes?.namespace ?? client.defaultNamespace;
  // The shard: which objects this daemon owns. Its Lease is named from it, so two shards never share one.
  const k = store.kubernetes ?? {};
  const scope: ShardScope = { shard: opts.shard, namespace: k.allNamespaces ? undefined : (k.namespace ?? client.defaultNamespace), selector: LabelSelector.parse(k.labelSelector) };
  const leaseName = opts.leaderElectionId ?? shardLeaseName(scope);
  const lease = `${namespace}/${leaseName}`;
  // The pod name (HOSTNAME in a pod) plus the pid: two processes on one machine are two candidates.
  const identity = `${process.env.POD_NAME ?? os.hostname()}_${process.pid}`;
  const shard = { client, leaseNamespace: namespace, leaseName, scope, log, checkIntervalMs: opts.shardCheckSeconds * 1000 };
  const elector = new LeaderElector(apiLeaseStore(client, namespace, leaseName), {
    identity,
    namespace,
    name: leaseName,
    leaseDurationMs: opts.leaseDurationSeconds * 1000,
    renewDeadlineMs: opts.renewDeadlineSeconds * 1000,
    retryPeriodMs: opts.retryPeriodSeconds * 1000,
    metadata: shardLeaseMetadata(scope),
    guard: shardGuard(shard),
    onNewLeader: (holder) => log.info({ lease, holder, self: holder === identity }, 'leader'),
    onError: (e) => log.warn({ lease, err: String(e) }, 'lease attempt failed'),
  });
  log.info({ lease, shard: describeScope(scope) }, 'campaigning for the shard\'s Lease');
  // While leading: who owns what (objects no shard selects, or two), counted, logged and reported.
  const monitor = new ShardMonitor(shard);
  elector.subscribe((leading) => (leading ? monitor.start() : void monitor.stop()));
  return { elector, deps: { ...deps, aws: fencedAws(deps.aws, elector.check) } };
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
