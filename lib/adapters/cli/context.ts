import { FileChannelStore } from '../../engines/channels';
import { imageResolver } from '../../model/channel/image-pins';
import * as path from 'node:path';
import { listTemplates } from '../../model/cloudconfig/templates';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../../platform/files/template-directory';
import { terminalText } from './terminal-text';

/** Where a CLI command finds its inputs; every command takes the same two flags. */
export interface InputDirs {
  /** Directory of cluster objects. @default ./clusters */
  readonly clustersDir: string;
  /** Directory of cloud-config templates. @default the repository's cloudconfig/ */
  readonly templatesDir: string;
}

/** The parsed --clusters/--templates flags (see dirFlags). */
export interface DirOptions {
  /** --clusters <dir>. @default $WORKER_STACKS_CLUSTERS, else ./clusters */
  readonly clusters?: string;
  /** --templates <dir>. @default $WORKER_STACKS_TEMPLATES, else the repository's cloudconfig/ */
  readonly templates?: string;
}

export function inputDirs(opts: DirOptions): InputDirs {
  return {
    clustersDir: path.resolve(opts.clusters ?? process.env.WORKER_STACKS_CLUSTERS ?? 'clusters'),
    templatesDir: path.resolve(opts.templates ?? process.env.WORKER_STACKS_TEMPLATES ?? DEFAULT_TEMPLATES_DIR),
  };
}

export function loadOptions(dirs: InputDirs) {
  // The pins the daemon (or `channels refresh`) recorded beside the objects: offline commands read, never resolve.
  const channels = new FileChannelStore({ clustersDir: dirs.clustersDir }).loadSync();
  return {
    templates: listTemplates(templateDirectory(dirs.templatesDir)),
    relativeTo: process.cwd(),
    images: imageResolver(channels.channels),
    /** The channel files' own problems (validate refuses them too). */
    channelProblems: channels.problems,
  };
}

/** Output sinks, injectable so commands are testable in-process. */
export interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The process's streams: every command's text passes terminalText, so no string from outside acts on a terminal. */
export const processIo: Io = {
  out: (t) => process.stdout.write(terminalText(t)),
  err: (t) => process.stderr.write(terminalText(t)),
};

/** Exit codes of every command (documented in docs/daemon.md, "Exit codes"): 3 is an AWS call that failed or could not be made. */
export const EXIT = { ok: 0, invalid: 1, usage: 2, aws: 3 } as const;

/** The --clusters/--templates flags every command that reads cluster objects takes. */
export function dirFlags<C extends { option: (flags: string, description: string) => C }>(c: C): C {
  return c
    .option('--clusters <dir>', 'directory of cluster objects (env WORKER_STACKS_CLUSTERS, default ./clusters)')
    .option('--templates <dir>', 'directory of cloud-config templates (env WORKER_STACKS_TEMPLATES)');
}
