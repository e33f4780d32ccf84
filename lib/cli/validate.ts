import * as fs from 'node:fs';
import { loadClusters } from '../cluster/load';
import { formatProblem } from '../errors';
import { EXIT, InputDirs, Io, loadOptions } from './context';

export interface ValidateOptions {
  /** `text` (one line per problem) or `json`. @default 'text' */
  readonly output?: 'text' | 'json';
}

/** `worker-stacks validate`: checks every cluster object, reports every problem, touches nothing. */
export function validateCommand(dirs: InputDirs, io: Io, opts: ValidateOptions = {}): number {
  const output: string = opts.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    io.err(`error: unknown output format ${JSON.stringify(output)}\n  fix: pass -o text or -o json\n`);
    return EXIT.usage;
  }
  if (!fs.existsSync(dirs.clustersDir)) {
    io.err(`error: cluster directory ${dirs.clustersDir} does not exist\n  fix: run from the repository root or pass --clusters <dir>\n`);
    return EXIT.usage;
  }
  if (!fs.statSync(dirs.clustersDir).isDirectory()) {
    io.err(`error: ${dirs.clustersDir} is not a directory\n  fix: pass the directory that holds the cluster files to --clusters <dir>\n`);
    return EXIT.usage;
  }
  const { clusters, problems } = loadClusters(dirs.clustersDir, loadOptions(dirs));
  if (output === 'json') {
    io.out(JSON.stringify({ valid: clusters.map((c) => c.file), problems }, undefined, 2) + '\n');
  } else {
    for (const p of problems) io.err(`${formatProblem(p)}\n`);
    const bad = new Set(problems.map((p) => p.file)).size;
    io.out(`${clusters.length} cluster object${clusters.length === 1 ? '' : 's'} valid${bad ? `, ${bad} invalid` : ''}\n`);
  }
  return problems.length ? EXIT.invalid : EXIT.ok;
}
