import { Logger } from '../../../core/logger';

/**
 * Sends the process's warnings (the AWS SDK's Node-version notice on Node 20, a deprecation) to the JSON log as
 * `warn` lines instead of Node's own multi-line text on stderr, which is the log stream: a log pipeline parsing
 * JSON lines would otherwise get lines it cannot parse. Returns a function that puts Node's printer back.
 */
export function routeProcessWarnings(log: Logger, proc: NodeJS.Process = process): () => void {
  const previous = proc.listeners('warning');
  proc.removeAllListeners('warning');
  const onWarning = (w: Error & { code?: string }) =>
    log.warn({ warning: w.name, code: w.code }, w.message.replace(/\s*\n\s*/g, ' ').trim());
  proc.on('warning', onWarning);
  return () => {
    proc.off('warning', onWarning);
    for (const l of previous) proc.on('warning', l);
  };
}
