import { DescribeStackEventsCommand, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { BOOTSTRAP_STACK_NAME, deployerRoleName, executionRoleName } from '../../lib/core/naming';
import { tempDir } from '../helpers/clusters';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../helpers/moto';
import { AWS_FLAGS, cli } from './harness';

// Issue 32 item 17: the daemon's fix for a deleted deployer role is to bootstrap the account again. That used to exit
// 0 and leave the role gone: CloudFormation compares templates, not live resources, so the same template is "no
// change". Now bootstrap asks IAM whether each role of the live stack exists, and restores a missing one (deploys
// the stack without it, then with it: lib/engines/stacks/bootstrap-restore.ts). On the project's moto wrapper, as the
// account's admin: plain moto fails the first deployment when it deletes the role that is already gone, where
// CloudFormation counts NotFound on a delete as deleted (tools/moto/server.py patch 8).

jest.setTimeout(300_000);

const MANAGEMENT = `arn:aws:iam::${MOTO_ACCOUNT}:user/moto`;
const DEPLOYER = deployerRoleName(MOTO_REGION);
const EXECUTION = executionRoleName(MOTO_REGION);
let moto: Moto;
let dir: string;
let cfn: CloudFormationClient;

beforeAll(async () => {
  moto = await startMoto(30_000, {}, { inProgressSeconds: 0 });
  Object.assign(process.env, moto.env, { TMPDIR: tempDir('tmp'), WORKER_STACKS_WORK_DIR: tempDir('work') });
  dir = tempDir('clusters');
  cfn = new CloudFormationClient({ region: MOTO_REGION });
}, 120_000);
afterAll(async () => {
  // Unset when the setup failed before it; the teardown must not hide that failure.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
  cfn?.destroy();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition
  await moto?.stop();
});

const bootstrap = () =>
  cli(['bootstrap', '--region', MOTO_REGION, '--trust', MANAGEMENT, '--clusters', dir, ...AWS_FLAGS]);

interface Role {
  readonly exists: boolean;
  readonly trust?: unknown;
  readonly inline?: string[];
}

/** What IAM says of the role: whether it exists, its trust policy and its inline policies. */
function role(name: string): Role {
  return moto.python<Role>(
    `
iam = boto3.client('iam', **_kw)
try:
    r = iam.get_role(RoleName=args)['Role']
    out = dict(exists=True, trust=r['AssumeRolePolicyDocument'], inline=sorted(iam.list_role_policies(RoleName=args)['PolicyNames']))
except iam.exceptions.NoSuchEntityException:
    out = dict(exists=False)
`,
    name,
  );
}

/** Deletes the role as IAM requires: its inline policies and attached policies first. */
function deleteRole(name: string): void {
  moto.python(
    `
iam = boto3.client('iam', **_kw)
for p in iam.list_role_policies(RoleName=args)['PolicyNames']:
    iam.delete_role_policy(RoleName=args, PolicyName=p)
for p in iam.list_attached_role_policies(RoleName=args)['AttachedPolicies']:
    iam.detach_role_policy(RoleName=args, PolicyArn=p['PolicyArn'])
iam.delete_role(RoleName=args)
`,
    name,
  );
}

/** What a deployment leaves on the bootstrap stack: its status, last update and number of events. */
async function stackState(): Promise<{ status?: string; updated?: string; events: number }> {
  const stack = (await cfn.send(new DescribeStacksCommand({ StackName: BOOTSTRAP_STACK_NAME }))).Stacks?.[0];
  const events = await cfn.send(new DescribeStackEventsCommand({ StackName: BOOTSTRAP_STACK_NAME }));
  return {
    status: stack?.StackStatus,
    updated: stack?.LastUpdatedTime?.toISOString(),
    events: events.StackEvents?.length ?? 0,
  };
}

const trustOf = (r: Role) => JSON.stringify(r.trust);

test.each([
  ['deployer', DEPLOYER],
  ['execution', EXECUTION],
])(
  'a deleted %s role: bootstrap again restores it, with its trust and its policy; once more changes nothing',
  async (kind, name) => {
    // GIVEN the account bootstrapped with --trust, and then the role deleted behind CloudFormation's back
    const first = await bootstrap();
    expect({ code: first.code, err: first.err }).toEqual({ code: 0, err: '' });
    const made = role(name);
    expect(made.exists).toBe(true);
    expect(made.inline).toHaveLength(1);
    const otherName = name === DEPLOYER ? EXECUTION : DEPLOYER;
    const other = role(otherName);
    deleteRole(name);
    expect(role(name)).toEqual({ exists: false });

    // WHEN the account is bootstrapped again, with the same command
    const again = await bootstrap();

    // THEN it says what it restores, exits 0, and the role exists again: the same trust, its policy again
    expect({ code: again.code, err: again.err }).toEqual({
      code: 0,
      err: `${MOTO_ACCOUNT}/${MOTO_REGION}: ${kind} role ${name} is missing: restoring it\n`,
    });
    const restored = role(name);
    expect(restored).toEqual({ exists: true, trust: made.trust, inline: made.inline });
    if (kind === 'deployer') expect(trustOf(restored)).toContain(MANAGEMENT); // the daemon's principal may assume it again
    // AND the other role is as it was (its trust and its inline policy)
    expect(role(otherName)).toEqual(other);
    const after = await stackState();
    expect(after.status).toMatch(/^UPDATE_COMPLETE$/);

    // AND a bootstrap with nothing missing changes nothing
    const once = await bootstrap();
    expect({ code: once.code, err: once.err }).toEqual({ code: 0, err: '' });
    expect(await stackState()).toEqual(after);
    expect(role(name)).toEqual(restored);
  },
);
