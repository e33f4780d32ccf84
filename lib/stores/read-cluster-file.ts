import * as fs from 'node:fs';
import { WorkerStacksError } from '../errors';

/** Cluster objects are small: anything bigger is not one, and must not be read into memory. @default 1 MiB */
export const MAX_CLUSTER_FILE_BYTES = 1024 * 1024;

/**
 * Reads a cluster object file only if it is a regular file within the size limit. Opened without blocking and
 * checked on the open descriptor, so a FIFO, a device (a symlink to /dev/zero) or a directory is refused at once and
 * a file swapped between a check and the read is still the one checked.
 */
export function readClusterText(file: string, shown: string = file, maxBytes: number = MAX_CLUSTER_FILE_BYTES): string {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (e) {
    throw new WorkerStacksError(`${shown}: cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { cause: e, hint: 'check that the file exists and is readable' });
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new WorkerStacksError(`${shown}: is not a regular file`, { hint: 'a cluster object is a regular YAML file; remove or rename this entry' });
    if (st.size > maxBytes) throw new WorkerStacksError(`${shown}: is ${st.size} bytes, more than the ${maxBytes} bytes a cluster object may have`, { hint: 'a cluster object is a small YAML file; this is not one' });
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}
