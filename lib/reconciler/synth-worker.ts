import { parentPort } from 'node:worker_threads';
import { synthesizeStack } from './synthesize';

// One synthesis per message, in a worker thread of SynthPool: the CDK app and its global token map live and
// die with the thread, and the reconciler's event loop stays free while a stack is synthesized.
parentPort!.on('message', ({ id, cluster, opts }) => {
  try {
    parentPort!.postMessage({ id, result: synthesizeStack(cluster, opts) });
  } catch (e) {
    const err = e as Error & { hint?: string };
    parentPort!.postMessage({ id, error: { name: err.name, message: err.message, hint: err.hint } });
  }
});
