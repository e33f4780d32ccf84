import * as fs from 'node:fs';
import * as os from 'node:os';
import { Command } from 'commander';
import {
  Controller,
  runDaemon,
  runDaemonWhileLeading,
  ReconcilerMetrics,
  startOpsServer,
  ReconcilerDeps,
  routeProcessWarnings,
} from '../../engines/reconciler';
import { registerKubeMetrics } from '../../platform/kube/kube-health';
import { registerRequestRateMetrics } from '../../platform/aws/request-rate-metrics';
import { SynthPool } from '../../engines/synthesis';
import { createChannelStore, createPolicySource } from '../stores/registry';
import { ChannelPins } from '../../engines/channels';
import { SdkImageSource } from '../../platform/aws/sdk-image-source';
import { createDeps } from './wiring';
import type { RolloutPolicySource } from '../../engines/rollout';
import { dirFlags, EXIT, inputDirs, Io } from './context';
import { wholeNumber } from './numbers';
import { awsFlags, WiringFlagOptions, wiringFrom } from './aws-flags';
import { LeaderFlagValues, leaderFlags, leadershipFor } from './leadership';
import { storeFlags, storeOptions } from './store-flags';
import type { LeaderElector } from '../../platform/kube/leader-election';
import { assumeRoleFlags } from './accounts';

/** The parsed flags of `reconcile`. */
interface ReconcileOptions extends WiringFlagOptions, LeaderFlagValues {
  /** --once. @default false */
  readonly once?: boolean;
  /** --watch. @default false */
  readonly watch?: boolean;
  /** --cluster <name...>. @default every cluster */
  readonly cluster?: readonly string[];
  /** --concurrency <n>. @default 4 */
  readonly concurrency: number;
  /** --workers <n>. @default 4 */
  readonly workers: number;
  /** --bind <address>. @default defaultBind() */
  readonly bind?: string;
  /** --log-level <level> (checked by the command). @default info */
  readonly logLevel: string;
  /** --resync-minutes <n>. @default 10 */
  readonly resyncMinutes: number;
  /** --grace-seconds <n>. @default 20 */
  readonly graceSeconds: number;
  /** --port <n>. @default no ops server */
  readonly port?: number;
  /** --synth-threads <n>. @default min(2, the machine's parallelism) */
  readonly synthThreads: number;
}

/** Results that leave a cluster where its object says it should be. */
const SETTLED = new Set(['unchanged', 'applied', 'no-changes', 'dry-run', 'paused', 'held', 'deleted']);
/** Where the ops endpoints listen by default: every interface in a container (probes come from the kubelet), loopback on a workstation. */
export function defaultBind(env: NodeJS.ProcessEnv = process.env): string {
  return env.KUBERNETES_SERVICE_HOST || fs.existsSync('/.dockerenv') || fs.existsSync('/run/.containerenv')
    ? '0.0.0.0'
    : '127.0.0.1';
}

/** `worker-stacks reconcile`: one pass (--once), or the daemon (--watch). */
export function registerReconcile(program: Command, io: Io, done: (code: number) => void): void {
  leaderFlags(storeFlags(assumeRoleFlags(awsFlags(dirFlags(program.command('reconcile'))))))
    .description('compare each cluster with its stack, update the stacks that differ, wait, record the checksum')
    .option('--once', 'one pass over every cluster, then exit (1 if any cluster failed or is invalid)')
    .option('--watch', 'the daemon: react to object changes, resync periodically, until SIGTERM')
    .option('--dry-run', 'say what would happen per cluster; touch nothing')
    .option('--cluster <name...>', 'only these clusters')
    .option('--concurrency <n>', 'worker stacks in progress at the same time, fleet-wide', wholeNumber(1, 1000), 4)
    .option(
      '--workers <n>',
      'reconciles running at the same time (none of them waits on a stack)',
      wholeNumber(1, 64),
      4,
    )
    .option('--bind <address>', 'address of the ops endpoints (default 0.0.0.0 in a container, 127.0.0.1 elsewhere)')
    .option('--log-level <level>', 'debug, info, warn or error', 'info')
    .option('--resync-minutes <n>', 'full pass interval in --watch mode', wholeNumber(1, 24 * 60), 10)
    .option(
      '--grace-seconds <n>',
      'on SIGTERM, how long work in hand may take to write its status (--watch)',
      wholeNumber(0, 600),
      20,
    )
    .option('--port <n>', 'serve /healthz, /readyz and /metrics on <bind>:<n> (--watch)', wholeNumber(1, 65535))
    .option(
      '--synth-threads <n>',
      'worker threads that synthesize stacks (0: in the main thread)',
      wholeNumber(0, 64),
      Math.min(2, os.availableParallelism()),
    )
    .option('--no-nag', 'skip cdk-nag during synthesis')
    .action(async (opts: ReconcileOptions) => {
      if (Boolean(opts.once) === Boolean(opts.watch)) {
        io.err('error: give exactly one of --once and --watch\n');
        done(EXIT.usage);
        return;
      }
      if (opts.drift !== 'repair' && opts.drift !== 'report') {
        io.err(`error: --drift ${opts.drift}: give repair or report\n`);
        done(EXIT.usage);
        return;
      }
      if (!['debug', 'info', 'warn', 'error'].includes(opts.logLevel)) {
        io.err(`error: --log-level ${opts.logLevel}: give debug, info, warn or error\n`);
        done(EXIT.usage);
        return;
      }
      const abort = new AbortController();
      const synthPool = opts.synthThreads > 0 ? new SynthPool({ size: opts.synthThreads }) : undefined;
      try {
        done(await reconcile(opts, io, abort, synthPool));
        return;
      } finally {
        await synthPool?.close();
      }
    });
}

/** One pass (--once) or the daemon (--watch); returns the exit code. */
async function reconcile(
  opts: ReconcileOptions,
  io: Io,
  abort: AbortController,
  synthPool: SynthPool | undefined,
): Promise<number> {
  const wiring = wiringFrom(opts, abort.signal);
  const created = createDeps({ ...wiring, synthPool }).deps;
  const leadership = leadershipFor(opts, wiring.store, created, created.log);
  const restoreWarnings = routeProcessWarnings(created.log);
  try {
    return await reconcileWith(leadership?.deps ?? created, opts, io, abort, leadership?.elector);
  } finally {
    restoreWarnings();
  }
}

async function reconcileWith(
  deps: ReconcilerDeps,
  opts: ReconcileOptions,
  io: Io,
  abort: AbortController,
  elector?: LeaderElector,
): Promise<number> {
  const metrics = new ReconcilerMetrics();
  // Watch health and shard ownership (lib/platform/kube/kube-health.ts), on the same registry.
  registerKubeMetrics(metrics.registry);
  // The daemon's own pacing of its CloudFormation requests (lib/platform/aws/request-rate.ts).
  registerRequestRateMetrics(metrics.registry);
  metrics.setLeader(!elector);
  elector?.subscribe((leading) => metrics.setLeader(leading));
  // Rollout policies of the store (<clusters>/rollout-policies/, or WorkerRolloutPolicy objects): none, no fleet gating.
  const policies = createPolicySource(storeOptions(opts, inputDirs(opts)));
  try {
    return await runWith(deps, opts, io, abort, policies, metrics, elector);
  } finally {
    // Events on the policies in flight are posted before the process exits; then the watch and connections go.
    await policies.flush?.();
    policies.close?.();
  }
}

async function runWith(
  deps: ReconcilerDeps,
  opts: ReconcileOptions,
  io: Io,
  abort: AbortController,
  policies: RolloutPolicySource,
  metrics: ReconcilerMetrics,
  elector?: LeaderElector,
): Promise<number> {
  // Image channels of the store (<clusters>/image-channels/): read with this process's own credentials, once a pass.
  const channelStore = createChannelStore(storeOptions(opts, inputDirs(opts)));
  const channels =
    channelStore &&
    new ChannelPins({ store: channelStore, source: new SdkImageSource(), now: deps.now, log: deps.log });
  const controller = new Controller(deps, {
    concurrency: opts.concurrency,
    workers: opts.workers,
    metrics,
    policies,
    channels,
  });
  const only = opts.cluster ? new Set<string>(opts.cluster) : undefined;
  if (opts.once) {
    // Stacks in progress are looked at again every poll until they settle or the wait timeout passes: no waiter per stack.
    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const outcomes = await controller
      .runUntilSettled({
        names: only,
        deadlineMs: opts.waitTimeoutMinutes * 60_000,
        sleep,
        now: Date.now,
        shouldStop: () => abort.signal.aborted,
      })
      .finally(() => channelStore?.close?.());
    await deps.events?.flush?.();
    for (const [name, o] of [...outcomes].sort()) io.out(`${name}\t${o.result}${o.message ? `\t${o.message}` : ''}\n`);
    // Anything not settled (failed, stalled, invalid, in backoff, still waiting) makes a scripted --once fail.
    const bad = [...outcomes.values()].some((o) => !SETTLED.has(o.result));
    return bad ? EXIT.invalid : EXIT.ok;
  }
  let ready = false;
  const stop = () => abort.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Readiness never depends on leadership: a follower that reaches the API server is ready (to take over).
  const isReady = () => (elector ? elector.reachable : ready) && !abort.signal.aborted;
  const server = opts.port ? await startOpsServer(opts.port, metrics, isReady, opts.bind ?? defaultBind()) : undefined;
  const daemonOpts = {
    resyncMs: opts.resyncMinutes * 60_000,
    graceMs: opts.graceSeconds * 1000,
    workers: opts.workers,
    onPass: () => (ready = true),
  };
  // The command runs until SIGTERM, whatever runs underneath: without --port, a follower waiting on its Lease runs no
  // daemon (whose resync timer holds the loop while it runs) and watches hold nothing, so this holds the process.
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  try {
    if (elector) await runDaemonWhileLeading(controller, deps, abort.signal, daemonOpts, elector);
    else await runDaemon(controller, deps, abort.signal, daemonOpts);
  } finally {
    clearInterval(keepAlive);
    channelStore?.close?.();
    server?.close();
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
  }
  return EXIT.ok;
}
