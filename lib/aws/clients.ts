import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { S3Client } from '@aws-sdk/client-s3';
import { STSClient } from '@aws-sdk/client-sts';
import { AwsCredentialIdentityProvider, EXPIRED_SESSION } from './assume-role';
import { configBucketOwner } from './s3-publisher';

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
}

/**
 * SDK clients with the usual credential chain. Endpoints come from the SDK's
 * own AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables, so an emulator
 * needs no code change. Throttling and network errors are retried by the SDK
 * (adaptive mode, jittered backoff).
 */
export function awsClients(opts: AwsClientOptions) {
  const common = { region: opts.region, retryMode: 'adaptive', maxAttempts: opts.maxAttempts ?? 8, ...(opts.credentials ? { credentials: opts.credentials } : {}) };
  const expiry = <C extends CloudFormationClient | S3Client | STSClient>(c: C): C => (opts.onExpiredSession ? onExpiredSession(c, opts.onExpiredSession) : c);
  return {
    cloudFormation: expiry(new CloudFormationClient(common)),
    s3: expiry(withExpectedBucketOwner(new S3Client({ ...common, forcePathStyle: opts.s3ForcePathStyle ?? false }))),
    sts: expiry(new STSClient(common)),
  };
}

export type AwsClients = ReturnType<typeof awsClients>;

/**
 * Every request this client makes on a config bucket (head, get, put, list, delete, any later one) sends
 * ExpectedBucketOwner = the account in the bucket's name, unless the caller set it: S3 then refuses a bucket that
 * another account created under the predictable name. Requests on other buckets are left as they are.
 */
export function withExpectedBucketOwner(s3: S3Client): S3Client {
  s3.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as { Bucket?: unknown; ExpectedBucketOwner?: string };
      const owner = typeof input.Bucket === 'string' && input.ExpectedBucketOwner === undefined ? configBucketOwner(input.Bucket) : undefined;
      return next(owner ? { ...args, input: { ...args.input, ExpectedBucketOwner: owner } as typeof args.input } : args);
    },
    { step: 'initialize', name: 'workerStacksExpectedBucketOwner' },
  );
  return s3;
}

/** Tells `expired` when a call fails because the session expired; the error goes on to the caller as it is. */
function onExpiredSession<C extends CloudFormationClient | S3Client | STSClient>(client: C, expired: () => void): C {
  (client.middlewareStack as S3Client['middlewareStack']).add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (e) {
        if (EXPIRED_SESSION.test(String((e as Error)?.name))) expired();
        throw e;
      }
    },
    { step: 'initialize', name: 'workerStacksExpiredSession' },
  );
  return client;
}
