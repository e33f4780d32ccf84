import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { SynthesisError, TemplateError, UsageError, WorkerStacksError } from '../../core/errors';
import { PROJECT_ROOT } from '../../core/paths';
import { SynthesisFinding, SynthesisFindingsError } from './synth-findings';
import { SynthesizedStack, SynthesizeOptions } from './synthesize';

export interface SynthPoolProps {
  /** Worker threads synthesizing at once. @default 2 */
  readonly size?: number;
  /**
   * Syntheses per thread before it is replaced. aws-cdk-lib keeps every token it ever created in a global map
   * (about 0.5 MB per stack); a fresh thread is the only way to give that memory back. @default 200
   */
  readonly recycleAfter?: number;
}

interface Slot {
  worker: Worker;
  done: number;
  busy: boolean;
}

type Job = {
  cluster: WorkerCluster;
  opts: SynthesizeOptions;
  resolve: (s: SynthesizedStack) => void;
  reject: (e: Error) => void;
};

/**
 * Synthesizes stacks in worker threads: a rollout uses every core, the event loop (waits, the ops server,
 * other clusters) is never blocked for a synthesis, and memory is returned by recycling threads.
 */
export class SynthPool {
  /** Threads started so far (recycling starts new ones). */
  public started = 0;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private readonly size: number;
  private readonly recycleAfter: number;
  private nextId = 0;
  private readonly pending = new Map<number, { job: Job; slot: Slot }>();

  constructor(props: SynthPoolProps = {}) {
    this.size = Math.max(1, props.size ?? 2);
    this.recycleAfter = Math.max(1, props.recycleAfter ?? 200);
  }

  public synthesize(cluster: WorkerCluster, opts: SynthesizeOptions): Promise<SynthesizedStack> {
    return new Promise((resolve, reject) => {
      this.queue.push({ cluster, opts, resolve, reject });
      this.dispatch();
    });
  }

  /** Stops every thread; queued work is refused. */
  public async close(): Promise<void> {
    for (const job of this.queue.splice(0)) job.reject(new WorkerStacksError('the synthesis pool was closed'));
    await Promise.all(this.slots.splice(0).map((s) => s.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length) {
      let slot = this.slots.find((s) => !s.busy);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      const job = slot && this.queue.shift();
      if (!slot || !job) return;
      const id = this.nextId++;
      slot.busy = true;
      slot.worker.ref(); // a thread at work keeps the process alive; an idle one does not
      this.pending.set(id, { job, slot });
      slot.worker.postMessage({ id, cluster: job.cluster, opts: job.opts });
    }
  }

  private spawn(): Slot {
    const ts = __filename.endsWith('.ts');
    const file = path.join(__dirname, `synth-worker.${ts ? 'ts' : 'js'}`);
    // From TypeScript sources (tests, ts-node) the thread compiles them too (bin/ts-require.js: transpile only, with
    // the compile cache launch.js uses); the precompiled build does not.
    const register = path.join(PROJECT_ROOT, 'bin', 'ts-require.js');
    const tsconfig = path.join(PROJECT_ROOT, 'tsconfig.json');
    const worker = new Worker(
      ts
        ? `require(${JSON.stringify(register)}).register(${JSON.stringify(tsconfig)}); require(${JSON.stringify(file)});`
        : file,
      {
        eval: ts,
        // Not the parent's flags (a -r ts-node/register of the parent would make a precompiled thread compile again).
        execArgv: [],
        env: { ...process.env },
      },
    );
    this.started++;
    const slot: Slot = { worker, done: 0, busy: false };
    worker.unref();
    worker.on('message', (m: SynthReply) => this.finish(m));
    worker.on('error', (e) => this.fail(slot, e));
    worker.on(
      'exit',
      (code) => code !== 0 && this.fail(slot, new WorkerStacksError(`a synthesis thread exited with code ${code}`)),
    );
    this.slots.push(slot);
    return slot;
  }

  private finish(m: SynthReply): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    const { job, slot } = p;
    slot.busy = false;
    slot.worker.unref();
    if ('error' in m) job.reject(rebuild(m.error));
    else job.resolve(m.result);
    if (++slot.done >= this.recycleAfter) {
      this.slots.splice(this.slots.indexOf(slot), 1);
      void slot.worker.terminate();
    }
    this.dispatch();
  }

  private fail(slot: Slot, e: Error): void {
    if (!this.slots.includes(slot)) return;
    this.slots.splice(this.slots.indexOf(slot), 1);
    for (const [id, p] of this.pending) {
      if (p.slot !== slot) continue;
      this.pending.delete(id);
      p.job.reject(
        new WorkerStacksError(`synthesis thread failed: ${e.message}`, {
          cause: e,
          hint: 'the reconciler retries with backoff; if it repeats, run `cdk synth` for this cluster to see the error',
        }),
      );
    }
    this.dispatch();
  }
}

/** An error as it crosses the thread (see synth-worker.ts). */
export interface ErrorData {
  readonly name: string;
  readonly message: string;
  readonly hint?: string;
  readonly findings?: readonly SynthesisFinding[];
}

/** What synth-worker.ts answers to one message: the stack, or the error. */
type SynthReply =
  { readonly id: number; readonly result: SynthesizedStack } | { readonly id: number; readonly error: ErrorData };

/** Errors cross the thread as data; the classes the error path distinguishes are rebuilt, with their hint and findings. */
export function rebuild(e: ErrorData): Error {
  // A RenderError comes back as the TemplateError it is (its message already holds its problems).
  const Known: Record<string, new (message: string, options?: { hint?: string }) => Error> = {
    SynthesisError,
    TemplateError,
    RenderError: TemplateError,
    UsageError,
    WorkerStacksError,
  };
  // The message holds the hint already (`...\n  fix: <hint>`); the class adds it again from `hint`.
  const suffix = e.hint ? `\n  fix: ${e.hint}` : '';
  const base = suffix && e.message.endsWith(suffix) ? e.message.slice(0, -suffix.length) : e.message;
  if (e.name === 'SynthesisFindingsError')
    return new SynthesisFindingsError(base, { hint: e.hint, findings: e.findings ?? [] });
  const Class = Object.hasOwn(Known, e.name) ? Known[e.name] : undefined;
  if (Class) return new Class(base, base !== e.message ? { hint: e.hint } : undefined);
  const err = new Error(e.message);
  err.name = e.name;
  return err;
}
