import type * as Iam from '@aws-sdk/client-iam';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { S3Client } from '@aws-sdk/client-s3';
import { STSClient } from '@aws-sdk/client-sts';
import { UsageError } from '../../core/errors';
import { AwsCredentialIdentityProvider, EXPIRED_SESSION } from './assume-role';
import { configBucketOwner } from './s3-publisher';
import { errorField } from './aws-error';
import { RequestRateLimiter } from './request-rate';
import { lazyModule } from '../../core/lazy-module';

// Loaded when `iam` is first read (bootstrap's role check only; lib/core/lazy-module.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const iamSdk = lazyModule(() => require('@aws-sdk/client-iam') as typeof Iam);

export interface AwsClientOptions {
  readonly region: string;
  /** Path-style S3 URLs, for emulators (`--s3-force-path-style`, WORKER_STACKS_S3_FORCE_PATH_STYLE=true). @default false */
  readonly s3ForcePathStyle?: boolean;
  /** SDK attempts per call, with adaptive (client-side rate limited) retries. @default 8 */
  readonly maxAttempts?: number;
  /** Credentials of an assumed deployer role. @default the SDK's usual credential chain */
  readonly credentials?: AwsCredentialIdentityProvider;
  /** Called when AWS says the session expired (the credentials are then dropped and assumed again). @default nothing */
  readonly onExpiredSession?: () => void;
  /** Request timeouts of every client. @default awsTimeouts() (env WORKER_STACKS_AWS_*_TIMEOUT_SECONDS, else 10 s and 30 s) */
  readonly timeouts?: AwsTimeouts;
  /** The endpoint of every client (a test server). @default the SDK's (AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE>, else AWS) */
  readonly endpoint?: string;
  /**
   * Paces the CloudFormation client's requests (one limiter per account and region: AWS's quotas are). @default none:
   * requests go out as they come, and only the SDK's adaptive retries slow down, after AWS throttled some
   */
  readonly cloudFormationRate?: RequestRateLimiter;
}

/** How long one HTTP request to AWS may take before it fails with a TimeoutError (which the SDK and the reconciler retry). */
export interface AwsTimeouts {
  /** To open the connection (TCP and TLS), ms. @default 10000 */
  readonly connectionTimeoutMs: number;
  /** From sending the request to the end of the response, ms. @default 30000 */
  readonly requestTimeoutMs: number;
}

/** @internal exported for the timeout tests */
export const DEFAULT_AWS_TIMEOUTS: AwsTimeouts = { connectionTimeoutMs: 10_000, requestTimeoutMs: 30_000 };

/**
 * The timeouts from WORKER_STACKS_AWS_CONNECT_TIMEOUT_SECONDS and WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS, else the
 * defaults. Without a timeout, a connection that is half open (opened during an outage, then neither answered nor
 * reset) leaves its request, and the reconcile waiting on it, pending forever. Also the deadline of bootstrap's IAM
 * GetRole (lib/platform/aws/iam-roles.ts).
 */
export function awsTimeouts(env: NodeJS.ProcessEnv = process.env): AwsTimeouts {
  const seconds = (name: string, fallbackMs: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return fallbackMs;
    if (!/^\d+(\.\d+)?$/.test(v) || Number(v) <= 0)
      throw new UsageError(`${name}=${v} is not a number of seconds greater than 0`, {
        hint: `set ${name} to a number of seconds (for example 30), or unset it for the default`,
      });
    return Math.round(Number(v) * 1000);
  };
  return {
    connectionTimeoutMs: seconds('WORKER_STACKS_AWS_CONNECT_TIMEOUT_SECONDS', DEFAULT_AWS_TIMEOUTS.connectionTimeoutMs),
    requestTimeoutMs: seconds('WORKER_STACKS_AWS_REQUEST_TIMEOUT_SECONDS', DEFAULT_AWS_TIMEOUTS.requestTimeoutMs),
  };
}

/**
 * The NodeHttpHandler options of every SDK client. `throwOnRequestTimeout`: without it, @smithy/node-http-handler 4.x
 * only prints a warning when requestTimeout passes, and the request goes on waiting. `logger`: the handler's own
 * warnings (sockets at capacity) would go to the console, which is the daemon's JSON log stream; they become process
 * warnings, which the daemon logs as JSON lines (lib/engines/reconciler/runtime/process-warnings.ts) and a CLI command prints as Node does.
 */
export function requestHandlerOptions(t: AwsTimeouts = awsTimeouts()) {
  return {
    connectionTimeout: t.connectionTimeoutMs,
    requestTimeout: t.requestTimeoutMs,
    throwOnRequestTimeout: true,
    logger: HANDLER_LOGGER,
  };
}

const warn = (...content: unknown[]) =>
  process.emitWarning(
    content
      .map(String)
      .join(' ')
      .replace(/\s*\n\s*/g, ' ')
      .trim(),
    'AwsSdkWarning',
  );
const HANDLER_LOGGER = { trace: () => undefined, debug: () => undefined, info: () => undefined, warn, error: warn };

/**
 * SDK clients with the usual credential chain. Endpoints come from the SDK's
 * own AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables, so an emulator
 * needs no code change. Throttling and network errors are retried by the SDK
 * (adaptive mode, jittered backoff). Every request has a connection and a
 * request timeout (awsTimeouts()): one that is never answered ends in a
 * TimeoutError, which the reconciler treats as transient.
 */
export function awsClients(opts: AwsClientOptions) {
  const common = {
    region: opts.region,
    retryMode: 'adaptive',
    maxAttempts: opts.maxAttempts ?? 8,
    requestHandler: requestHandlerOptions(opts.timeouts),
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
  };
  const expiry = <C extends CloudFormationClient | S3Client | STSClient | Iam.IAMClient>(c: C): C =>
    opts.onExpiredSession ? onExpiredSession(c, opts.onExpiredSession) : c;
  let iam: Iam.IAMClient | undefined;
  return {
    cloudFormation: paced(expiry(new CloudFormationClient(common)), opts.cloudFormationRate),
    s3: expiry(withExpectedBucketOwner(new S3Client({ ...common, forcePathStyle: opts.s3ForcePathStyle ?? false }))),
    sts: expiry(new STSClient(common)),
    // IAM is global per partition: the SDK resolves its endpoint from the region (bootstrap's role check only).
    get iam(): Iam.IAMClient {
      return (iam ??= expiry(new (iamSdk().IAMClient)(common)));
    },
  };
}

/**
 * Every request this client makes on a config bucket (head, get, put, list, delete, any later one) sends
 * ExpectedBucketOwner = the account in the bucket's name, unless the caller set it: S3 then refuses a bucket that
 * another account created under the predictable name. Requests on other buckets are left as they are.
 */
export function withExpectedBucketOwner(s3: S3Client): S3Client {
  s3.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { Bucket?: unknown; ExpectedBucketOwner?: string };
      const owner =
        typeof input.Bucket === 'string' && input.ExpectedBucketOwner === undefined
          ? configBucketOwner(input.Bucket)
          : undefined;
      return next(owner ? { ...args, input: { ...args.input, ExpectedBucketOwner: owner } } : args);
    },
    { step: 'initialize', name: 'workerStacksExpectedBucketOwner' },
  );
  return s3;
}

/**
 * Every request the client sends takes a token of its API's bucket first, waiting for it when none is left: each
 * attempt of a retried call and each page of a paginator (the middleware sits after the SDK's retry middleware), so a
 * listing of 10 pages is 10 tokens, as it is 10 requests to AWS.
 */
export function paced<C extends CloudFormationClient>(client: C, limiter: RequestRateLimiter | undefined): C {
  if (!limiter) return client;
  // Typed by hand: the SDK's middleware types are in @smithy/types, which this package does not depend on.
  const middleware =
    (next: (args: object) => Promise<unknown>, context: { readonly commandName?: string }) => async (args: object) => {
      await limiter.take((context.commandName ?? 'Unknown').replace(/Command$/, ''));
      return next(args);
    };
  // After the retry middleware (each attempt is paced), before signing (a request waits, then is signed).
  client.middlewareStack.addRelativeTo(middleware as Parameters<C['middlewareStack']['addRelativeTo']>[0], {
    relation: 'before',
    toMiddleware: 'httpSigningMiddleware',
    name: 'workerStacksRequestRate',
  });
  return client;
}

/** Tells `expired` when a call fails because the session expired; the error goes on to the caller as it is. */
function onExpiredSession<C extends CloudFormationClient | S3Client | STSClient | Iam.IAMClient>(
  client: C,
  expired: () => void,
): C {
  (client.middlewareStack as S3Client['middlewareStack']).add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        if (EXPIRED_SESSION.test(errorField(e, 'name'))) expired();
        throw e;
      }
    },
    { step: 'initialize', name: 'workerStacksExpiredSession' },
  );
  return client;
}
