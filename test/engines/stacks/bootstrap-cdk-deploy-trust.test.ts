import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES_DIR, REPO, tempDir } from '../../helpers/clusters';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../../helpers/moto';
import { run } from '../../helpers/tools';

/**
 * The multi-account bootstrap through the CDK CLI: `npx cdk deploy WorkerStacks-Bootstrap-<account>-<region>
 * -c worker-stacks:trust=<management principal>` against moto creates the deployer and CloudFormation execution roles
 * beside the bucket, and the node permissions boundary. (Updating a bootstrap stack that had no trust into one that
 * has is refused by moto with an error page, not by CloudFormation: `worker-stacks bootstrap --trust` covers it.)
 */

jest.setTimeout(300_000);

const STACK_ID = `WorkerStacks-Bootstrap-${MOTO_ACCOUNT}-${MOTO_REGION}`;
const TRUST = `arn:aws:iam::${MOTO_ACCOUNT}:role/management-daemon`;
let moto: Moto;
let clustersDir: string;

beforeAll(async () => {
  clustersDir = tempDir('bootstrap-trust-clusters');
  fs.writeFileSync(
    path.join(clustersDir, 'prod-eu1.yaml'),
    fs.readFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), 'utf8').replaceAll('111111111111', MOTO_ACCOUNT),
  );
  moto = await startMoto();
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await moto?.stop();
});

test('cdk deploy of the bootstrap stack with a trust creates the deployer role trusting it, the execution role and the boundary', () => {
  // WHEN README's command runs with the management principal as context
  const r = run(
    'npx',
    [
      '--no-install',
      'cdk',
      'deploy',
      STACK_ID,
      '--require-approval',
      'never',
      '-c',
      `worker-stacks:trust=${TRUST}`,
      '--output',
      path.join(tempDir('bootstrap-trust-out'), 'cdk.out'),
    ],
    {
      cwd: REPO,
      timeout: 240_000,
      env: {
        ...process.env,
        ...moto.env,
        CDK_DISABLE_VERSION_CHECK: '1',
        WORKER_STACKS_CLUSTERS: clustersDir,
        CI: 'true',
      },
    },
  );

  // THEN it succeeds, and the roles are there: the deployer trusts exactly the management principal
  expect({ status: r.status, said: r.stdout + r.stderr }).toEqual({
    status: 0,
    said: expect.stringContaining(`✅  ${STACK_ID} (WorkerStacks-Bootstrap)`),
  });
  const live = moto.python<{ roles: string[]; trust: string[]; policies: string[] }>(`
import boto3
iam = boto3.client('iam', **_kw)
roles = iam.list_roles()['Roles']
deployer = [r for r in roles if r['RoleName'].startswith('worker-stacks-deployer-')][0]
doc = deployer['AssumeRolePolicyDocument']
doc = doc if isinstance(doc, dict) else json.loads(doc)
out = dict(
  roles=sorted(r['RoleName'] for r in roles),
  trust=sorted(p for s in doc['Statement'] for p in ([s['Principal']['AWS']] if isinstance(s['Principal']['AWS'], str) else s['Principal']['AWS'])),
  policies=sorted(p['PolicyName'] for p in iam.list_policies(Scope='Local')['Policies']),
)
`);
  expect(live.roles).toEqual([`worker-stacks-cfn-exec-${MOTO_REGION}`, `worker-stacks-deployer-${MOTO_REGION}`]);
  expect(live.trust).toEqual([TRUST]);
  expect(live.policies).toContain(`worker-stacks-node-boundary-${MOTO_REGION}`);
});
