import * as fs from 'node:fs';
import * as path from 'node:path';
import { canonicalJson } from '../../model/cloudconfig/canonical-json';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { parseClusterYaml } from '../../model/cluster/load';
import { clusterFileOf, clusterFiles, readClusterFile } from '../../platform/files/cluster-files';
import { ClusterStatus, parseStatus } from '../../model/cluster/schema/status';
import { Problem, WorkerStacksError } from '../../core/errors';
import { fsyncUnlessUnsafe } from '../../core/durable';
import { ClusterRecord, ClusterStore, ConflictError } from '../../model/ports/cluster-store';
import { decodeRevision, deepFreeze, encodeRevision, Revision, StateFile, storable } from './file-store-state';
import { withPaused } from './file-store-paused';
import { watchClusterFiles } from './file-store-watch';
import { StatusFiles } from './file-store-status-files';

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

const DEFAULT_LOCK_STALE_MS = 30_000;

interface ParsedObject {
  readonly source: string;
  readonly contentHash: string;
  readonly raw?: unknown;
  readonly problems: readonly Problem[];
  readonly specHash?: string;
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
  private readonly states: StatusFiles;
  private readonly parseCache = new Map<string, ParsedObject>();

  constructor(props: FileStoreProps) {
    this.clustersDir = path.resolve(props.clustersDir);
    this.stateDir = path.resolve(props.stateDir ?? path.join(this.clustersDir, '.status'));
    this.relativeTo = props.relativeTo ?? process.cwd();
    this.states = new StatusFiles(this.stateDir, props.lockStaleMs ?? DEFAULT_LOCK_STALE_MS);
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- ClusterStore's methods are async: a throw here must reach the caller as a rejection, as the Kubernetes store's do
  public async list(): Promise<ClusterRecord[]> {
    if (!fs.existsSync(this.clustersDir)) {
      throw new WorkerStacksError(`cluster directory ${this.clustersDir} does not exist`, {
        hint: 'pass --clusters <dir> or run from the repository root',
      });
    }
    return clusterFiles(this.clustersDir).map((f) => {
      const name = path.basename(f).replace(/\.ya?ml$/, '');
      try {
        return this.read(name, f);
      } catch (e) {
        // One unreadable status file or stuck lock fails that cluster alone, never the whole pass.
        // The object itself (too big, not a regular file) or its status file: the problem names the one at fault.
        const problem =
          e instanceof UnreadableObject
            ? e.problem
            : { file: this.shown(this.states.path(name)), path: '', message: (e as Error).message };
        return { name, source: this.shown(f), parseProblems: [problem], generation: 0, resourceVersion: 'unreadable' };
      }
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- ClusterStore's methods are async: a throw here must reach the caller as a rejection, as the Kubernetes store's do
  public async get(name: string): Promise<ClusterRecord | undefined> {
    const file = clusterFileOf(this.clustersDir, name);
    if (file) return this.read(name, file);
    // A removed object keeps its status (its stack is not deleted): report it without an object.
    const state = this.states.read(name);
    return state
      ? {
          name,
          source: this.shown(path.join(this.clustersDir, `${name}.yaml`)),
          parseProblems: [],
          generation: state.generation,
          status: state.status,
          resourceVersion: encodeRevision({
            v: state.resourceVersion,
            generation: state.generation,
            specHash: state.specHash,
          }),
        }
      : undefined;
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- ClusterStore's methods are async: a throw here must reach the caller as a rejection, as the Kubernetes store's do
  public async writeStatus(name: string, status: ClusterStatus, resourceVersion: string): Promise<string> {
    const rev = decodeRevision(resourceVersion);
    // Never write what a read would refuse: one bad write would make the cluster unreadable from then on.
    const checked = parseStatus(status);
    if ('problem' in checked)
      throw new WorkerStacksError(`refusing to write an invalid status for ${name}: ${checked.problem}`, {
        hint: 'this is a bug in the writer; the status file is left as it was',
      });
    return this.states.locked(name, () => {
      const state = this.states.read(name) ?? { resourceVersion: 0, generation: 1 };
      if (state.resourceVersion !== rev.v) throw new ConflictError(name, String(rev.v), String(state.resourceVersion));
      // The generation and spec the status was computed for are persisted with it, and the parsed object for the next process.
      const parsed = this.parseCache.get(name);
      const object = parsed && parsed.contentHash === rev.contentHash ? storable(parsed.contentHash, parsed.raw) : {};
      const next: StateFile = {
        ...state,
        resourceVersion: state.resourceVersion + 1,
        generation: Math.max(state.generation, rev.generation),
        specHash: rev.specHash ?? state.specHash,
        ...object,
        status,
      };
      this.states.write(name, next);
      return encodeRevision({ ...rev, v: next.resourceVersion, generation: next.generation });
    });
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- ClusterStore's methods are async: a throw here must reach the caller as a rejection, as the Kubernetes store's do
  public async clearStatus(name: string, resourceVersion: string): Promise<void> {
    const rev = decodeRevision(resourceVersion);
    this.states.locked(name, () => {
      const state = this.states.read(name);
      if (!state) return;
      if (state.resourceVersion !== rev.v) throw new ConflictError(name, String(rev.v), String(state.resourceVersion));
      // The generation stays (the object may still exist); only what was recorded about the stack goes.
      this.states.write(name, {
        resourceVersion: state.resourceVersion + 1,
        generation: state.generation,
        specHash: state.specHash,
      });
    });
  }

  /** A retry request is its own small file beside the status (`<name>.retry`), so asking never conflicts with a status write. */
  // eslint-disable-next-line @typescript-eslint/require-await -- ClusterStore's methods are async: a throw here must reach the caller as a rejection, as the Kubernetes store's do
  public async requestRetry(name: string, token: string): Promise<void> {
    fs.mkdirSync(this.stateDir, { recursive: true });
    const target = path.join(this.stateDir, `${name}.retry`);
    const tmp = `${target}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, token + '\n');
    fs.renameSync(tmp, target);
  }

  private retryRequest(name: string): string | undefined {
    const file = path.join(this.stateDir, `${name}.retry`);
    // Mostly there is none: a stat says so without the cost of an ENOENT error on every read of every cluster.
    if (!fs.statSync(file, { throwIfNoEntry: false })) return undefined;
    try {
      return fs.readFileSync(file, 'utf8').trim() || undefined;
    } catch {
      return undefined;
    }
  }

  // eslint-disable-next-line @typescript-eslint/require-await -- ClusterStore's methods are async: a throw here must reach the caller as a rejection, as the Kubernetes store's do
  public async setPaused(name: string, paused: boolean): Promise<void> {
    const file = clusterFileOf(this.clustersDir, name);
    if (!file)
      throw new WorkerStacksError(`no cluster object ${name} in ${this.shown(this.clustersDir)}`, {
        hint: 'run worker-stacks status to see the cluster names',
      });
    // The user's file, edited as text: only the `paused` line changes (comments, layout, quoting stay).
    const shown = this.shown(file);
    const before = this.readObject(file, shown);
    const after = withPaused(before, paused, shown);
    if (after === before) return;
    writeFileAtomically(file, after);
  }

  public watch(onChange: (name: string) => void): () => void {
    return watchClusterFiles(this.clustersDir, this.stateDir, onChange);
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
          return this.states.read(name)?.status !== undefined;
        } catch {
          return true; // unreadable: listed, so that get() reports what is wrong with it
        }
      })
      .sort();
  }

  /**
   * A read never writes: the generation is derived (the stored one, plus one when the spec's hash is not the one it
   * was stored for) and persisted with the next status write, which names it through the record's opaque version.
   */
  private read(name: string, file: string): ClusterRecord {
    const source = this.shown(file);
    const text = this.readObject(file, source);
    const state = this.states.read(name);
    const { raw, problems, specHash, contentHash } = this.parsed(name, source, text, state);
    const stored = state?.generation ?? 0;
    const generation = specHash && state?.specHash !== specHash ? stored + 1 : Math.max(1, stored);
    const version: Revision = {
      v: state?.resourceVersion ?? 0,
      generation,
      specHash: specHash ?? state?.specHash,
      contentHash,
    };
    return {
      name,
      source,
      raw,
      parseProblems: problems,
      generation,
      status: state?.status,
      resourceVersion: encodeRevision(version),
      contentHash,
      retryRequest: this.retryRequest(name),
    };
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
    const stored = state?.contentHash === contentHash && state.object !== undefined ? state : undefined;
    const { raw, problems } = stored ? { raw: stored.object, problems: [] } : parseClusterYaml(text, source);
    const specHash = stored?.specHash
      ? stored.specHash
      : raw && typeof raw === 'object'
        ? sha256Hex(canonicalJson((raw as { spec?: unknown }).spec ?? null))
        : undefined;
    const entry: ParsedObject = { source, contentHash, raw: deepFreeze(raw), problems, specHash };
    this.parseCache.set(name, entry);
    return entry;
  }

  /** The object file's text, read only if it is a regular file within the size limit (lib/platform/files/cluster-files.ts). */
  private readObject(file: string, shown: string): string {
    const r = readClusterFile(file, { shown });
    if (r.problem) throw new UnreadableObject(r.problem);
    return r.text;
  }

  private shown(file: string): string {
    return path.relative(this.relativeTo, file) || file;
  }
}

/** An object file that is not read (not a regular file, too big): its problem names the object file. */
class UnreadableObject extends WorkerStacksError {
  constructor(public readonly problem: Problem) {
    super(`${problem.file}: ${problem.message}`, {
      hint: 'a cluster object is a small regular YAML file; fix or remove this entry',
    });
  }
}

/** temp file (with the file's own mode) + fsync + rename: a crash leaves the old object or the new one, never half. */
function writeFileAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  const mode = fs.statSync(file).mode & 0o7777;
  const fd = fs.openSync(tmp, 'w', mode);
  try {
    fs.fchmodSync(fd, mode); // the umask does not change the user's mode
    fs.writeSync(fd, text);
    fsyncUnlessUnsafe(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
}
