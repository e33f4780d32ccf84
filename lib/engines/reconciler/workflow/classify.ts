import { EXPIRED_SESSION } from '../../../platform/aws/assume-role';
import {
  AssumeRoleError,
  ConfigBucketError,
  NotLeaderError,
  SynthesisError,
  TemplateError,
  WorkerStacksError,
} from '../../../core/errors';
import { ConflictError } from '../../../model/ports/cluster-store';
import { Reason } from './conditions';

/**
 * What an error means for the reconciler, decided in one place:
 *   conflict  — someone else wrote the record: re-read and requeue at once;
 *   busy      — CloudFormation refused because the stack is in progress (an operation our read did not show yet):
 *               look again after a poll, never counted as a failure;
 *   transient — throttling, network, AWS 5xx: requeue with backoff, never counted as a failure, Ready untouched;
 *   failure   — counted toward --max-update-attempts, then Stalled;
 *   stalled   — retrying cannot help until the object or the code changes;
 *   account   — the cluster's account cannot be used (deployer role missing or untrusting, access denied, not
 *               bootstrapped): Stalled, not counted, looked at again by the next resync — fixing the account (its
 *               bootstrap) heals every cluster in it without a retry per cluster; other accounts go on.
 */
export type ErrorClass =
  | { kind: 'conflict' }
  | { kind: 'busy' }
  | { kind: 'transient'; reason: Reason }
  | { kind: 'failure'; reason: Reason }
  | { kind: 'stalled'; reason: Reason }
  | { kind: 'account'; reason: Reason };

const ACCESS_DENIED =
  /^(AccessDenied|AccessDeniedException|UnauthorizedOperation|AuthorizationError|UnauthorizedAccess)$/;

/** CloudFormation's refusals of a change set or delete while the stack has an operation in progress. */
const STACK_BUSY =
  /is in [A-Z_]+_IN_PROGRESS state and can ?not be|on a stack in [A-Z_]+_IN_PROGRESS|current (execution )?status of \[EXECUTE_IN_PROGRESS\]/;
const THROTTLING = /Throttl|TooManyRequests|RequestLimitExceeded|SlowDown|RequestThrottled/;
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const NETWORK_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'NetworkingError',
  'AbortError',
]);
const SERVER_NAMES = new Set([
  'InternalFailure',
  'InternalError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'InternalServerError',
]);

interface AwsLike {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
  $fault?: string;
  $metadata?: { httpStatusCode?: number };
}

export function classifyError(e: unknown): ErrorClass {
  // Leadership lost mid-reconcile: nothing to record (the new leader owns the status); like a conflict, only requeue.
  if (e instanceof ConflictError || e instanceof NotLeaderError) return { kind: 'conflict' };
  if (e instanceof TemplateError) return { kind: 'stalled', reason: 'RenderFailed' };
  if (e instanceof SynthesisError) return { kind: 'stalled', reason: 'SynthesisFailed' };
  if (e instanceof AssumeRoleError) {
    // STS throttled or unreachable is not a broken account.
    const inner = classifyError(e.cause);
    return inner.kind === 'transient' ? inner : { kind: 'account', reason: 'AssumeRoleFailed' };
  }
  if (e instanceof ConfigBucketError) {
    const cause = (e.cause ?? {}) as AwsLike;
    if (cause.name === 'NoSuchBucket') return { kind: 'account', reason: 'NotBootstrapped' };
    if (cause.$metadata?.httpStatusCode === 403 || ACCESS_DENIED.test(String(cause.name)))
      return { kind: 'account', reason: 'AccessDenied' };
  }
  if (e instanceof WorkerStacksError) return { kind: 'failure', reason: 'ReconcileFailed' };
  const err = (e ?? {}) as AwsLike;
  if (STACK_BUSY.test(String(err.message))) return { kind: 'busy' };
  if (THROTTLING.test(String(err.name)) || err.$metadata?.httpStatusCode === 429)
    return { kind: 'transient', reason: 'Throttled' };
  // The session ran out: the credentials are dropped (lib/platform/aws/clients.ts) and the next attempt assumes the role again.
  if (EXPIRED_SESSION.test(String(err.name))) return { kind: 'transient', reason: 'AssumeRoleFailed' };
  if (ACCESS_DENIED.test(String(err.name))) return { kind: 'account', reason: 'AccessDenied' };
  if (
    isNetwork(err) ||
    (err.$metadata?.httpStatusCode ?? 0) >= 500 ||
    err.$fault === 'server' ||
    SERVER_NAMES.has(String(err.name))
  )
    return { kind: 'transient', reason: 'AwsUnavailable' };
  // An AWS service answered with a client error: it will answer the same until something changes.
  if (err.$metadata || err.$fault === 'client') return { kind: 'failure', reason: 'AwsError' };
  // Anything else is a bug of ours: say so, never dress it up as an AWS error.
  return { kind: 'failure', reason: 'ReconcileFailed' };
}

function isNetwork(err: AwsLike): boolean {
  for (
    let cur: AwsLike | undefined = err, depth = 0;
    cur && depth < 4;
    cur = cur.cause as AwsLike | undefined, depth++
  ) {
    if (
      NETWORK_CODES.has(String(cur.code)) ||
      NETWORK_NAMES.has(String(cur.name)) ||
      /socket hang up|fetch failed|ECONNREFUSED|ECONNRESET/.test(String(cur.message))
    )
      return true;
  }
  return false;
}
