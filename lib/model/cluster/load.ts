import type { ImageResolver } from '../channel/image-pins';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import { Problem, ValidationError } from '../../core/errors';
import { hasControlCharacter, shownName } from '../../core/shown-name';
import { WorkerCluster } from './schema/schema';
import { validateCluster } from './validate';
import { subnetVpcProblems } from './network/fleet-subnets';

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
  /** Cluster files larger than this are refused unread. @default MAX_CLUSTER_FILE_BYTES (1 MiB) */
  readonly maxBytes?: number;
  /** The image channels' pins (lib/model/channel/image-pins.ts). @default none: a pool that names a channel is refused */
  readonly images?: ImageResolver;
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
    doc.errors.map((e) => ({
      file,
      path: '',
      message: `YAML syntax error ${at(e.pos[0])}: ${e.message.split('\n')[0]}`,
    })),
  );
  // A warning is never ignored: an unknown tag (`!Ref`, `!Sub` from a CloudFormation habit) is resolved by the parser as
  // a plain string and the tag silently dropped, so the object would say something other than what its author wrote.
  problems.push(
    ...list.flatMap((doc) =>
      doc.warnings.map((w) => ({
        file,
        path: '',
        message: `YAML warning ${at(w.pos[0])}: ${w.message.split('\n')[0]}${/tag/i.test(w.message) ? ' (a cluster object is plain YAML: tags such as !Ref or !Sub are not CloudFormation here; write the literal value)' : ''}`,
      })),
    ),
  );
  if (problems.length) return { problems };
  if (list.length !== 1)
    return {
      problems: [
        { file, path: '', message: `holds ${list.length} YAML documents; put exactly one WorkerCluster in each file` },
      ],
    };
  try {
    return { raw: list[0].toJS({ maxAliasCount: 50 }), problems: [] };
  } catch (e) {
    // An alias to an anchor that is not defined (yet), or an alias bomb over maxAliasCount.
    return { problems: [{ file, path: '', message: `YAML error: ${(e as Error).message.split('\n')[0]}` }] };
  }
}

/** The largest cluster file that is read: a real object is a few KiB; 1 MiB leaves room and bounds memory. */
export const MAX_CLUSTER_FILE_BYTES = 1024 * 1024;

export interface ReadClusterFileOptions {
  /** Larger files are refused unread. @default MAX_CLUSTER_FILE_BYTES (1 MiB) */
  readonly maxBytes?: number;
  /** The file as problems name it. @default file */
  readonly shown?: string;
}

/**
 * Reads a cluster file, or says why not, without ever blocking or reading without bound: only a regular file (a
 * symlink to one is fine) of at most `maxBytes` is read. The file is opened non-blocking and checked on its open
 * descriptor, so a FIFO does not hang, /dev/zero is never read, and a file swapped after a check is still the
 * one checked; at most maxBytes + 1 bytes are read, so a file that grows meanwhile is refused too.
 */
export function readClusterFile(
  file: string,
  opts: ReadClusterFileOptions = {},
): { text: string; problem?: undefined } | { text?: undefined; problem: Problem } {
  const maxBytes = opts.maxBytes ?? MAX_CLUSTER_FILE_BYTES;
  const refuse = (message: string) => ({ problem: { file: opts.shown ?? file, path: '', message } });
  // Listed by clusterFiles so that it is refused by name: an object someone wrote as JSON is never skipped in silence.
  if (/\.json$/.test(file))
    return refuse(
      `is a .json file; cluster objects are read from *.yaml and *.yml files only: rename it to ${path.basename(file).replace(/\.json$/, '.yaml')} (JSON is valid YAML)`,
    );
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    return refuse(`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile())
      return refuse(
        `is ${kindOf(st)}, not a regular file; a cluster object must be a regular file of at most ${maxBytes} bytes`,
      );
    if (st.size > maxBytes)
      return refuse(`is ${st.size} bytes, more than the limit of ${maxBytes}; a cluster object is a few KiB`);
    // One scratch buffer for every read (the read is synchronous, so never shared by two): a fresh zeroed MiB per
    // object made a pass over a thousand objects allocate a GiB.
    const buf = scratch(maxBytes + 1);
    let n = 0;
    while (n < buf.length) {
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > maxBytes) return refuse(`grew past the limit of ${maxBytes} bytes while it was read`);
    return { text: buf.toString('utf8', 0, n) };
  } catch (e) {
    return refuse(`cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  } finally {
    fs.closeSync(fd);
  }
}

let scratchBuffer = Buffer.alloc(0);
/** A buffer of exactly `size` bytes, reused from one read to the next; its contents are whatever the last read left. */
function scratch(size: number): Buffer {
  if (scratchBuffer.length < size) scratchBuffer = Buffer.allocUnsafe(size);
  return scratchBuffer.subarray(0, size);
}

function kindOf(st: fs.Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

export function loadClusterFile(
  file: string,
  opts: LoadOptions,
): { cluster?: WorkerCluster; problems: readonly Problem[] } {
  const shown = shownName(path.relative(opts.relativeTo ?? process.cwd(), file) || file);
  // A cluster file is named after its object, a DNS label: a control character in the name can only mislead the
  // reader of a message (a newline would start a line that passes for another file's), so it is refused unread.
  if (hasControlCharacter(path.basename(file)))
    return {
      problems: [
        {
          file: shown,
          path: '',
          message: `the file name has a control character (shown escaped); a cluster file is named <metadata.name>.yaml: rename it`,
        },
      ],
    };
  const read = readClusterFile(file, { maxBytes: opts.maxBytes, shown });
  if (read.problem) return { problems: [read.problem] };
  const { raw, problems } = parseClusterYaml(read.text, shown);
  if (problems.length) return { problems };
  return validateCluster(raw, { file: shown, templates: opts.templates, images: opts.images });
}

/**
 * Every `*.yaml` / `*.yml` (and `*.json`, to refuse it) directly in `dir`, in name order, whatever its kind: a directory or a FIFO with such a
 * name is listed so that readClusterFile refuses it by name, never skipped in silence.
 */
export function clusterFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /\.(ya?ml|json)$/.test(f))
    .sort()
    .map((f) => path.join(dir, f));
}

/**
 * The object file of cluster `name` in `dir`, as clusterFiles lists it (`<name>.yaml`, else `<name>.yml`: their sorted
 * order), looked up directly: a store's read of one cluster costs two lstat calls, not a listing of the whole directory.
 */
export function clusterFileOf(dir: string, name: string): string | undefined {
  if (path.basename(name) !== name || name === '.' || name === '..')
    return clusterFiles(dir).find((f) => path.basename(f).replace(/\.ya?ml$/, '') === name);
  for (const ext of ['.yaml', '.yml']) {
    const file = path.join(dir, `${name}${ext}`);
    // Any entry counts, as in a listing (a directory or a broken link is then refused by name when read).
    if (fs.lstatSync(file, { throwIfNoEntry: false })) return file;
  }
  return undefined;
}

/** Loads every cluster in `dir` and returns the good ones and every problem of the bad ones. */
export function loadClusters(dir: string, opts: LoadOptions): { clusters: LoadedCluster[]; problems: Problem[] } {
  const clusters: LoadedCluster[] = [];
  const problems: Problem[] = [];
  for (const file of clusterFiles(dir)) {
    const r = loadClusterFile(file, opts);
    if (r.cluster)
      clusters.push({
        file: shownName(path.relative(opts.relativeTo ?? process.cwd(), file) || file),
        cluster: r.cluster,
      });
    problems.push(...r.problems);
  }
  // Rules across objects: an object they refuse is not a valid one either.
  const fleet = subnetVpcProblems(clusters);
  const refused = new Set(fleet.map((p) => p.file));
  return { clusters: clusters.filter((c) => !refused.has(c.file)), problems: [...problems, ...fleet] };
}

/** Like loadClusters, but any problem anywhere stops everything: an invalid fleet never half-synthesizes. */
export function loadValidClusters(dir: string, opts: LoadOptions): LoadedCluster[] {
  const { clusters, problems } = loadClusters(dir, opts);
  if (problems.length) throw new ValidationError(problems);
  return clusters;
}
