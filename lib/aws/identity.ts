import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';

/** Who the credentials are, to refuse touching a cluster in another account. */
export interface IdentityPort {
  account(): Promise<string>;
}

export class StsIdentity implements IdentityPort {
  private cached?: Promise<string>;
  constructor(private readonly sts: STSClient) {}
  public account(): Promise<string> {
    // A failed call is not remembered: one throttle or network blip must not fail every later cluster.
    this.cached ??= this.sts.send(new GetCallerIdentityCommand({})).then(
      (r) => r.Account!,
      (e) => {
        this.cached = undefined;
        throw e;
      },
    );
    return this.cached;
  }
}
