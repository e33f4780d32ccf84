import { Command } from 'commander';
import { RolloutCoordinator, formatRolloutReport, recordedStack, rolloutReport } from '../../engines/rollout';
import { channelWaves, formatChannelWaves } from '../../engines/channels';
import { imageResolver } from '../../model/channel/image-pins';
import { createChannelStore, createPolicySource, createStore } from '../stores/registry';
import { WorkerStacksError } from '../../core/errors';
import { DirOptions, dirFlags, EXIT, inputDirs, Io } from './context';
import { clusterArgument, storeFlags, storeOptions } from './store-flags';

/** The parsed flags of `rollout status` (with the store flags, read by storeOptions). */
interface RolloutStatusOptions extends DirOptions {
  /** --state-dir <dir>. @default <clusters>/.status */
  readonly stateDir?: string;
  /** -o, --output <format>: text or json. @default text */
  readonly output: string;
}

/**
 * `worker-stacks rollout status|pause|resume`: where a fleet rollout is (per wave: settled, rolling, waiting,
 * halted, with the clusters and why), from the objects and the stacks as last recorded (no AWS call, nothing
 * written); pause and resume set spec.paused of a WorkerRolloutPolicy, which the reconciler sees level-based. The
 * policies are those of the store --store names (files beside the clusters, or WorkerRolloutPolicy objects).
 */
export function registerRollout(program: Command, io: Io, done: (code: number) => void): void {
  const rollout = program
    .command('rollout')
    .description(
      'fleet rollouts in waves: status, pause, resume (WorkerRolloutPolicy objects: <clusters>/rollout-policies/, or custom resources)',
    );
  storeFlags(dirFlags(rollout.command('status')))
    .description(
      'per policy and wave: settled / rolling / waiting / halted, with the clusters and why; per image channel and wave: the release each cluster runs and waits for (reads only)',
    )
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (opts: RolloutStatusOptions) => {
      const dirs = inputDirs(opts);
      const where = storeOptions(opts, dirs);
      const opened = createStore(where);
      const store = opened.store;
      const policies = createPolicySource(where);
      try {
        // The image channels (a store that keeps them): the pins every cluster's desired config is read with, and
        // the per-channel view of the waves.
        const channelStore = createChannelStore(where);
        const channels = (await channelStore?.load().finally(() => channelStore.close?.()))?.channels ?? [];
        const images = imageResolver(channels);
        const coordinator = new RolloutCoordinator({
          store,
          policies,
          stackOf: (r) => Promise.resolve(recordedStack(r)),
          templatesDir: dirs.templatesDir,
          images: () => images,
          code: 'cli',
          now: () => new Date(),
        });
        const fleet = await coordinator.snapshot(true);
        const report = rolloutReport(fleet, new Date());
        const waves = channels.length ? channelWaves(fleet, report, await store.list(), channels) : [];
        io.out(
          opts.output === 'json'
            ? `${JSON.stringify({ ...report, ...(waves.length ? { channels: waves } : {}) }, undefined, 2)}\n`
            : `${formatRolloutReport(report)}${waves.length ? `\n${formatChannelWaves(waves)}` : ''}`,
        );
        done(report.problems.length ? EXIT.invalid : EXIT.ok);
      } finally {
        opened.close();
        policies.close?.();
      }
    });
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    storeFlags(dirFlags(rollout.command(name)))
      .description(
        paused
          ? 'stop starting rolls of a policy’s clusters (sets spec.paused; rolls under way finish)'
          : 'let the policy’s rolls start again (removes spec.paused)',
      )
      .argument('<policy>', 'policy name (metadata.name; namespace/name with --store kubernetes)')
      .action(async (arg: string, opts: DirOptions) => {
        const { name: policy, store } = clusterArgument(arg, storeOptions(opts, inputDirs(opts)), 'a policy');
        const source = createPolicySource(store);
        try {
          await source.setPaused(policy, paused);
        } catch (e) {
          if (!(e instanceof WorkerStacksError)) throw e;
          io.err(`error: ${e.message}\n`);
          done(EXIT.usage);
          return;
        } finally {
          source.close?.();
        }
        io.out(
          paused
            ? `rollout policy ${arg}: paused; no roll of its clusters starts (rolls under way finish)\n`
            : `rollout policy ${arg}: resumed; held rolls start as the waves allow (a running daemon sees the edit at once)\n`,
        );
        done(EXIT.ok);
      });
  }
}
