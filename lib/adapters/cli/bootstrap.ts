import { Command } from 'commander';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { loadClusters } from '../../model/cluster/load';
import { awsClients } from '../../platform/aws/clients';
import { isInProgress } from '../../model/ports/cloudformation-port';
import { checkConfigBucket } from '../../platform/aws/s3-publisher';
import { deployStack } from '../../engines/reconciler/tasks/change-set-ops';
import { synthesizeBootstrap } from '../../engines/synthesis/synthesize';
import { createDeps } from './wiring';
import { isPrincipalArn } from '../../engines/stacks/bootstrap-roles';
import {
  configBucketName,
  configKeyPrefix,
  DEFAULT_DEPLOYER_ROLE_NAME,
  deployerRoleName,
  executionRoleName,
  roleArn,
  poolStackName,
  workerStackName,
} from '../../core/naming';
import { DEFAULT_POOL } from '../../model/cluster/pools';
import { ClusterRecord } from '../../model/ports/cluster-store';
import { ConfigObjectStore, planCleanup } from '../../platform/aws/config-objects';
import { assumeRoleFlags, assumeRoleFrom } from './accounts';
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

/** The parsed flags of `delete`. */
interface DeleteOptions extends WiringFlagOptions {
  /** --region <region>. @default the cluster object's */
  readonly region?: string;
  /** --yes. @default false: nothing is deleted */
  readonly yes?: boolean;
  /** --force. @default false */
  readonly force?: boolean;
}

/** `worker-stacks bootstrap` and `worker-stacks delete <cluster>`. */
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
        const s3 = awsClients({ region, s3ForcePathStyle: wiring.s3ForcePathStyle }).s3;
        await checkConfigBucket(s3, configBucketName(account, region));
        const synth = synthesizeBootstrap(account, region, deps.workDir, trust);
        const stack = await deployStack(deps.aws(region), synth, `ws-${sha256Hex(synth.templateBody).slice(0, 32)}`, {
          log: deps.log,
          waitTimeoutMs: wiring.waitTimeoutMs,
          changeSetTimeoutMs: 10 * 60_000,
        });
        // The bucket's name is fixed by the template; an emulator that drops outputs still gets it printed.
        // And after: the bucket the stack made is the account's own.
        await checkConfigBucket(s3, configBucketName(account, region));
        const roles = trust
          ? `\t${roleArn(account, region, deployerRoleName(region, trust.roleName))}\t${roleArn(account, region, executionRoleName(region))}`
          : '';
        io.out(
          `${account}/${region}\t${stack.name}\t${stack.status}\t${stack.outputs.ConfigBucketName ?? configBucketName(account, region)}${roles}\n`,
        );
      }
      done(EXIT.ok);
    });

  assumeRoleFlags(awsFlags(dirFlags(program.command('delete'))))
    .description(
      "delete a cluster's worker stack, wait, then clear its status (the reconciler never deletes by itself)",
    )
    .argument('<cluster>', 'cluster name')
    .option('--region <region>', 'region of the stack when the object is gone')
    .option('--yes', 'really delete (required)')
    .option(
      '--force',
      'delete even though the cluster object still exists (the reconciler would create the stack again)',
    )
    .action(async (name: string, opts: DeleteOptions) => {
      if (!opts.yes) {
        io.err(`error: deleting ${workerStackName(name)} removes its nodes; run again with --yes\n`);
        done(EXIT.usage);
        return;
      }
      const wiring = { ...wiringFrom(opts), assumeRole: assumeRoleFrom(opts) };
      const { deps, store } = createDeps(wiring);
      const record = await store.get(name);
      const spec = (record?.raw as { spec?: { region?: string; account?: string } } | undefined)?.spec;
      if (record && spec && !opts.force) {
        io.err(
          `error: ${record.source} still exists, so the next reconcile would create ${workerStackName(name)} again; remove the object first, or pass --force\n`,
        );
        done(EXIT.usage);
        return;
      }
      const region = opts.region ?? spec?.region;
      if (!region) {
        io.err(`error: no cluster object ${name} to take the region from; pass --region\n`);
        done(EXIT.usage);
        return;
      }
      // The same safety as the reconciler: never act on a cluster's stack with another account's credentials.
      const expected = spec?.account ?? arnAccount(record?.status?.stackId);
      const actual = await deps.identity.account(expected ? { account: expected, region } : undefined);
      if (expected && expected !== actual) {
        io.err(
          `error: credentials are for account ${actual}, ${workerStackName(name)} is in ${expected}; use credentials of that account; nothing was deleted\n`,
        );
        done(EXIT.invalid);
        return;
      }
      const { cfn } = deps.aws(region, expected);
      // The pools' own stacks first (they import the shared stack's exports), then the shared stack.
      const stacks = [...poolStacksOf(name, record), workerStackName(name)];
      for (const stackName of stacks) {
        const stack = await cfn.describeStack(stackName);
        if (!stack) continue;
        if (isInProgress(stack.status)) await cfn.waitForStack(stack.id, { timeoutMs: wiring.waitTimeoutMs });
        await cfn.deleteStack(stack.id, `ws-delete-${sha256Hex(stack.id).slice(0, 32)}`);
        const final = await cfn.waitForStack(stack.id, {
          timeoutMs: wiring.waitTimeoutMs,
          onEvent: (e) => deps.log.info({ event: e }, `${e.logicalId} ${e.status}`),
        });
        if (final && final.status !== 'DELETE_COMPLETE') {
          io.err(
            `error: ${stack.name} is ${final.status}; read its events, fix what blocks the deletion, and run delete again\n`,
          );
          done(EXIT.invalid);
          return;
        }
        if (stackName !== workerStackName(name)) io.out(`${stackName}\tdeleted\n`);
      }
      // The stack is gone, so no launch template points to its config objects any more: they go too.
      await deleteConfigObjects(
        deps.aws(region, expected).configObjects,
        configBucketName(expected ?? actual, region),
        name,
        io,
      );
      if (record) await store.clearStatus(name, record.resourceVersion);
      io.out(`${workerStackName(name)}\tdeleted\n`);
      done(EXIT.ok);
    });
}

/**
 * The stacks of a cluster's pools that have their own: those the object names (spec.pools but `default`) and those its
 * status recorded (the object may be gone; a pool removed since). Never guessed from stack names: the stack
 * the stacks of the account are not all this cluster's, and the object says which of its pools exist.
 */
function poolStacksOf(name: string, record: ClusterRecord | undefined): string[] {
  const pools = (record?.raw as { spec?: { pools?: unknown } } | undefined)?.spec?.pools;
  const named = Array.isArray(pools)
    ? pools.flatMap((p: unknown) => {
        const pool = (p as { name?: unknown } | null)?.name;
        return typeof pool === 'string' && pool !== DEFAULT_POOL ? [poolStackName(name, pool)] : [];
      })
    : [];
  return [...new Set([...named, ...(record?.status?.pools ?? []).map((p) => p.stackName)])];
}

/** The account of a CloudFormation stack ARN (arn:aws:cloudformation:<region>:<account>:stack/...). */
function arnAccount(arn: string | undefined): string | undefined {
  return arn?.split(':')[4] || undefined;
}

/** Every config object of a deleted cluster; a failure is a warning with the prefix to clean by hand, never a failed delete. */
async function deleteConfigObjects(
  store: ConfigObjectStore | undefined,
  bucket: string,
  cluster: string,
  io: Io,
): Promise<void> {
  if (!store) return;
  const prefix = configKeyPrefix(cluster);
  try {
    const { remove } = planCleanup(await store.list(bucket, prefix), { keepLast: 0 });
    const r = remove.length ? await store.delete(bucket, remove) : { deleted: [], errors: [] };
    if (r.deleted.length)
      io.out(
        `${cluster}\tdeleted ${r.deleted.length} config object${r.deleted.length === 1 ? '' : 's'} from s3://${bucket}/${prefix}\n`,
      );
    if (r.errors.length)
      io.err(
        `warning: ${r.errors.length} config objects under s3://${bucket}/${prefix} were not deleted (${r.errors[0].key}: ${r.errors[0].message}); delete them by hand\n`,
      );
  } catch (e) {
    io.err(
      `warning: the config objects under s3://${bucket}/${prefix} were not deleted: ${(e as Error).message.split('\n')[0]}; delete them by hand\n`,
    );
  }
}
