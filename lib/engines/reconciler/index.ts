/**
 * The reconciler's front door: what the CLI and the stores use of it (the daemon, its controller and ops
 * server, the dependencies they are wired with). Nothing else of lib/engines/reconciler is imported from above it.
 */
export { Controller } from './runtime/controller';
export { runDaemon, runDaemonWhileLeading } from './runtime/daemon';
export { fencedAws } from './runtime/leader-fence';
export { ReconcilerMetrics } from './runtime/metrics';
export { routeProcessWarnings } from './runtime/process-warnings';
export { startOpsServer } from './runtime/server';
export { DEFAULT_BACKOFF } from './workflow/backoff';
export { codeFingerprint, codeVersion } from './workflow/code-version';
export {
  DEFAULT_MAX_UPDATE_ATTEMPTS,
  DEFAULT_POLL_MS,
  type DriftPolicy,
  type ReconcilerDeps,
  type RegionClients,
} from './workflow/context';
