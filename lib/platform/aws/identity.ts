import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { WorkerStacksError } from '../../core/errors';

/** Who the credentials are, to refuse touching a cluster in another account. */
export interface IdentityPort {
  /** The account of the credentials used for `cluster`'s account and region (the assumed deployer's), or of the daemon's own. */
  account(cluster?: { readonly account: string; readonly region: string }): Promise<string>;
}

export class StsIdentity implements IdentityPort {
  private cached?: Promise<string>;
  constructor(private readonly sts: STSClient) {}
  public account(): Promise<string> {
    // A failed call is not remembered: one throttle or network blip must not fail every later cluster.
    this.cached ??= this.sts.send(new GetCallerIdentityCommand({})).then(
      (r) => {
        if (!r.Account) throw new WorkerStacksError('STS GetCallerIdentity answered without an account');
        return r.Account;
      },
      (e: unknown) => {
        this.cached = undefined;
        throw e;
      },
    );
    return this.cached;
  }
}

/**
 * With assumed deployer roles: the account of the credentials each cluster's calls are made with, by
 * GetCallerIdentity with those very credentials (per account and region, remembered once known).
 */
export class DeployerIdentity implements IdentityPort {
  private readonly byTarget = new Map<string, StsIdentity>();
  constructor(
    private readonly sts: (account: string, region: string) => STSClient,
    private readonly own: IdentityPort,
  ) {}
  public account(cluster?: { readonly account: string; readonly region: string }): Promise<string> {
    if (!cluster) return this.own.account();
    const key = `${cluster.account}/${cluster.region}`;
    let id = this.byTarget.get(key);
    if (!id) this.byTarget.set(key, (id = new StsIdentity(this.sts(cluster.account, cluster.region))));
    return id.account();
  }
}
