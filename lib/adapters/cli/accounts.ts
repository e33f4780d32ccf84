import { Command } from 'commander';
import { AssumeRoleWiring } from './wiring';
import { DEFAULT_DEPLOYER_ROLE_NAME } from '../../core/naming';

/**
 * Flags of the commands that act on clusters' stacks (`reconcile`, `delete`): by default every call of a cluster is
 * made with its account's deployer role, assumed with the usual credentials; `--no-assume-role` is the
 * single-credential mode (one account, the credentials' own: what `cdk deploy` does).
 */
export function assumeRoleFlags(c: Command): Command {
  return c
    .option(
      '--role-name <prefix>',
      "the deployer role's name in each account, before -<region>",
      DEFAULT_DEPLOYER_ROLE_NAME,
    )
    .option('--external-id <id>', 'sts:ExternalId to pass when assuming the deployer roles')
    .option('--assume-role', "assume each cluster's account's deployer role for its calls (the default)")
    .option(
      '--no-assume-role',
      'call AWS with the usual credentials only (single-account mode); clusters of other accounts stall as AccountMismatch',
    );
}

/** The parsed assumeRoleFlags. */
export interface AssumeRoleOptions {
  /** --role-name <prefix>. @default DEFAULT_DEPLOYER_ROLE_NAME */
  readonly roleName: string;
  /** --external-id <id>. @default none */
  readonly externalId?: string;
  /** false with --no-assume-role, true with --assume-role. @default undefined (assume) */
  readonly assumeRole?: boolean;
}

/** The wiring's assumeRole from the parsed flags (false with --no-assume-role). */
export function assumeRoleFrom(opts: AssumeRoleOptions, daemon?: string): AssumeRoleWiring | false {
  if (opts.assumeRole === false) return false;
  return { roleName: opts.roleName, externalId: opts.externalId, daemon };
}
