import * as fs from 'node:fs';
import * as path from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import { Problem, ValidationError } from '../errors';
import { WorkerCluster } from './schema';
import { validateCluster } from './validate';

export interface LoadedCluster {
  /** The file as shown to the user. */
  readonly file: string;
  readonly cluster: WorkerCluster;
}

export interface LoadOptions {
  /** Names of the templates under cloudconfig/. */
  readonly templates: ReadonlySet<string>;
  /** Directory that file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
}

/** Parses YAML text into one plain object, or the problems that stop it. */
export function parseClusterYaml(text: string, file: string): { raw?: unknown; problems: Problem[] } {
  // prettyErrors is off (one-line messages), so positions come from our own line counter.
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false, schema: 'core', lineCounter: lines });
  const list = Array.isArray(docs) ? docs : [docs];
  const at = (offset: number | undefined) => {
    if (offset === undefined) return 'at an unknown line';
    const { line, col } = lines.linePos(offset);
    return `at line ${line}, column ${col}`;
  };
  const problems: Problem[] = list.flatMap((doc) =>
    doc.errors.map((e) => ({ file, path: '', message: `YAML syntax error ${at(e.pos?.[0])}: ${e.message.split('\n')[0]}` })),
  );
  if (problems.length) return { problems };
  if (list.length !== 1) return { problems: [{ file, path: '', message: `holds ${list.length} YAML documents; put exactly one WorkerCluster in each file` }] };
  try {
    return { raw: list[0].toJS({ maxAliasCount: 50 }), problems: [] };
  } catch (e) {
    // An alias to an anchor that is not defined (yet), or an alias bomb over maxAliasCount.
    return { problems: [{ file, path: '', message: `YAML error: ${(e as Error).message.split('\n')[0]}` }] };
  }
}

export function loadClusterFile(file: string, opts: LoadOptions): { cluster?: WorkerCluster; problems: readonly Problem[] } {
  const shown = path.relative(opts.relativeTo ?? process.cwd(), file) || file;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return { problems: [{ file: shown, path: '', message: `cannot be read: ${(e as Error).message}` }] };
  }
  const { raw, problems } = parseClusterYaml(text, shown);
  if (problems.length) return { problems };
  return validateCluster(raw, { file: shown, templates: opts.templates });
}

/** Every `*.yaml` / `*.yml` directly in `dir`, in name order. */
export function clusterFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Loads every cluster in `dir` and returns the good ones and every problem of the bad ones. */
export function loadClusters(dir: string, opts: LoadOptions): { clusters: LoadedCluster[]; problems: Problem[] } {
  const clusters: LoadedCluster[] = [];
  const problems: Problem[] = [];
  for (const file of clusterFiles(dir)) {
    const r = loadClusterFile(file, opts);
    if (r.cluster) clusters.push({ file: path.relative(opts.relativeTo ?? process.cwd(), file) || file, cluster: r.cluster });
    problems.push(...r.problems);
  }
  return { clusters, problems };
}

/** Like loadClusters, but any problem anywhere stops everything: an invalid fleet never half-synthesizes. */
export function loadValidClusters(dir: string, opts: LoadOptions): LoadedCluster[] {
  const { clusters, problems } = loadClusters(dir, opts);
  if (problems.length) throw new ValidationError(problems);
  return clusters;
}
