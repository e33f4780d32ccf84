import * as fs from 'node:fs';
import * as path from 'node:path';
import { Problem } from '../../core/errors';

// Reading cluster object files (clusters/*.yaml, and the policy and channel files beside them): only here, above the
// model, so the model parses and validates text it is given and never touches the file system.

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
