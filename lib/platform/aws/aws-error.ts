import { ConfigBucketError } from '../../core/errors';

/**
 * A text field of a thrown value (`name`, `message`, `code`), or '' when it has none: the SDK throws Error
 * subclasses, but a middleware, a mock or a network layer may throw anything.
 */
export function errorField(e: unknown, field: 'name' | 'message' | 'code'): string {
  const v: unknown = typeof e === 'object' && e !== null ? (e as Record<string, unknown>)[field] : undefined;
  return typeof v === 'string' ? v : '';
}

/**
 * Recognizes an error from AWS or from reaching it (SDK service errors carry
 * `$metadata`; credential and network failures have well-known names and
 * codes), and says in one line what it was and what to check next.
 */
export function describeAwsError(e: unknown): string | undefined {
  if (!e || typeof e !== 'object') return undefined;
  // Already said in our words (the bucket, the owner, the bootstrap command); its cause is the S3 error.
  if (e instanceof ConfigBucketError) return e.message;
  const err = e as {
    name?: string;
    message?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number; requestId?: string };
  };
  const network = ['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'ECONNRESET', 'EAI_AGAIN'].includes(String(err.code));
  const credentials = err.name === 'CredentialsProviderError' || /credential/i.test(String(err.name));
  if (!err.$metadata && !network && !credentials) return undefined;
  const status = err.$metadata?.httpStatusCode
    ? ` (HTTP ${err.$metadata.httpStatusCode}${err.$metadata.requestId ? `, request ${err.$metadata.requestId}` : ''})`
    : '';
  const fix = credentials
    ? 'provide credentials the usual way (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO, an instance role)'
    : network
      ? 'check the network and AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> if you use an emulator'
      : err.$metadata?.httpStatusCode === 403
        ? 'the credentials lack a permission: see the message for the action and resource'
        : 'read the message above; run the command again once it is fixed (it is safe to repeat)';
  return `AWS: ${err.name ?? 'Error'}: ${err.message ?? '(no message)'}${status}\n  fix: ${fix}`;
}
