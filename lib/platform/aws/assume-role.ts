import * as os from 'node:os';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import { AssumeRoleError } from '../../core/errors';
import { DEFAULT_DEPLOYER_ROLE_NAME, deployerRoleName, roleArn } from '../../core/naming';

export interface DeployerCredentialsOptions {
  /** Prefix of the deployer role's name in every account (`--role-name`); the region is appended. @default worker-stacks-deployer */
  readonly roleName?: string;
  /** sts:ExternalId (`--external-id`). @default none */
  readonly externalId?: string;
  /** Who assumes: the session name says it, in the target account's CloudTrail. @default worker-stacks-<hostname> */
  readonly daemon?: string;
  /** Requested session length, seconds (the role's MaxSessionDuration caps it). @default 3600 */
  readonly durationSeconds?: number;
  /** Credentials are assumed again this long before they expire. @default 10 minutes (more than the SDK's own 5-minute window) */
  readonly refreshBeforeMs?: number;
  /** STS with the management credentials (the usual chain), for a region. */
  readonly sts: (region: string) => STSClient;
  /** @default Date.now */
  readonly now?: () => number;
}

/** What STS allows in a RoleSessionName: 2-64 of [A-Za-z0-9_+=,.@-]. @internal exported for its tests (STS's name rules) */
export function sessionName(...parts: readonly string[]): string {
  const name = parts
    .map((p) => p.replace(/[^\w+=,.@-]+/g, '-'))
    .join('.')
    .replace(/^[-.]+|[-.]+$/g, '');
  return (name.length >= 2 ? name : `ws-${name}`).slice(0, 64);
}

/** Temporary credentials, as an SDK client's `credentials` takes them. */
export interface AwsCredentialIdentity {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
  readonly accountId?: string;
}
export type AwsCredentialIdentityProvider = () => Promise<AwsCredentialIdentity>;

interface Cached {
  value?: AwsCredentialIdentity;
  pending?: Promise<AwsCredentialIdentity>;
}

/**
 * The deployer role of each account and region, assumed with the management credentials: one session per role (so
 * per account and region), shared by every client of that account and region and every cluster in it, assumed again
 * `refreshBeforeMs` before it expires. A failure is never cached: the next reconcile asks STS again.
 *
 * The SDK's fromTemporaryCredentials would cache per client (CloudFormation and S3 would each assume) and refresh on
 * the SDK's clock; this provider is marked `memoized`, so the SDK leaves caching to it, and one session serves all.
 */
export class DeployerCredentials {
  private readonly cache = new Map<string, Cached>();
  private readonly providers = new Map<string, AwsCredentialIdentityProvider>();
  private readonly now: () => number;
  /** AssumeRole calls made (for logs and tests). */
  public assumed = 0;

  constructor(private readonly opts: DeployerCredentialsOptions) {
    this.now = opts.now ?? Date.now;
  }

  public roleArn(account: string, region: string): string {
    return roleArn(account, region, deployerRoleName(region, this.opts.roleName ?? DEFAULT_DEPLOYER_ROLE_NAME));
  }

  /** The session name: the daemon (and, for a one-cluster command, the cluster). */
  public sessionName(): string {
    return sessionName(this.opts.daemon ?? `worker-stacks-${os.hostname()}`);
  }

  /** The credentials of the account's deployer role, for an SDK client's `credentials`. */
  public provider(account: string, region: string): AwsCredentialIdentityProvider {
    const arn = this.roleArn(account, region);
    let p = this.providers.get(arn);
    if (!p) {
      const fn = () => this.get(arn, account, region);
      // The SDK wraps an unmarked provider in its own cache; this one caches (and refreshes) by itself.
      p = Object.assign(fn, { memoized: true });
      this.providers.set(arn, p);
    }
    return p;
  }

  /** Drops the account's session (AWS said it expired): the next call assumes the role again. */
  public invalidate(account: string, region: string): void {
    this.cache.delete(this.roleArn(account, region));
  }

  private get(arn: string, account: string, region: string): Promise<AwsCredentialIdentity> {
    const c = this.cache.get(arn) ?? {};
    this.cache.set(arn, c);
    const value = c.value;
    if (value?.expiration && value.expiration.getTime() - this.now() > (this.opts.refreshBeforeMs ?? 10 * 60_000))
      return Promise.resolve(value);
    c.pending ??= this.assume(arn, account, region).then(
      (value) => {
        c.value = value;
        c.pending = undefined;
        return value;
      },
      (e: unknown) => {
        c.pending = undefined;
        c.value = undefined;
        throw e;
      },
    );
    return c.pending;
  }

  private async assume(arn: string, account: string, region: string): Promise<AwsCredentialIdentity> {
    this.assumed++;
    try {
      const r = await this.opts.sts(region).send(
        new AssumeRoleCommand({
          RoleArn: arn,
          RoleSessionName: this.sessionName(),
          ExternalId: this.opts.externalId,
          DurationSeconds: this.opts.durationSeconds ?? 3600,
        }),
      );
      const c = r.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey)
        throw new Error(`STS answered AssumeRole of ${arn} without credentials`);
      return {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        sessionToken: c.SessionToken,
        expiration: c.Expiration,
        accountId: account,
      };
    } catch (e) {
      throw new AssumeRoleError(account, region, arn, e, {
        roleName: this.opts.roleName,
        externalId: this.opts.externalId !== undefined,
      });
    }
  }
}

/** Errors that say the session is no longer valid: drop it and assume again. */
export const EXPIRED_SESSION = /^(ExpiredToken|ExpiredTokenException|RequestExpired)$/;
