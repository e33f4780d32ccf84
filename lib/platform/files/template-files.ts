import * as fs from 'node:fs';
import * as path from 'node:path';
import { TemplateError } from '../../core/errors';
import { MAX_TEMPLATE_FILE_BYTES } from '../../model/cloudconfig/template-source';

/**
 * Reading a template directory that may be hostile (WORKER_STACKS_TEMPLATES can point anywhere). Every file of it that
 * worker-stacks reads (template.yaml, values.yaml, the .hbs files and partials) goes through readTemplateText, which
 * reads only a regular file that really lies inside the directory, of at most MAX_TEMPLATE_FILE_BYTES (template-source.ts):
 *
 * - its real path (every symlink resolved) must be inside the directory's real path, so a link to /etc/shadow, to
 *   another checkout or to /proc/self/environ is refused before it is opened, and its target never lands in a node
 *   config, in S3 or in a message (the message names the link, never the target or its bytes);
 * - it is opened non-blocking and checked on the open descriptor, so a FIFO does not hang, a device (/dev/zero) is never
 *   read, and a file swapped after the path check is still the one checked;
 * - at most MAX_TEMPLATE_FILE_BYTES + 1 bytes are read, so a file that grows meanwhile is refused too.
 */

/** `cloudconfig/_shared/x.hbs`: a template file as messages name it, the same on every machine. */
export function shownTemplatePath(dir: string, file: string): string {
  return path.join(path.basename(path.resolve(dir)), path.relative(path.resolve(dir), path.resolve(file)));
}

function refuse(dir: string, file: string, why: string): TemplateError {
  return new TemplateError(`${shownTemplatePath(dir, file)} ${why}`, {
    hint: 'a template directory holds only regular files of its own (no links that leave it, no pipes or devices), each at most 256 KiB',
  });
}

/** The text of `file` (LF line endings), a regular file inside `dir`; a TemplateError naming the file otherwise. */
export function readTemplateText(dir: string, file: string, maxBytes = MAX_TEMPLATE_FILE_BYTES): string {
  let realDir: string;
  let real: string;
  try {
    realDir = fs.realpathSync(dir);
    real = fs.realpathSync(file);
  } catch (e) {
    throw refuse(dir, file, `cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  if (!real.startsWith(realDir + path.sep))
    throw refuse(
      dir,
      file,
      'resolves to a file outside the template directory (a symbolic link that leaves it); only files inside it are read',
    );
  let fd: number;
  try {
    fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
  } catch (e) {
    throw refuse(dir, file, `cannot be read: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile())
      throw refuse(
        dir,
        file,
        `is ${st.isFIFO() ? 'a FIFO (named pipe)' : st.isDirectory() ? 'a directory' : 'a device or socket'}, not a regular file`,
      );
    if (st.size > maxBytes) throw refuse(dir, file, `is ${st.size} bytes, more than the limit of ${maxBytes}`);
    const buf = Buffer.alloc(maxBytes + 1);
    let n = 0;
    while (n < buf.length) {
      const got = fs.readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > maxBytes) throw refuse(dir, file, `grew past the limit of ${maxBytes} bytes while it was read`);
    return buf.toString('utf8', 0, n).replace(/\r\n/g, '\n');
  } finally {
    fs.closeSync(fd);
  }
}
