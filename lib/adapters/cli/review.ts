import * as path from 'node:path';
import { Command, Option } from 'commander';
import { ReviewError, WorkerStacksError } from '../../core/errors';
import {
  formatJson,
  DEFAULT_MAX_BYTES,
  formatMarkdown,
  MIN_MAX_BYTES,
  formatTerminal,
  FailOn,
  review,
  reviewExitCode,
  reviewAgainstAssembly,
  InputOverrides,
  ReviewResult,
} from '../../engines/review';
import { dirFlags, Io, processIo } from './context';
import { wholeNumber } from './numbers';

/** Exit codes of `review`: 0 reviewed (nothing gated), 1 an object invalid at head or `--fail-on` matched, 2 could not review. */
export const REVIEW_EXIT = { ok: 0, failOn: 1, error: 2 } as const;

export type ReviewFormat = 'terminal' | 'markdown' | 'json';

export interface ReviewCommandOptions {
  /** --base <ref>, or --base-assembly <dir> (exactly one). */
  readonly base?: string;
  /** --base-assembly: the cloud assembly the release in use made of the same objects (the pre-upgrade review). */
  readonly baseAssembly?: string;
  /** --base-release: the release in use, as the reasons name it. */
  readonly baseRelease?: string;
  readonly cluster?: string;
  readonly format?: ReviewFormat;
  readonly failOn?: FailOn;
  /** The project directory. @default the current directory */
  readonly repo?: string;
  /**
   * --clusters / --templates (or their environment variables): directories
   * inside the project, read on both sides; relative ones are relative to
   * --repo when it is given.
   */
  readonly clusters?: string;
  readonly templates?: string;
  /** --max-bytes: the markdown never exceeds this many bytes; what does not fit is left out and said. @default 60,000 */
  readonly maxBytes?: number;
  /** --color / --no-color: ANSI colours in the terminal format. @default on a TTY, unless NO_COLOR is set */
  readonly color?: boolean;
}

/** `worker-stacks review --base <ref>`: what a change does to each cluster, offline. */
export function registerReview(program: Command, io: Io, done: (code: number) => void): void {
  dirFlags(program.command('review'))
    .description(
      'show what the working tree changes in each worker stack since a git revision: template diff, verdict (rolls nodes?), node config diff; offline',
    )
    .option('--base <ref>', 'git revision to compare with (branch, tag or commit, e.g. origin/main)')
    .option(
      '--base-assembly <dir>',
      'instead of --base, before an upgrade: the cloud assembly (cdk.out) the release in use synthesized from the same --clusters; says which clusters this release rolls',
    )
    .option('--base-release <name>', 'with --base-assembly: the release in use, as the reasons name it')
    .option('--cluster <name>', 'only this cluster (its name at base or head)')
    .addOption(
      new Option('--format <format>', 'output format').choices(['terminal', 'markdown', 'json']).default('terminal'),
    )
    .addOption(
      new Option(
        '--fail-on <what>',
        'exit 1 when any cluster changes (change), or replaces running nodes: rolls them, is renamed or is fixed (roll); an object invalid at head always exits 1',
      ).choices(['change', 'roll']),
    )
    .option(
      '--max-bytes <n>',
      `markdown: never more than this many bytes (a pull-request comment takes 65,536); what does not fit is left out and said`,
      wholeNumber(MIN_MAX_BYTES),
      DEFAULT_MAX_BYTES,
    )
    .option(
      '--repo <dir>',
      'the worker-stacks project (a git working tree) to review; relative --clusters/--templates are inside it (default: the current directory)',
    )
    .option('--color', 'colour the terminal format even when stdout is no TTY')
    .option('--no-color', 'never colour the terminal format (as NO_COLOR=1 does)')
    .action(async (opts: ReviewCommandOptions) => done(await reviewCommand(opts, io)));
}

/** Runs a review and prints it; returns the exit code. */
export async function reviewCommand(opts: ReviewCommandOptions, io: Io): Promise<number> {
  try {
    const projectDir = path.resolve(opts.repo ?? '.');
    if ((opts.base === undefined) === (opts.baseAssembly === undefined)) {
      throw new ReviewError('review needs exactly one of --base <ref> and --base-assembly <dir>', {
        hint: 'review a change: --base origin/main; review an upgrade: --base-assembly <cdk.out of the release in use> --clusters <dir>',
      });
    }
    if (opts.baseAssembly !== undefined) {
      // The same objects on both sides, read where they are: no git revision is read, so they may be outside the repo.
      const result = await reviewAgainstAssembly({
        projectDir,
        baseAssembly: opts.baseAssembly,
        clustersDir: opts.clusters ?? process.env.WORKER_STACKS_CLUSTERS ?? path.join(projectDir, 'clusters'),
        templatesDir: opts.templates ?? process.env.WORKER_STACKS_TEMPLATES,
        baseRelease: opts.baseRelease,
        cluster: opts.cluster,
      });
      io.out(formatted(result, opts, io));
      return reviewExitCode(result, opts.failOn);
    }
    // Both sides are read inside the project, so a relative directory means one of the project's.
    const relativeTo = opts.repo === undefined ? process.cwd() : projectDir;
    const inputs: InputOverrides = {
      clusters: insideProject(
        projectDir,
        relativeTo,
        opts.clusters ?? process.env.WORKER_STACKS_CLUSTERS,
        '--clusters',
      ),
      templates: insideProject(
        projectDir,
        relativeTo,
        opts.templates ?? process.env.WORKER_STACKS_TEMPLATES,
        '--templates',
      ),
    };
    const result = await review({ projectDir, base: opts.base ?? '', cluster: opts.cluster, inputs });
    io.out(formatted(result, opts, io));
    return reviewExitCode(result, opts.failOn);
  } catch (e) {
    if (e instanceof WorkerStacksError) {
      io.err(`error: ${e.message}\n`);
      return REVIEW_EXIT.error;
    }
    throw e;
  }
}

function formatted(result: ReviewResult, opts: ReviewCommandOptions, io: Io): string {
  const format = opts.format ?? 'terminal';
  const color = opts.color ?? (io === processIo && process.stdout.isTTY && !process.env.NO_COLOR);
  return format === 'json'
    ? formatJson(result)
    : format === 'markdown'
      ? formatMarkdown(result, { maxBytes: opts.maxBytes })
      : formatTerminal(result, { color });
}

/** A directory flag, as a path inside the project: both revisions read their own copy of it. */
function insideProject(
  projectDir: string,
  relativeTo: string,
  dir: string | undefined,
  flag: string,
): string | undefined {
  if (dir === undefined) return undefined;
  const rel = path.relative(projectDir, path.resolve(relativeTo, dir));
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new ReviewError(`${flag} ${dir} is outside the project ${projectDir}`, {
      hint: "review reads each revision's own copy of the directory, so it must be inside the project (under git)",
    });
  }
  return rel;
}
