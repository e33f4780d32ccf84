import {
  AssumeRoleError,
  ConfigBucketError,
  SynthesisError,
  TemplateError,
  WorkerStacksError,
} from '../../../../lib/core/errors';
import { classifyError } from '../../../../lib/engines/reconciler/workflow/classify';
import { ConflictError } from '../../../../lib/model/ports/cluster-store';

const aws = (name: string, status: number, extra: object = {}) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status }, ...extra });
const net = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:1`), { code });

test.each([
  { what: 'a write conflict', e: new ConflictError('a', '1', '2'), kind: 'conflict', reason: undefined },
  { what: 'CloudFormation throttling', e: aws('ThrottlingException', 400), kind: 'transient', reason: 'Throttled' },
  { what: 'an HTTP 429', e: aws('TooManyRequests', 429), kind: 'transient', reason: 'Throttled' },
  {
    what: 'an AWS 503',
    e: aws('ServiceUnavailable', 503, { $fault: 'server' }),
    kind: 'transient',
    reason: 'AwsUnavailable',
  },
  { what: 'a refused connection', e: net('ECONNREFUSED'), kind: 'transient', reason: 'AwsUnavailable' },
  {
    what: 'a reset connection, wrapped',
    e: Object.assign(new Error('fetch failed'), { cause: net('ECONNRESET') }),
    kind: 'transient',
    reason: 'AwsUnavailable',
  },
  {
    what: 'access denied (a 403 answered by AWS): the account, not the cluster',
    e: aws('AccessDenied', 403, { $fault: 'client' }),
    kind: 'account',
    reason: 'AccessDenied',
  },
  {
    what: 'EC2 says UnauthorizedOperation',
    e: aws('UnauthorizedOperation', 403, { $fault: 'client' }),
    kind: 'account',
    reason: 'AccessDenied',
  },
  {
    what: 'another client error answered by AWS',
    e: aws('ValidationError', 400, { $fault: 'client' }),
    kind: 'failure',
    reason: 'AwsError',
  },
  {
    what: 'a deployer role that cannot be assumed',
    e: new AssumeRoleError(
      '333333333333',
      'eu-west-1',
      'arn:aws:iam::333333333333:role/worker-stacks-deployer-eu-west-1',
      aws('AccessDenied', 403),
    ),
    kind: 'account',
    reason: 'AssumeRoleFailed',
  },
  {
    what: 'STS throttling the AssumeRole',
    e: new AssumeRoleError('333333333333', 'eu-west-1', 'arn:x', aws('Throttling', 400)),
    kind: 'transient',
    reason: 'Throttled',
  },
  {
    what: 'STS unreachable',
    e: new AssumeRoleError('333333333333', 'eu-west-1', 'arn:x', net('ECONNREFUSED')),
    kind: 'transient',
    reason: 'AwsUnavailable',
  },
  {
    what: 'an expired session (assumed again next time)',
    e: aws('ExpiredToken', 400, { $fault: 'client' }),
    kind: 'transient',
    reason: 'AssumeRoleFailed',
  },
  {
    what: 'no config bucket in the account',
    e: new ConfigBucketError('worker-stacks-config-333333333333-eu-west-1', 'x', { cause: aws('NoSuchBucket', 404) }),
    kind: 'account',
    reason: 'NotBootstrapped',
  },
  {
    what: 'a config bucket refused (403)',
    e: new ConfigBucketError('worker-stacks-config-333333333333-eu-west-1', 'x', { cause: aws('AccessDenied', 403) }),
    kind: 'account',
    reason: 'AccessDenied',
  },
  {
    what: 'a template error',
    e: new TemplateError('x', { hint: 'y' }),
    kind: 'stalled',
    reason: 'RenderFailed',
  },
  {
    what: 'a synthesis error',
    e: new SynthesisError('x', { hint: 'y' }),
    kind: 'stalled',
    reason: 'SynthesisFailed',
  },
  {
    what: 'our own typed error',
    e: new WorkerStacksError('x', { hint: 'y' }),
    kind: 'failure',
    reason: 'ReconcileFailed',
  },
  {
    what: 'a bug (TypeError)',
    e: new TypeError("Cannot read properties of undefined (reading 'x')"),
    kind: 'failure',
    reason: 'ReconcileFailed',
  },
])('$what → $kind $reason', ({ e, kind, reason }) => {
  // GIVEN an error WHEN it is classified THEN transient errors are never failures, and a bug is never an AWS error
  const c = classifyError(e);
  expect(c.kind).toBe(kind);
  expect((c as { reason?: string }).reason).toBe(reason);
});
