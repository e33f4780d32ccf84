import * as fs from 'node:fs';
import * as path from 'node:path';
import { Command, CommanderError } from 'commander';
import { PROJECT_ROOT } from '../../core/paths';
import { describeAwsError } from '../../platform/aws/aws-error';
import { UsageError } from '../../core/errors';
import { DirOptions, dirFlags, EXIT, inputDirs, Io, processIo } from './context';
import { renderCommand } from './render';
import { registerBootstrap } from './bootstrap';
import { registerChannels } from './channels';
import { registerControl } from './control';
import { registerDelete } from './delete';
import { registerKube } from './kube';
import { registerPlayground } from './playground';
import { registerReconcile } from './reconcile';
import { registerReview } from './review';
import { registerRollout } from './rollout';
import { registerStatus } from './status';
import { schemaCommand } from './schema';
import { validateCommand } from './validate';

const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };

/** A command module adds its command(s) to the program; `done` records the exit code. */
export type Register = (program: Command, io: Io, done: (code: number) => void) => void;

/** The `worker-stacks` command line. Returns the exit code instead of exiting, so tests run it in-process. */
export async function runCli(argv: readonly string[], io: Io = processIo): Promise<number> {
  let code: number = EXIT.ok;
  const done = (c: number) => {
    code = c;
  };
  const program = new Command('worker-stacks')
    .description('One WorkerCluster object per Kubernetes cluster -> one CloudFormation worker stack')
    .version(version)
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .showHelpAfterError();

  dirFlags(program.command('validate'))
    .description('check every cluster object; print every problem (file: field path: rule); exit 1 if any')
    .option('-o, --output <format>', 'text or json', 'text')
    .option(
      '--stack-limit <n>',
      "the accounts' CloudFormation stack quota per region, for the 80 % warning (default: 2000)",
    )
    .option('--live-stack-limit', "read each region's stack quota from CloudFormation (DescribeAccountLimits)")
    .option(
      '--objects <file>',
      'check these custom resources instead of --clusters (kubectl get workerclusters -A -o yaml; - for stdin): before an upgrade',
    )
    .action(
      async (
        opts: DirOptions & { readonly output: string; stackLimit?: string; liveStackLimit?: boolean; objects?: string },
      ) =>
        done(
          await validateCommand(inputDirs(opts), io, {
            output: opts.output,
            stackLimit: opts.stackLimit,
            liveStackLimit: Boolean(opts.liveStackLimit),
            objects: opts.objects,
          }),
        ),
    );
  dirFlags(program.command('render'))
    .description("print one pool's big node config of a cluster (stdout, exact stored bytes) and its checksum (stderr)")
    .argument('<cluster>', 'cluster name (metadata.name)')
    .option('--pool <name>', "the pool whose config to print (default: the cluster's first pool)")
    .option('--user-data', 'print the small user data instead')
    .action((name: string, opts: DirOptions & { readonly userData?: boolean; readonly pool?: string }) =>
      done(renderCommand(inputDirs(opts), name, io, { userData: Boolean(opts.userData), pool: opts.pool })),
    );
  program
    .command('schema')
    .description(
      'print the JSON Schema of the WorkerCluster object (or, with --markdown, the field reference of docs/reference.md; with --rules, its table of named rules)',
    )
    .option('--markdown', 'the field reference table instead')
    .option('--rules', 'the table of named rules (the ids messages end with) instead')
    .action((opts: { readonly markdown?: boolean; readonly rules?: boolean }) =>
      done(schemaCommand(io, { markdown: Boolean(opts.markdown), rules: Boolean(opts.rules) })),
    );
  const commands: readonly Register[] = [
    registerReconcile,
    registerStatus,
    registerControl,
    registerBootstrap,
    registerDelete,
    registerReview,
    registerPlayground,
    registerRollout,
    registerChannels,
    registerKube,
  ];
  for (const register of commands) register(program, io, done);

  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    // Misuse found after the flags parsed (an environment variable, say): one line and its fix, exit 2.
    if (e instanceof UsageError) {
      io.err(`error: ${e.message}\n`);
      return EXIT.usage;
    }
    const aws = describeAwsError(e);
    if (aws) {
      io.err(`error: ${aws}\n`);
      return EXIT.aws;
    }
    throw e;
  }
  return code;
}
