import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStatus } from '../../model/cluster/schema/status';
import { WorkerStacksError } from '../../core/errors';
import { fsyncUnlessUnsafe } from '../../core/durable';
import { deepFreeze, migrateLegacyStatus, StateFile } from './file-store-state';

/**
 * The file store's status files, one `<name>.json` per cluster in one directory: read and checked, written atomically,
 * and changed only under a per-cluster lock file (several reconcilers or CLI commands may share the directory).
 */
export class StatusFiles {
  /**
   * The last state read of each file, by its exact text: every read still reads the file (level-based), but the same
   * bytes are not parsed and checked again (a held cluster is looked at every two minutes, its status unchanged).
   */
  private readonly parsed = new Map<string, { readonly text: string; readonly state: StateFile }>();

  constructor(
    /** The directory of the status files. */
    public readonly dir: string,
    /** A lock file older than this belongs to a writer that crashed, and is broken. */
    private readonly lockStaleMs: number,
  ) {}

  public path(name: string): string {
    return path.join(this.dir, `${name}.json`);
  }

  public read(name: string): StateFile | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.path(name), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    const hit = this.parsed.get(name);
    if (hit?.text === text) return hit.state;
    const state = this.parse(name, text);
    // Frozen: the same object is handed to every reader of these bytes.
    this.parsed.set(name, { text, state: deepFreeze(state) });
    return state;
  }

  private parse(name: string, text: string): StateFile {
    let state: StateFile;
    try {
      state = JSON.parse(text) as StateFile;
    } catch (e) {
      throw new WorkerStacksError(`status file ${this.path(name)} is not valid JSON`, {
        cause: e,
        hint: 'it was edited by hand; delete it and the next pass rebuilds it from the live stack',
      });
    }
    if (state.status === undefined) return state;
    const checked = parseStatus(migrateLegacyStatus(state.status));
    if ('problem' in checked) {
      throw new WorkerStacksError(`status file ${this.path(name)} is not a valid status: ${checked.problem}`, {
        hint: 'it was edited by hand or by another version; delete it and the next pass rebuilds it from the live stack',
      });
    }
    return { ...state, status: checked.status };
  }

  /** temp file + fsync + rename + fsync of the directory: a crash leaves the old file or the new one, never half of one. */
  public write(name: string, state: StateFile): void {
    fs.mkdirSync(this.dir, { recursive: true });
    const target = this.path(name);
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      fs.writeSync(fd, JSON.stringify(state, undefined, 2) + '\n');
      fsyncUnlessUnsafe(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, target);
    const dir = fs.openSync(this.dir, 'r');
    try {
      fsyncUnlessUnsafe(dir);
    } finally {
      fs.closeSync(dir);
    }
  }

  /** An exclusive lock file per cluster; a lock older than `lockStaleMs` (30 s) is a crashed writer's and is broken. */
  public locked<T>(name: string, fn: () => T): T {
    fs.mkdirSync(this.dir, { recursive: true });
    const lock = `${this.path(name)}.lock`;
    for (let attempt = 0; ; attempt++) {
      try {
        fs.closeSync(fs.openSync(lock, 'wx'));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > this.lockStaleMs) fs.rmSync(lock, { force: true });
        else if (attempt > 200)
          throw new WorkerStacksError(`status of ${name} is locked by another writer (${lock})`, {
            hint: 'another reconciler is running on this directory; stop it, or remove the lock file if none is',
          });
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
    try {
      return fn();
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }
}
