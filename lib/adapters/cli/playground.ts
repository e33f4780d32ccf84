import * as path from 'node:path';
import { Command } from 'commander';
import { WorkerStacksError } from '../../core/errors';
import { PROJECT_ROOT } from '../../core/paths';
import { Session, startSession } from '../playground/session';
import { MISSING_IMAGE, runSteps, StepName, STEPS, waitFor, waitForReady } from '../playground/steps';
import { EXIT, Io } from './context';
import { wholeNumber } from './numbers';

/** `worker-stacks playground` (`npm run playground`): the whole loop on this machine, against moto. */
export function registerPlayground(program: Command, io: Io, done: (code: number) => void): void {
  program
    .command('playground')
    .description(
      'start moto, move the example clusters into it, bootstrap, run the daemon; Ctrl-C stops it all and removes the scratch directory',
    )
    .option('--keep', 'keep the scratch directory (objects, status, daemon.log) when it stops')
    .option(
      '--steps <list>',
      `run these steps, comma-separated, then stop (no prompt; one JSON report per step on stdout): ${STEPS.join(',')}`,
    )
    .option(
      '--in-progress-seconds <n>',
      'how long each stack operation stays *_IN_PROGRESS in moto',
      wholeNumber(0, 600),
      3,
    )
    .option('--max-update-attempts <n>', "the daemon's --max-update-attempts", wholeNumber(1, 100), 2)
    .action(async (opts: PlaygroundFlags) => {
      const steps = opts.steps === undefined ? undefined : opts.steps.split(',').map((s) => s.trim());
      const unknown = steps?.filter((s) => !(STEPS as readonly string[]).includes(s));
      if (unknown?.length) {
        io.err(`error: --steps: unknown step ${unknown.join(', ')}; the steps are ${STEPS.join(', ')}\n`);
        done(EXIT.usage);
        return;
      }
      done(
        await playground(io, {
          keep: Boolean(opts.keep),
          steps: steps as StepName[] | undefined,
          inProgressSeconds: opts.inProgressSeconds,
          maxUpdateAttempts: opts.maxUpdateAttempts,
        }),
      );
    });
}

/** The parsed flags of `playground`. */
interface PlaygroundFlags {
  /** --keep. @default false */
  readonly keep?: boolean;
  /** --steps <list>, comma-separated (checked by the command). @default interactive */
  readonly steps?: string;
  /** --in-progress-seconds <n>. @default 3 */
  readonly inProgressSeconds: number;
  /** --max-update-attempts <n>. @default 2 */
  readonly maxUpdateAttempts: number;
}

interface PlaygroundOptions {
  readonly keep: boolean;
  readonly steps?: readonly StepName[];
  readonly inProgressSeconds: number;
  readonly maxUpdateAttempts: number;
}

async function playground(io: Io, opts: PlaygroundOptions): Promise<number> {
  // With --steps, stdout carries only the JSON reports; what a person reads goes to stderr.
  const say = (line: string) => (opts.steps ? io.err : io.out)(`${line}\n`);
  const report = (r: object) => io.out(`${JSON.stringify(r)}\n`);
  // Set by a signal while the awaits below are under way: read through a function, never narrowed as a local.
  const stop = new AbortController();
  const stopping = () => stop.signal.aborted;
  const stopped = new Promise<void>((r) => stop.signal.addEventListener('abort', () => r(), { once: true }));
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let session: Session | undefined;
  try {
    session = await startSession({
      inProgressSeconds: opts.inProgressSeconds,
      maxUpdateAttempts: opts.maxUpdateAttempts,
      progress: say,
      daemonLog: (line) => warnings(line, say),
    });
    const s = session;
    if (opts.steps) {
      report({
        step: 'start',
        dir: s.dir,
        endpoint: s.moto.endpoint,
        opsUrl: s.opsUrl,
        pids: { moto: s.moto.pid, daemon: s.daemonPid },
      });
      await Promise.race([
        runSteps(s, opts.steps, report, { progress: say }),
        stopped.then(() => Promise.reject(new WorkerStacksError('interrupted'))),
      ]);
      return EXIT.ok;
    }
    say('waiting for every cluster to be Ready (create change sets, executed, watched by the daemon) ...');
    await waitForReady(s, { progress: say }, stopping);
    if (!stopping()) {
      say(tryNext(s, opts));
      await waitFor(s, 'Ctrl-C', stopping, { progress: say, timeoutMs: Number.POSITIVE_INFINITY });
    }
    return EXIT.ok;
  } catch (e) {
    say(`error: ${(e as Error).message}`);
    return EXIT.invalid;
  } finally {
    say(`stopping the daemon and moto${opts.keep ? '' : ', removing the scratch directory'} ...`);
    await session?.stop(opts.keep);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (session) say(opts.keep ? `stopped; kept ${session.dir}` : 'stopped; scratch directory removed');
    if (opts.steps) report({ step: 'stop', dir: session?.dir, kept: opts.keep });
  }
}

/** The daemon's warnings and errors, one readable line each (everything it logs is in daemon.log). */
function warnings(line: string, say: (l: string) => void): void {
  try {
    const l = JSON.parse(line) as { level?: number; cluster?: string; msg?: string };
    const level = l.level ?? 0;
    if (level >= 40) say(`  daemon ${level >= 50 ? 'error' : 'warning'}${l.cluster ? ` ${l.cluster}` : ''}: ${l.msg}`);
  } catch {
    // not a log line (a Node.js warning, say): it is in daemon.log
  }
}

/** What to try next, with this session's own paths and port. */
function tryNext(s: Session, opts: PlaygroundOptions): string {
  const rel = path.relative(process.cwd(), PROJECT_ROOT) || '.';
  const cli = rel === '.' ? 'npx worker-stacks' : `node ${path.join(rel, 'bin/worker-stacks.js')}`;
  return `
Every cluster is Ready. The daemon watches ${s.clustersDir} and ${s.templatesDir}; in another terminal:

  export WORKER_STACKS_CLUSTERS=${s.clustersDir} WORKER_STACKS_TEMPLATES=${s.templatesDir}
  ${cli} status --wide                     # desired vs live checksum, stack status, Ready and why

  # roll the nodes: change a config template; only the clusters that use it get a new checksum and launch template version
  echo '# my change' >> $WORKER_STACKS_TEMPLATES/flatcar-worker/bootstrap-token.sh.hbs

  # break a value: validation refuses it before AWS sees it (Stalled, InvalidSpec); undo it and the cluster recovers
  sed -i 's/maxSize: 4/maxSize: 0/' $WORKER_STACKS_CLUSTERS/staging-us1.yaml && ${cli} validate

  # make a stack fail: an image EC2 does not know; CloudFormation rolls back, ${opts.maxUpdateAttempts} attempts, then Stalled (UpdateFailed)
  sed -i 's/machineImage: .*/machineImage: ${MISSING_IMAGE}/' $WORKER_STACKS_CLUSTERS/staging-us1.yaml
  ${cli} retry staging-us1                 # after fixing it (or to try the same inputs again)

  curl -s ${s.opsUrl}/metrics | grep '^worker_stacks_'
  tail -f ${path.join(s.dir, 'daemon.log')}          # the daemon's JSON log

Changes show below as they happen. Ctrl-C stops the daemon and moto and removes ${s.dir}${opts.keep ? ' (not: --keep)' : ' (--keep keeps it)'}.
`;
}
