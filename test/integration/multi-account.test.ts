import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { configBucketName, workerStackName } from '../../lib/core/naming';
import { rawExample, tempDir } from '../helpers/clusters';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../helpers/moto';
import { AWS_FLAGS, cli } from './harness';

/**
 * One daemon, many accounts, against moto. moto gives the credentials of an assumed role the account in the role's
 * ARN (its docs, "Multi-Account support"; moto/sts/models.py): calls made with them land in that account's
 * CloudFormation and S3. The daemon runs as moto's default account (the management account) and assumes each
 * cluster's deployer role; accounts A and B are bootstrapped with their own credentials and `--trust`, C is not.
 *
 * moto assumes any role, even one that does not exist (it checks no trust policy unless IAM enforcement is on), so
 * here the unbootstrapped account shows up at its first write: no config bucket (NotBootstrapped). Against AWS the
 * AssumeRole itself is refused (AssumeRoleFailed; test/platform/aws/assume-role.test.ts and test/engines/reconciler/workflow/classify.test.ts).
 */

jest.setTimeout(600_000);

const A = '111111111111';
const B = '222222222222';
const C = '333333333333';
const MANAGEMENT = `arn:aws:iam::${MOTO_ACCOUNT}:user/moto`;
let moto: Moto;
let dir: string;

/** Runs a boto3 snippet in `account` (credentials of a role assumed there); `ec2`, `cfn`, `s3` are that account's. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the shape of the JSON its Python snippet prints; the test or bench reads it as such
function inAccount<T>(account: string, snippet: string, args: unknown = null): T {
  return moto.python<T>(
    `
_c = boto3.client('sts', **_kw).assume_role(RoleArn='arn:aws:iam::${account}:role/admin', RoleSessionName='test')['Credentials']
_a = dict(endpoint_url=sys.argv[1], region_name=sys.argv[2], aws_access_key_id=_c['AccessKeyId'], aws_secret_access_key=_c['SecretAccessKey'], aws_session_token=_c['SessionToken'])
ec2 = boto3.client('ec2', **_a); cfn = boto3.client('cloudformation', **_a); s3 = boto3.client('s3', **_a)
${snippet}`,
    args,
  );
}

/** Credentials of an admin of `account`, as the environment gives them to the CLI. */
function adminEnv(account: string): Record<string, string> {
  const c = inAccount<{ key: string; secret: string; token: string }>(
    account,
    `out = dict(key=_c['AccessKeyId'], secret=_c['SecretAccessKey'], token=_c['SessionToken'])`,
  );
  return { AWS_ACCESS_KEY_ID: c.key, AWS_SECRET_ACCESS_KEY: c.secret, AWS_SESSION_TOKEN: c.token };
}

async function withEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Reflect.deleteProperty(process.env, k);
      else process.env[k] = v;
    }
  }
}

/** staging-us1 in `account`, on that account's own VPC. */
function clusterIn(account: string, name: string): void {
  const net = inAccount<{ vpcId: string; subnetIds: string[]; ami: string }>(
    account,
    `
vpc = ec2.create_vpc(CidrBlock='10.0.0.0/16')['Vpc']['VpcId']
subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f'10.0.{i}.0/24', AvailabilityZone=az)['Subnet']['SubnetId'] for i, az in enumerate(['eu-west-1a', 'eu-west-1b'])]
out = dict(vpcId=vpc, subnetIds=subnets, ami=ec2.describe_images(Owners=['amazon'])['Images'][0]['ImageId'])
`,
  );
  const raw = rawExample('staging-us1');
  raw.metadata.name = name;
  Object.assign(raw.spec, { account, region: MOTO_REGION });
  raw.spec.network = { vpcId: net.vpcId, availabilityZones: ['eu-west-1a', 'eu-west-1b'], subnetIds: net.subnetIds };
  raw.spec.pool.machineImage = net.ami;
  raw.spec.cloudConfig.values.bootstrapTokenSecretArn = `arn:aws:secretsmanager:${MOTO_REGION}:${account}:secret:worker-stacks/${name}/kubelet-bootstrap-XyZ123`;
  fs.writeFileSync(path.join(dir, `${name}.yaml`), stringify(raw));
}

/** What each account holds: worker stacks and config objects. */
function holdings(account: string): { stacks: string[]; objects: string[]; roles: string[] } {
  return inAccount(
    account,
    `
stacks = sorted(s['StackName'] for s in cfn.describe_stacks()['Stacks'] if s['StackName'].startswith('WorkerStack-'))
try:
    objects = sorted(o['Key'] for o in s3.list_objects_v2(Bucket=args)['Contents'])
except Exception:
    objects = []
iam = boto3.client('iam', **_a)
out = dict(stacks=stacks, objects=objects, roles=sorted(r['RoleName'] for r in iam.list_roles()['Roles'] if r['RoleName'].startswith('worker-stacks-')))
`,
    configBucketName(account, MOTO_REGION),
  );
}

beforeAll(async () => {
  moto = await startMoto();
  Object.assign(process.env, moto.env, { TMPDIR: tempDir('tmp'), WORKER_STACKS_WORK_DIR: tempDir('work') });
  dir = tempDir('accounts');
}, 120_000);
// eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
afterAll(() => moto?.stop());

test("bootstrap --account --trust in each account makes its bucket and its deployer and execution roles, with that account's credentials", async () => {
  for (const account of [A, B]) {
    // GIVEN credentials of the account (the daemon's own are refused for it)
    const wrong = await cli([
      'bootstrap',
      '--account',
      account,
      '--region',
      MOTO_REGION,
      '--trust',
      MANAGEMENT,
      '--clusters',
      dir,
      ...AWS_FLAGS,
    ]);
    expect({ code: wrong.code, err: wrong.err }).toEqual({
      code: 2,
      err: `error: --account ${account}, but the credentials are for account ${MOTO_ACCOUNT}; run with credentials of ${account} (a profile, or a role of that account), nothing was deployed\n`,
    });

    // WHEN it is bootstrapped with them
    const run = await withEnv(adminEnv(account), () =>
      cli([
        'bootstrap',
        '--account',
        account,
        '--region',
        MOTO_REGION,
        '--trust',
        MANAGEMENT,
        '--clusters',
        dir,
        ...AWS_FLAGS,
      ]),
    );

    // THEN
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' });
    expect(run.out).toBe(
      `${account}/${MOTO_REGION}\tWorkerStacks-Bootstrap\tCREATE_COMPLETE\t${configBucketName(account, MOTO_REGION)}\tarn:aws:iam::${account}:role/worker-stacks-deployer-${MOTO_REGION}\tarn:aws:iam::${account}:role/worker-stacks-cfn-exec-${MOTO_REGION}\n`,
    );
    expect(holdings(account).roles).toEqual([
      `worker-stacks-cfn-exec-${MOTO_REGION}`,
      `worker-stacks-deployer-${MOTO_REGION}`,
    ]);
  }
  // and the management account got nothing
  expect(holdings(MOTO_ACCOUNT).roles).toEqual([]);
});

test('one daemon: each cluster deploys into its own account; the unbootstrapped account stalls with the fix while the others are Ready', async () => {
  // GIVEN clusters in A, B and (not bootstrapped) C
  clusterIn(A, 'alpha');
  clusterIn(B, 'bravo');
  clusterIn(C, 'charlie');

  // WHEN one reconcile runs with the management credentials, assuming each account's deployer role
  const run = await cli(['reconcile', '--once', '--clusters', dir, ...AWS_FLAGS]);

  // THEN A and B are applied and C stalls; --once says so with its exit code
  const lines = run.out.trim().split('\n');
  expect(lines.slice(0, 2)).toEqual(['alpha\tapplied', 'bravo\tapplied']);
  expect(lines[2]).toMatch(/^charlie\tstalled\t/);
  expect(run.code).toBe(1);

  // AND each stack and config object is in its own account only
  const [a, b, c, management] = [holdings(A), holdings(B), holdings(C), holdings(MOTO_ACCOUNT)];
  expect(a.stacks).toEqual([workerStackName('alpha')]);
  expect(b.stacks).toEqual([workerStackName('bravo')]);
  expect(c.stacks).toEqual([]);
  expect(management.stacks).toEqual([]);
  expect(a.objects).toEqual([expect.stringMatching(/^clusters\/alpha\/[0-9a-f]{64}\.yaml$/)]);
  expect(b.objects).toEqual([expect.stringMatching(/^clusters\/bravo\/[0-9a-f]{64}\.yaml$/)]);

  // AND the status says it: Ready in A and B, Stalled with the bootstrap command in C
  const status = (name: string) =>
    JSON.parse(fs.readFileSync(path.join(dir, '.status', `${name}.json`), 'utf8')).status;
  expect(getCondition(status('alpha'), 'Ready')).toMatchObject({ status: 'True', reason: 'StackCreated' });
  expect(getCondition(status('bravo'), 'Ready')).toMatchObject({ status: 'True', reason: 'StackCreated' });
  const stalled = getCondition(status('charlie'), 'Stalled');
  expect(stalled).toMatchObject({ status: 'True', reason: 'NotBootstrapped' });
  expect(stalled?.message).toContain(
    `s3://${configBucketName(C, MOTO_REGION)} does not exist: account ${C} is not bootstrapped`,
  );
  expect(stalled?.message).toContain('worker-stacks bootstrap');
  expect(getCondition(status('charlie'), 'Ready')).toMatchObject({ status: 'False', reason: 'NotBootstrapped' });

  // AND `status` groups the clusters by account and region
  const table = await cli(['status', '--clusters', dir]);
  expect(table.out).toMatch(
    new RegExp(
      `ACCOUNT/REGION[\\s\\S]*${A}/${MOTO_REGION}[\\s\\S]*alpha[\\s\\S]*${B}/${MOTO_REGION}[\\s\\S]*bravo[\\s\\S]*${C}/${MOTO_REGION}[\\s\\S]*charlie`,
    ),
  );
});

test('once C is bootstrapped, the next pass heals its cluster without a retry, and A and B are left alone', async () => {
  // GIVEN C bootstrapped now
  const boot = await withEnv(adminEnv(C), () =>
    cli(['bootstrap', '--account', C, '--region', MOTO_REGION, '--trust', MANAGEMENT, '--clusters', dir, ...AWS_FLAGS]),
  );
  expect(boot.code).toBe(0);

  // WHEN the next pass runs (the daemon's resync)
  const run = await cli(['reconcile', '--once', '--clusters', dir, ...AWS_FLAGS]);

  // THEN
  expect(run.out).toBe('alpha\tunchanged\nbravo\tunchanged\ncharlie\tapplied\n');
  expect(run.code).toBe(0);
  expect(holdings(C).stacks).toEqual([workerStackName('charlie')]);
});
