import { parentPort } from 'node:worker_threads';
import { WorkerCluster } from '../../model/cluster/schema/schema';
import { SynthesizeOptions, synthesizeStack } from './synthesize';

// One synthesis per message, in a worker thread of SynthPool: the CDK app and its global token map live and
// die with the thread, and the reconciler's event loop stays free while a stack is synthesized.
const port = parentPort;
if (!port) throw new Error('synth-worker.ts runs only as a worker thread of SynthPool');

port.on('message', ({ id, cluster, opts }: { id: number; cluster: WorkerCluster; opts: SynthesizeOptions }) => {
  try {
    // A Buffer crosses the thread as a plain Uint8Array: the config's bytes become a Buffer again (no copy).
    const c = opts.config;
    const config = c ? { ...c, bytes: Buffer.from(c.bytes.buffer, c.bytes.byteOffset, c.bytes.byteLength) } : undefined;
    port.postMessage({ id, result: synthesizeStack(cluster, { ...opts, config }) });
  } catch (e) {
    const err = e as Error & { hint?: string; findings?: unknown };
    port.postMessage({ id, error: { name: err.name, message: err.message, hint: err.hint, findings: err.findings } });
  }
});
