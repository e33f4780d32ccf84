import type { IAMClient } from '@aws-sdk/client-iam';
import { WorkerStacksError } from '../../core/errors';
import { IamRolePort } from '../../model/ports/iam-port';
import { lazyModule } from '../../core/lazy-module';

// Loaded at the first role check (lib/core/lazy-module.ts).
// eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
const iamCommands = lazyModule(() => require('@aws-sdk/client-iam') as typeof import('@aws-sdk/client-iam'));

/**
 * IAM's GetRole with the client's credentials (the caller's own: bootstrap runs with the account's credentials). IAM
 * has one endpoint per partition; the SDK picks it from the client's region, and honours AWS_ENDPOINT_URL_IAM /
 * AWS_ENDPOINT_URL as every client of awsClients does, so an emulator needs no code change.
 */
export class SdkIamRoles implements IamRolePort {
  constructor(private readonly iam: IAMClient) {}

  public async roleExists(roleName: string): Promise<boolean> {
    try {
      await this.iam.send(new (iamCommands().GetRoleCommand)({ RoleName: roleName }));
      return true;
    } catch (e) {
      const name = (e as { name?: unknown }).name;
      if (name === 'NoSuchEntityException' || name === 'NoSuchEntity') return false;
      throw new WorkerStacksError(`IAM GetRole ${roleName}: ${(e as Error).message}`, {
        cause: e,
        hint: "bootstrap checks that the stack's roles exist with the account's own credentials: they need iam:GetRole on them; check the network to IAM (or AWS_ENDPOINT_URL_IAM) and run the command again",
      });
    }
  }
}
