import { Command } from 'commander';
import { ClusterStore } from '../../model/ports/cluster-store';
import { createStore } from '../stores/registry';
import { DirOptions, dirFlags, EXIT, inputDirs, Io } from './context';
import { clusterArgument, storeFlags, storeOptions } from './store-flags';

/** The parsed flags of `pause`, `resume` and `retry` (with the store flags, read by storeOptions). */
interface ControlOptions extends DirOptions {
  /** --state-dir <dir>. @default <clusters>/.status */
  readonly stateDir?: string;
}

/**
 * Operator controls for 3 a.m.: `pause` and `resume` set spec.paused on the object (no AWS writes while paused; a
 * wait under way goes on); `retry` asks the reconciler to try a stalled cluster's inputs again, clearing the failure
 * count and the backoff. Both go through the store, so the reconciler sees them level-based, as any other change.
 */
export function registerControl(program: Command, io: Io, done: (code: number) => void): void {
  /** Runs `act` on the cluster's store when the cluster exists in it, then says `said` (exit 0); otherwise says so (exit 2). */
  const onCluster = async (
    arg: string,
    opts: ControlOptions,
    act: (s: ClusterStore, cluster: string) => Promise<void>,
    said: string,
  ): Promise<void> => {
    const { name: cluster, store } = clusterArgument(arg, storeOptions(opts, inputDirs(opts)));
    const opened = createStore(store);
    const s = opened.store;
    try {
      if (!(await s.get(cluster))) {
        io.err(`error: no cluster ${arg}; run worker-stacks status to see the names\n`);
        done(EXIT.usage);
        return;
      }
      await act(s, cluster);
    } finally {
      opened.close();
    }
    io.out(`${cluster}: ${said}\n`);
    done(EXIT.ok);
  };
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    storeFlags(dirFlags(program.command(name)))
      .description(
        paused
          ? 'stop every AWS write for a cluster (sets spec.paused: true)'
          : 'let the reconciler write again (removes spec.paused)',
      )
      .argument('<cluster>', 'cluster name (metadata.name; namespace/name with --store kubernetes)')
      .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
      .action((arg: string, opts: ControlOptions) =>
        onCluster(
          arg,
          opts,
          (s, cluster) => s.setPaused(cluster, paused),
          paused
            ? 'paused: the reconciler makes no AWS write for it until resumed'
            : 'resumed: the reconciler picks it up at once (a running daemon sees the edit)',
        ),
      );
  }
  storeFlags(dirFlags(program.command('retry')))
    .description("retry a stalled cluster's inputs now: clears the failure count and the backoff")
    .argument('<cluster>', 'cluster name (metadata.name; namespace/name with --store kubernetes)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .action((arg: string, opts: ControlOptions) =>
      onCluster(
        arg,
        opts,
        (s, cluster) => s.requestRetry(cluster, new Date().toISOString()),
        'retry requested; the next reconcile tries the current inputs again (worker-stacks reconcile --once, or the daemon)',
      ),
    );
}
