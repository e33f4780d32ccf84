import { Command } from 'commander';
import { RolloutCoordinator } from '../rollout/coordinator';
import { FilePolicySource } from '../rollout/policy-source';
import { formatRolloutReport, recordedStack, rolloutReport } from '../rollout/report';
import { createStore } from '../stores/create-store';
import { WorkerStacksError } from '../errors';
import { dirFlags, EXIT, inputDirs, Io } from './context';

/**
 * `worker-stacks rollout status|pause|resume`: where a fleet rollout is (per wave: settled, rolling, waiting,
 * halted, with the clusters and why), from the objects and the stacks as last recorded (no AWS call, nothing
 * written); pause and resume set spec.paused of a WorkerRolloutPolicy, which the reconciler sees level-based.
 */
export function registerRollout(program: Command, io: Io, done: (code: number) => void): void {
  const rollout = program.command('rollout').description('fleet rollouts in waves: status, pause, resume (WorkerRolloutPolicy objects in <clusters>/rollout-policies/)');
  dirFlags(rollout.command('status'))
    .description('per policy and wave: settled / rolling / waiting / halted, with the clusters and why (reads only)')
    .option('--state-dir <dir>', 'where status files are kept (default <clusters>/.status)')
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (opts) => {
      const dirs = inputDirs(opts);
      const store = createStore({ clustersDir: dirs.clustersDir, stateDir: opts.stateDir });
      const policies = new FilePolicySource({ clustersDir: dirs.clustersDir });
      const coordinator = new RolloutCoordinator({ store, policies, stackOf: async (r) => recordedStack(r), templatesDir: dirs.templatesDir, code: 'cli', now: () => new Date() });
      const report = rolloutReport(await coordinator.snapshot(true), new Date());
      io.out(opts.output === 'json' ? `${JSON.stringify(report, undefined, 2)}\n` : formatRolloutReport(report));
      done(report.problems.length ? EXIT.invalid : EXIT.ok);
    });
  for (const [name, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    dirFlags(rollout.command(name))
      .description(paused ? 'stop starting rolls of a policy’s clusters (sets spec.paused; rolls under way finish)' : 'let the policy’s rolls start again (removes spec.paused)')
      .argument('<policy>', 'policy name (metadata.name)')
      .action(async (policy: string, opts) => {
        try {
          await new FilePolicySource({ clustersDir: inputDirs(opts).clustersDir }).setPaused(policy, paused);
        } catch (e) {
          if (!(e instanceof WorkerStacksError)) throw e;
          io.err(`error: ${e.message}\n`);
          return done(EXIT.usage);
        }
        io.out(paused ? `rollout policy ${policy}: paused; no roll of its clusters starts (rolls under way finish)\n` : `rollout policy ${policy}: resumed; held rolls start as the waves allow (a running daemon sees the edit at once)\n`);
        return done(EXIT.ok);
      });
  }
}
