import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson } from '../cloudconfig/canonical-json';
import { sha256Hex } from '../cloudconfig/checksum';
import { clusterFiles, parseClusterYaml } from '../cluster/load';
import { ClusterStatus } from '../cluster/status';
import { Problem, WorkerStacksError } from '../errors';
import { ClusterRecord, ClusterStore, ConflictError } from './cluster-store';

export interface FileStoreProps {
  /** Directory of `<name>.yaml` cluster objects. */
  readonly clustersDir: string;
  /** Where status files go, one `<name>.json` per cluster. @default `<clustersDir>/.status` */
  readonly stateDir?: string;
  /** Directory file names are shown relative to. @default process.cwd() */
  readonly relativeTo?: string;
  /** A lock file older than this belongs to a writer that crashed, and is broken. @default 30000 */
  readonly lockStaleMs?: number;
}

/** What the store keeps per cluster beside the object. */
interface StateFile {
  readonly resourceVersion: number;
  readonly generation: number;
  /** Hash of the spec the generation belongs to. */
  readonly specHash?: string;
  readonly status?: ClusterStatus;
  /** SHA-256 of the object file's bytes when `object` was parsed from it. */
  readonly contentHash?: string;
  /** The object as parsed from those bytes: a new process reads it instead of parsing the YAML again. */
  readonly object?: unknown;
}

const DEFAULT_LOCK_STALE_MS = 30_000;

interface ParsedObject {
  readonly source: string;
  readonly contentHash: string;
  readonly raw?: unknown;
  readonly problems: readonly Problem[];
  readonly specHash?: string;
}

/** The parsed object to keep in the state file, when JSON holds it exactly (YAML's .inf or .nan would not survive). */
function storable(contentHash: string, raw: unknown): Pick<StateFile, 'contentHash' | 'object'> {
  return isJsonExact(raw) ? { contentHash, object: raw } : { contentHash: undefined, object: undefined };
}

function isJsonExact(v: unknown): boolean {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return true;
  if (typeof v === 'number') return Number.isFinite(v);
  if (Array.isArray(v)) return v.every(isJsonExact);
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.values(v as object).every(isJsonExact);
  return false;
}

/** Shared between passes, so nobody may change it. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The embedded store: cluster objects are the YAML files the user edits;
 * status lives beside them, one JSON file per cluster, written atomically
 * (temp file, fsync, rename) under a lock, and guarded by a version check so
 * two writers cannot silently overwrite each other.
 */
export class FileStore implements ClusterStore {
  private readonly clustersDir: string;
  private readonly stateDir: string;
  private readonly relativeTo: string;
  private readonly lockStaleMs: number;
  private readonly parseCache = new Map<string, ParsedObject>();

  constructor(props: FileStoreProps) {
    this.clustersDir = path.resolve(props.clustersDir);
    this.stateDir = path.resolve(props.stateDir ?? path.join(this.clustersDir, '.status'));
    this.relativeTo = props.relativeTo ?? process.cwd();
    this.lockStaleMs = props.lockStaleMs ?? DEFAULT_LOCK_STALE_MS;
  }

  public async list(): Promise<ClusterRecord[]> {
    if (!fs.existsSync(this.clustersDir)) {
      throw new WorkerStacksError(`cluster directory ${this.clustersDir} does not exist`, { hint: 'pass --clusters <dir> or run from the repository root' });
    }
    return clusterFiles(this.clustersDir).map((f) => {
      const name = path.basename(f).replace(/\.ya?ml$/, '');
      try {
        return this.read(name, f);
      } catch (e) {
        // One unreadable status file or stuck lock fails that cluster alone, never the whole pass.
        const problem = { file: this.shown(this.statePath(name)), path: '', message: (e as Error).message };
        return { name, source: this.shown(f), parseProblems: [problem], generation: 0, resourceVersion: 'unreadable' };
      }
    });
  }

  public async get(name: string): Promise<ClusterRecord | undefined> {
    const file = clusterFiles(this.clustersDir).find((f) => path.basename(f).replace(/\.ya?ml$/, '') === name);
    if (file) return this.read(name, file);
    // A removed object keeps its status (its stack is not deleted): report it without an object.
    const state = this.readState(name);
    return state ? { name, source: this.shown(path.join(this.clustersDir, `${name}.yaml`)), parseProblems: [], generation: state.generation, status: state.status, resourceVersion: String(state.resourceVersion) } : undefined;
  }

  public async writeStatus(name: string, status: ClusterStatus, resourceVersion: string): Promise<string> {
    return this.locked(name, () => {
      const state = this.readState(name) ?? { resourceVersion: 0, generation: 1 };
      if (String(state.resourceVersion) !== resourceVersion) throw new ConflictError(name, resourceVersion, String(state.resourceVersion));
      const next: StateFile = { ...state, resourceVersion: state.resourceVersion + 1, status };
      this.writeState(name, next);
      return String(next.resourceVersion);
    });
  }

  public async clearStatus(name: string, resourceVersion: string): Promise<void> {
    this.locked(name, () => {
      const state = this.readState(name);
      if (!state) return;
      if (String(state.resourceVersion) !== resourceVersion) throw new ConflictError(name, resourceVersion, String(state.resourceVersion));
      // The generation stays (the object may still exist); only what was recorded about the stack goes.
      this.writeState(name, { resourceVersion: state.resourceVersion + 1, generation: state.generation, specHash: state.specHash });
    });
  }

  public watch(onChange: (name: string) => void): () => void {
    const watcher = fs.watch(this.clustersDir, { persistent: false }, (_event, file) => {
      const name = file ? String(file) : '';
      if (/\.ya?ml$/.test(name)) onChange(name.replace(/\.ya?ml$/, ''));
    });
    return () => watcher.close();
  }

  /**
   * Names of the clusters that have a recorded status, so that `status` can still show those whose object is gone.
   * A state file that only remembers a generation (the object was listed but never reconciled) does not count.
   */
  public statusNames(): string[] {
    if (!fs.existsSync(this.stateDir)) return [];
    return fs
      .readdirSync(this.stateDir)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.replace(/\.json$/, ''))
      .filter((name) => {
        try {
          return this.readState(name)?.status !== undefined;
        } catch {
          return true; // unreadable: listed, so that get() reports what is wrong with it
        }
      })
      .sort();
  }

  private read(name: string, file: string): ClusterRecord {
    const source = this.shown(file);
    const text = fs.readFileSync(file, 'utf8');
    let state = this.readState(name);
    const { raw, problems, specHash, contentHash } = this.parsed(name, source, text, state);
    if (specHash && state?.specHash !== specHash) {
      // The store is the API server here: it bumps the generation when the spec changed.
      state = this.locked(name, () => {
        const cur = this.readState(name);
        if (cur?.specHash === specHash) return cur;
        const next: StateFile = { ...cur, resourceVersion: (cur?.resourceVersion ?? 0) + 1, generation: (cur?.generation ?? 0) + 1, specHash, ...storable(contentHash, raw) };
        this.writeState(name, next);
        return next;
      });
    } else if (isJsonExact(raw) && state?.contentHash !== contentHash) {
      // New bytes, same spec (a comment, a label): only the stored copy of the object moves; no new version.
      state = this.locked(name, () => {
        const cur = this.readState(name) ?? { resourceVersion: 0, generation: 1, specHash };
        const next: StateFile = { ...cur, ...storable(contentHash, raw) };
        this.writeState(name, next);
        return next;
      });
    }
    return { name, source, raw, parseProblems: problems, generation: state?.generation ?? 1, status: state?.status, resourceVersion: String(state?.resourceVersion ?? 0), contentHash };
  }

  /**
   * The object parsed, memoized on its exact bytes (in memory, and in the state file for the next process): every
   * pass still reads every file (level-based), but unchanged bytes are not parsed again (YAML parsing was most
   * of what an unchanged cluster cost).
   */
  private parsed(name: string, source: string, text: string, state: StateFile | undefined): ParsedObject {
    const contentHash = sha256Hex(text);
    const hit = this.parseCache.get(name);
    if (hit && hit.contentHash === contentHash && hit.source === source) return hit;
    // A new process finds the parsed object in the state file, stored when these bytes were first read.
    const stored = state?.contentHash === contentHash && state.object !== undefined;
    const { raw, problems } = stored ? { raw: state!.object, problems: [] } : parseClusterYaml(text, source);
    const specHash = stored && state!.specHash ? state!.specHash : raw && typeof raw === 'object' ? sha256Hex(canonicalJson((raw as { spec?: unknown }).spec ?? null)) : undefined;
    const entry: ParsedObject = { source, contentHash, raw: deepFreeze(raw), problems, specHash };
    this.parseCache.set(name, entry);
    return entry;
  }

  private statePath(name: string): string {
    return path.join(this.stateDir, `${name}.json`);
  }

  private readState(name: string): StateFile | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.statePath(name), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      return JSON.parse(text) as StateFile;
    } catch (e) {
      throw new WorkerStacksError(`status file ${this.statePath(name)} is not valid JSON`, { cause: e, hint: 'it was edited by hand; delete it and the next pass rebuilds it from the stack' });
    }
  }

  /** temp file + fsync + rename + fsync of the directory: a crash leaves the old file or the new one, never half of one. */
  private writeState(name: string, state: StateFile): void {
    fs.mkdirSync(this.stateDir, { recursive: true });
    const target = this.statePath(name);
    const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o644);
    try {
      fs.writeSync(fd, JSON.stringify(state, undefined, 2) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, target);
    const dir = fs.openSync(this.stateDir, 'r');
    try {
      fs.fsyncSync(dir);
    } finally {
      fs.closeSync(dir);
    }
  }

  /** An exclusive lock file per cluster; a lock older than `lockStaleMs` (30 s) is a crashed writer's and is broken. */
  private locked<T>(name: string, fn: () => T): T {
    fs.mkdirSync(this.stateDir, { recursive: true });
    const lock = `${this.statePath(name)}.lock`;
    for (let attempt = 0; ; attempt++) {
      try {
        fs.closeSync(fs.openSync(lock, 'wx'));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > this.lockStaleMs) fs.rmSync(lock, { force: true });
        else if (attempt > 200) throw new WorkerStacksError(`status of ${name} is locked by another writer (${lock})`, { hint: 'another reconciler is running on this directory; stop it, or remove the lock file if none is' });
        else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      }
    }
    try {
      return fn();
    } finally {
      fs.rmSync(lock, { force: true });
    }
  }

  private shown(file: string): string {
    return path.relative(this.relativeTo, file) || file;
  }
}
