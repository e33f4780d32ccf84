import * as fs from 'node:fs';
import { loadClusters } from '../../model/cluster/load';
import { synthesisProblems } from '../../engines/synthesis/synthesis-check';
import { formatProblem, Problem } from '../../core/errors';
import { FilePolicySource } from '../../engines/rollout/policy-source';
import { EXIT, InputDirs, Io, loadOptions } from './context';

export interface ValidateOptions {
  /** `text` (one line per problem) or `json`, as -o gave it: anything else is a usage error (exit 2). @default 'text' */
  readonly output?: string;
}

/**
 * `worker-stacks validate`: checks every cluster object, reports every problem, touches nothing. Each object that
 * passes the schema is then rendered and synthesized with cdk-nag, as `cdk synth` does (WORKER_STACKS_NAG=false
 * turns nag off for both), so whatever synthesis refuses, validate refuses first, naming the field.
 */
export function validateCommand(dirs: InputDirs, io: Io, opts: ValidateOptions = {}): number {
  const output = opts.output ?? 'text';
  if (output !== 'text' && output !== 'json') {
    io.err(`error: unknown output format ${JSON.stringify(output)}\n  fix: pass -o text or -o json\n`);
    return EXIT.usage;
  }
  if (!fs.existsSync(dirs.clustersDir)) {
    io.err(
      `error: cluster directory ${dirs.clustersDir} does not exist\n  fix: run from the repository root or pass --clusters <dir>\n`,
    );
    return EXIT.usage;
  }
  if (!fs.statSync(dirs.clustersDir).isDirectory()) {
    io.err(
      `error: ${dirs.clustersDir} is not a directory\n  fix: pass the directory that holds the cluster files to --clusters <dir>\n`,
    );
    return EXIT.usage;
  }
  const loaded = loadClusters(dirs.clustersDir, loadOptions(dirs));
  // Rollout policies beside the objects: the daemon starts no roll while one is invalid, so validate refuses them too.
  const policies = new FilePolicySource({ clustersDir: dirs.clustersDir }).loadSync();
  const problems: Problem[] = [...loaded.problems, ...policies.problems];
  const nag = process.env.WORKER_STACKS_NAG !== 'false';
  const clusters = loaded.clusters.filter((c) => {
    const found = synthesisProblems(c.cluster, c.file, { templatesDir: dirs.templatesDir, nag });
    problems.push(...found);
    return found.length === 0;
  });
  if (output === 'json') {
    io.out(JSON.stringify({ valid: clusters.map((c) => c.file), problems }, undefined, 2) + '\n');
  } else {
    for (const p of problems) io.err(`${formatProblem(p)}\n`);
    const bad = new Set(problems.map((p) => p.file)).size;
    io.out(
      `${clusters.length} cluster object${clusters.length === 1 ? '' : 's'} valid${bad ? `, ${bad} invalid` : ''}\n`,
    );
  }
  return problems.length ? EXIT.invalid : EXIT.ok;
}
