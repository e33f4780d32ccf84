import { Command } from 'commander';
import { createStore } from '../stores/create-store';
import { dirFlags, EXIT, inputDirs, Io } from './context';

/**
 * Operator controls for 3 a.m.: `pause` and `resume` set spec.paused on the object (no AWS writes while paused; a
 * wait under way goes on); `retry` asks the reconciler to try a stalled cluster's inputs again, clearing the failure
 * count and the backoff. Both go through the store, so the reconciler sees them level-based, as any other change.
 */
export function registerControl(program: Command, io: Io, done: (code: number) => void): void {
  /** The store, when the cluster exists in it; otherwise says so (exit 2). */
  const storeWith = async (cluster: string, opts: Record<string, any>) => {
    const dirs = inputDirs(opts);
    const s = createStore({ clustersDir: dirs.clustersDir, stateDir: opts.stateDir });
    if (await s.get(cluster)) return s;
    io.err(`error: no cluster ${cluster}; run worker-stacks status to see the names\n`);
    done(EXIT.usage);
    return undefined;
  };
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    dirFlags(program.command(name))
      .description(paused ? 'stop every AWS write for a cluster (sets spec.paused: true)' : 'let the reconciler write again (removes spec.paused)')
      .argument('<cluster>', 'cluster name (metadata.name)')
      .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
      .action(async (cluster: string, opts) => {
        const s = await storeWith(cluster, opts);
        if (!s) return;
        await s.setPaused(cluster, paused);
        io.out(`${cluster}: ${paused ? 'paused: the reconciler makes no AWS write for it until resumed' : 'resumed: the reconciler picks it up at once (a running daemon sees the edit)'}\n`);
        return done(EXIT.ok);
      });
  }
  dirFlags(program.command('retry'))
    .description("retry a stalled cluster's inputs now: clears the failure count and the backoff")
    .argument('<cluster>', 'cluster name (metadata.name)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .action(async (cluster: string, opts) => {
      const s = await storeWith(cluster, opts);
      if (!s) return;
      await s.requestRetry(cluster, new Date().toISOString());
      io.out(`${cluster}: retry requested; the next reconcile tries the current inputs again (worker-stacks reconcile --once, or the daemon)\n`);
      return done(EXIT.ok);
    });
}
