import * as fs from 'node:fs';
import * as os from 'node:os';
import { UsageError } from '../errors';
import { KubeClient } from '../kube/client';
import { apiLeaseStore, LeaderElector } from '../kube/leader-election';
import { Logger, ReconcilerDeps } from '../reconciler/context';
import { fencedAws } from '../reconciler/leader-fence';
import { StoreOptions } from '../stores/create-store';
import { wholeNumber } from './numbers';

/** Leader-election flags of `reconcile --watch` (on by default with --store kubernetes). */
export function leaderFlags<C extends { option: (flags: string, description: string, ...rest: any[]) => C }>(c: C): C {
  return c
    .option('--no-leader-elect', '--store kubernetes --watch: run without leader election (one replica only)')
    .option('--leader-election-namespace <ns>', 'namespace of the Lease (default the pod namespace, else the store namespace, else default)')
    .option('--leader-election-id <name>', 'name of the Lease', 'worker-stacks')
    .option('--lease-duration-seconds <n>', 'how long a lease not renewed stays taken', wholeNumber(2, 3600), 15)
    .option('--renew-deadline-seconds <n>', 'the leader stops (and starts no AWS write) when it could not renew for this long', wholeNumber(1, 3600), 10)
    .option('--retry-period-seconds <n>', 'between acquire and renew attempts', wholeNumber(1, 3600), 2);
}

const SA_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

/**
 * The elector for this replica, and the deps with their AWS writes behind its fence; undefined when leader election
 * is off (the file store, --once, --no-leader-elect).
 */
export function leadershipFor(opts: Record<string, any>, store: StoreOptions, deps: ReconcilerDeps, log: Logger): { elector: LeaderElector; deps: ReconcilerDeps } | undefined {
  if (store.kind !== 'kubernetes' || !opts.watch || opts.leaderElect === false) return undefined;
  if (!(opts.leaseDurationSeconds > opts.renewDeadlineSeconds && opts.renewDeadlineSeconds > opts.retryPeriodSeconds)) {
    throw new UsageError(`leader election needs --lease-duration-seconds (${opts.leaseDurationSeconds}) > --renew-deadline-seconds (${opts.renewDeadlineSeconds}) > --retry-period-seconds (${opts.retryPeriodSeconds})`);
  }
  const client = KubeClient.fromOptions({ kubeconfig: store.kubernetes?.kubeconfig });
  const namespace = opts.leaderElectionNamespace ?? process.env.POD_NAMESPACE ?? readIfExists(SA_NAMESPACE) ?? store.kubernetes?.namespace ?? client.defaultNamespace;
  // The pod name (HOSTNAME in a pod) plus the pid: two processes on one machine are two candidates.
  const identity = `${process.env.POD_NAME ?? os.hostname()}_${process.pid}`;
  const elector = new LeaderElector(apiLeaseStore(client, namespace, opts.leaderElectionId), {
    identity,
    namespace,
    name: opts.leaderElectionId,
    leaseDurationMs: opts.leaseDurationSeconds * 1000,
    renewDeadlineMs: opts.renewDeadlineSeconds * 1000,
    retryPeriodMs: opts.retryPeriodSeconds * 1000,
    onNewLeader: (holder) => log.info({ lease: `${namespace}/${opts.leaderElectionId}`, holder, self: holder === identity }, 'leader'),
    onError: (e) => log.warn({ lease: `${namespace}/${opts.leaderElectionId}`, err: String(e) }, 'lease attempt failed'),
  });
  return { elector, deps: { ...deps, aws: fencedAws(deps.aws, elector.check) } };
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}
