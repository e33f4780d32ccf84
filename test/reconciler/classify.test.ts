import { SynthesisError, TemplateError, WorkerStacksError } from '../../lib/errors';
import { classifyError } from '../../lib/reconciler/classify';
import { ConflictError } from '../../lib/stores/cluster-store';

const aws = (name: string, status: number, extra: object = {}) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, ...extra });
const net = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });

test.each([
  { what: 'a write conflict', e: new ConflictError('a', '1', '2'), kind: 'conflict', reason: undefined },
  { what: 'CloudFormation throttling', e: aws('ThrottlingException', 400), kind: 'transient', reason: 'Throttled' },
  { what: 'an HTTP 429', e: aws('TooManyRequests', 429), kind: 'transient', reason: 'Throttled' },
  { what: 'an AWS 503', e: aws('ServiceUnavailable', 503, { $fault: 'server' }), kind: 'transient', reason: 'AwsUnavailable' },
  { what: 'a refused connection', e: net('ECONNREFUSED'), kind: 'transient', reason: 'AwsUnavailable' },
  { what: 'a reset connection, wrapped', e: Object.assign(new Error('fetch failed'), { cause: net('ECONNRESET') }), kind: 'transient', reason: 'AwsUnavailable' },
  { what: 'access denied (a 403 answered by AWS)', e: aws('AccessDenied', 403, { $fault: 'client' }), kind: 'failure', reason: 'AwsError' },
  { what: 'a template error', e: new TemplateError('x', { hint: 'y' } as never), kind: 'stalled', reason: 'RenderFailed' },
  { what: 'a synthesis error', e: new SynthesisError('x', { hint: 'y' } as never), kind: 'stalled', reason: 'SynthesisFailed' },
  { what: 'our own typed error', e: new WorkerStacksError('x', { hint: 'y' }), kind: 'failure', reason: 'ReconcileFailed' },
  { what: 'a bug (TypeError)', e: new TypeError("Cannot read properties of undefined (reading 'x')"), kind: 'failure', reason: 'ReconcileFailed' },
])('$what → $kind $reason', ({ e, kind, reason }) => {
  // GIVEN an error WHEN it is classified THEN transient errors are never failures, and a bug is never an AWS error
  const c = classifyError(e);
  expect(c.kind).toBe(kind);
  expect((c as { reason?: string }).reason).toBe(reason);
});
