import { Command } from 'commander';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { loadClusters } from '../../platform/files/load-clusters';
import { awsClients } from '../../platform/aws/clients';
import { SdkIamRoles } from '../../platform/aws/iam-roles';
import { checkConfigBucket } from '../../platform/aws/s3-publisher';
import { deployBootstrapStack } from '../../engines/deploy';
import { synthesizeBootstrap } from '../../engines/synthesis';
import { createDeps } from './wiring';
import { isPrincipalArn } from '../../engines/stacks';
import {
  configBucketName,
  DEFAULT_DEPLOYER_ROLE_NAME,
  deployerRoleName,
  executionRoleName,
  roleArn,
} from '../../core/naming';
import { dirFlags, EXIT, Io, loadOptions } from './context';
import { awsFlags, WiringFlagOptions, wiringFrom } from './aws-flags';

/** The parsed flags of `bootstrap`. */
interface BootstrapOptions extends WiringFlagOptions {
  /** --region <region>. @default every region of the account's clusters */
  readonly region?: string;
  /** --account <id>. @default the credentials' account */
  readonly account?: string;
  /** --trust <principal ARN...> (each may be a comma-separated list). @default none: no deployer or execution role */
  readonly trust?: readonly string[];
}

/** `worker-stacks bootstrap` (`delete` is delete.ts). */
export function registerBootstrap(program: Command, io: Io, done: (code: number) => void): void {
  awsFlags(dirFlags(program.command('bootstrap')))
    .description(
      'deploy WorkerStacks-Bootstrap (config bucket, node boundary; with --trust the deployer and execution roles) to an account: every region its clusters use, or --region',
    )
    .option('--region <region>', 'only this region')
    .option('--account <id>', "the account to bootstrap; it must be the credentials' own (default: theirs)")
    .option(
      '--trust <principal ARN...>',
      'who may assume the deployer role: the role (or user) the daemon runs as, in the management account',
    )
    .option('--external-id <id>', 'require this sts:ExternalId from --trust')
    .option('--role-name <prefix>', "the deployer role's name, before -<region>", DEFAULT_DEPLOYER_ROLE_NAME)
    .action(async (opts: BootstrapOptions) => {
      // Checked before any AWS call.
      const principals = (opts.trust ?? [])
        .flatMap((t) => t.split(','))
        .map((t) => t.trim())
        .filter(Boolean);
      const bad = principals.filter((p) => !isPrincipalArn(p));
      if (bad.length) {
        io.err(
          `error: --trust ${bad.join(', ')}: not a principal ARN (arn:aws:iam::<account>:role/<name>, :user/<name> or :root)\n`,
        );
        done(EXIT.usage);
        return;
      }
      if (opts.externalId && principals.length === 0) {
        io.err("error: --external-id is a condition of the deployer role's trust: give --trust <principal ARN> too\n");
        done(EXIT.usage);
        return;
      }
      if (opts.account !== undefined && !/^\d{12}$/.test(opts.account)) {
        io.err(`error: --account ${opts.account}: an account id is 12 digits\n`);
        done(EXIT.usage);
        return;
      }
      // Bootstrap runs with the account's own credentials (like cdk bootstrap): it makes the roles the daemon later assumes.
      const wiring = { ...wiringFrom(opts), assumeRole: false as const };
      const { deps } = createDeps(wiring);
      const account = await deps.identity.account();
      if (opts.account && opts.account !== account) {
        io.err(
          `error: --account ${opts.account}, but the credentials are for account ${account}; run with credentials of ${opts.account} (a profile, or a role of that account), nothing was deployed\n`,
        );
        done(EXIT.usage);
        return;
      }
      const trust = principals.length
        ? { principals, externalId: opts.externalId, roleName: opts.roleName }
        : undefined;
      const { clusters } = loadClusters(
        wiring.clustersDir,
        loadOptions({ clustersDir: wiring.clustersDir, templatesDir: wiring.templatesDir }),
      );
      const regions = opts.region
        ? [opts.region]
        : [
            ...new Set(clusters.filter((c) => c.cluster.spec.account === account).map((c) => c.cluster.spec.region)),
          ].sort();
      if (regions.length === 0) {
        io.err(`error: no cluster is in account ${account}; pass --region to bootstrap anyway\n`);
        done(EXIT.usage);
        return;
      }
      for (const region of regions) {
        // A bucket of another account under the predictable name: refused (ConfigBucketError) before any change set.
        const own = awsClients({ region, s3ForcePathStyle: wiring.s3ForcePathStyle });
        await checkConfigBucket(own.s3, configBucketName(account, region));
        const synth = synthesizeBootstrap(account, region, deps.workDir, trust);
        // A role of the live stack deleted behind CloudFormation's back is restored (deployBootstrapStack).
        const stack = await deployBootstrapStack(
          deps.aws(region),
          synth,
          `ws-${sha256Hex(synth.templateBody).slice(0, 32)}`,
          {
            log: deps.log,
            waitTimeoutMs: wiring.waitTimeoutMs,
            changeSetTimeoutMs: 10 * 60_000,
            region,
            roles: new SdkIamRoles(own.iam),
            say: (line) => io.err(`${account}/${region}: ${line}\n`),
          },
        );
        // The bucket's name is fixed by the template; an emulator that drops outputs still gets it printed.
        // And after: the bucket the stack made is the account's own.
        await checkConfigBucket(own.s3, configBucketName(account, region));
        const roles = trust
          ? `\t${roleArn(account, region, deployerRoleName(region, trust.roleName))}\t${roleArn(account, region, executionRoleName(region))}`
          : '';
        io.out(
          `${account}/${region}\t${stack.name}\t${stack.status}\t${stack.outputs.ConfigBucketName ?? configBucketName(account, region)}${roles}\n`,
        );
      }
      done(EXIT.ok);
    });
}
