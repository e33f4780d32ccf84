import { Command } from 'commander';
import { createStore, StoreWithHistory } from '../stores/create-store';
import { dirFlags, EXIT, inputDirs, Io } from './context';
import { clusterArgument, storeFlags, storeOptions } from './store-flags';

/**
 * Operator controls for 3 a.m.: `pause` and `resume` set spec.paused on the object (no AWS writes while paused; a
 * wait under way goes on); `retry` asks the reconciler to try a stalled cluster's inputs again, clearing the failure
 * count and the backoff. Both go through the store, so the reconciler sees them level-based, as any other change.
 */
export function registerControl(program: Command, io: Io, done: (code: number) => void): void {
  /** The store, when the cluster exists in it; otherwise says so (exit 2). */
  const storeWith = async (arg: string, opts: Record<string, any>): Promise<{ s: StoreWithHistory; cluster: string } | undefined> => {
    const { name: cluster, store } = clusterArgument(arg, storeOptions(opts, inputDirs(opts)));
    const s = createStore(store);
    if (await s.get(cluster)) return { s, cluster };
    s.close?.();
    io.err(`error: no cluster ${arg}; run worker-stacks status to see the names\n`);
    done(EXIT.usage);
    return undefined;
  };
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    storeFlags(dirFlags(program.command(name)))
      .description(paused ? 'stop every AWS write for a cluster (sets spec.paused: true)' : 'let the reconciler write again (removes spec.paused)')
      .argument('<cluster>', 'cluster name (metadata.name; namespace/name with --store kubernetes)')
      .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
      .action(async (arg: string, opts) => {
        const found = await storeWith(arg, opts);
        if (!found) return;
        const { s, cluster } = found;
        await s.setPaused(cluster, paused).finally(() => s.close?.());
        io.out(`${cluster}: ${paused ? 'paused: the reconciler makes no AWS write for it until resumed' : 'resumed: the reconciler picks it up at once (a running daemon sees the edit)'}\n`);
        return done(EXIT.ok);
      });
  }
  storeFlags(dirFlags(program.command('retry')))
    .description("retry a stalled cluster's inputs now: clears the failure count and the backoff")
    .argument('<cluster>', 'cluster name (metadata.name; namespace/name with --store kubernetes)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .action(async (arg: string, opts) => {
      const found = await storeWith(arg, opts);
      if (!found) return;
      const { s, cluster } = found;
      await s.requestRetry(cluster, new Date().toISOString()).finally(() => s.close?.());
      io.out(`${cluster}: retry requested; the next reconcile tries the current inputs again (worker-stacks reconcile --once, or the daemon)\n`);
      return done(EXIT.ok);
    });
}
