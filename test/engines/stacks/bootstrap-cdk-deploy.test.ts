import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { configBucketName } from '../../../lib/core/naming';
import { EXAMPLES_DIR, REPO, tempDir, validated } from '../../helpers/clusters';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, startMoto } from '../../helpers/moto';
import { run } from '../../helpers/tools';
import { parse } from 'yaml';

/**
 * README's first deploy, `npx cdk deploy WorkerStacks-Bootstrap-<account>-<region>`, with the CDK CLI itself
 * (aws-cdk in devDependencies) against moto, in an account that was never `cdk bootstrap`ped: no CDKToolkit
 * stack, no CDK asset bucket. Before the fix the CLI stopped at "No bucket named 'cdk-hnb659fds-assets-…'".
 */

jest.setTimeout(300_000);

const STACK_ID = `WorkerStacks-Bootstrap-${MOTO_ACCOUNT}-${MOTO_REGION}`;
const BUCKET = configBucketName(MOTO_ACCOUNT, MOTO_REGION);
let moto: Moto;
let clustersDir: string;

/** prod-eu1, moved into moto's account (its region is moto's already). */
function motoClusterText(): string {
  const text = fs
    .readFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), 'utf8')
    .replaceAll('111111111111', MOTO_ACCOUNT);
  expect(parse(text).spec).toMatchObject({ account: MOTO_ACCOUNT, region: MOTO_REGION });
  return text;
}

const cdk = (args: string[]) =>
  run('npx', ['--no-install', 'cdk', ...args], {
    cwd: REPO,
    timeout: 240_000,
    env: {
      ...process.env,
      ...moto.env,
      CDK_DISABLE_VERSION_CHECK: '1',
      WORKER_STACKS_CLUSTERS: clustersDir,
      CI: 'true',
    },
  });

beforeAll(async () => {
  clustersDir = tempDir('bootstrap-clusters');
  fs.writeFileSync(path.join(clustersDir, 'prod-eu1.yaml'), motoClusterText());
  moto = await startMoto();
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- unset when the setup failed before it; the teardown must not hide that failure
  await moto?.stop();
});

test('the bootstrap stack names no CDK bootstrap resource: no template asset, no role, no bootstrap version', () => {
  // GIVEN the fleet app of one cluster
  const outdir = tempDir('bootstrap-synth');
  const fleet = buildFleetApp({
    clusters: [{ file: 'prod-eu1.yaml', cluster: validated(parse(motoClusterText()), 'clusters/prod-eu1.yaml') }],
    outdir,
    nag: true,
  });

  // WHEN it is synthesized
  const artifact = fleet.app.synth().getStackArtifact(STACK_ID);

  // THEN the CLI has nothing to publish and no role to assume: it sends the template inline with its own credentials
  expect(artifact.stackTemplateAssetObjectUrl).toBeUndefined();
  expect(artifact.assumeRoleArn).toBeUndefined();
  expect(artifact.cloudFormationExecutionRoleArn).toBeUndefined();
  expect(artifact.requiresBootstrapStackVersion).toBeUndefined();
  expect(artifact.dependencies.map((d) => d.id)).toEqual([]);
  expect(artifact.template.Parameters?.BootstrapVersion).toBeUndefined();
  expect(fs.existsSync(path.join(outdir, `${STACK_ID}.assets.json`))).toBe(false);
  expect(Buffer.byteLength(JSON.stringify(artifact.template))).toBeLessThan(51_200);
});

test('npx cdk deploy WorkerStacks-Bootstrap-<account>-<region> creates the config bucket in an account never cdk-bootstrapped', () => {
  // GIVEN an account with no CDKToolkit stack and no bucket at all
  expect(moto.python('out = [b["Name"] for b in s3.list_buckets()["Buckets"]]')).toEqual([]);
  expect(moto.python('out = [s["StackName"] for s in cfn.list_stacks()["StackSummaries"]]')).toEqual([]);

  // WHEN README's command runs
  const r = cdk([
    'deploy',
    STACK_ID,
    '--require-approval',
    'never',
    '--output',
    path.join(tempDir('bootstrap-out'), 'cdk.out'),
  ]);

  // THEN it succeeds without asking for the CDK asset bucket
  const said = r.stdout + r.stderr;
  expect({ status: r.status, said }).toEqual({
    status: 0,
    said: expect.stringContaining(`✅  ${STACK_ID} (WorkerStacks-Bootstrap)`),
  });
  expect(said).not.toMatch(/cdk-hnb659fds|bootstrapped\?|CDKToolkit/);
  // and the stack and its private, encrypted config bucket are there (and nothing else was created)
  const live = moto.python<{ status: string; buckets: string[]; encryption: string }>(
    `
out = {
  "status": cfn.describe_stacks(StackName="WorkerStacks-Bootstrap")["Stacks"][0]["StackStatus"],
  "buckets": [b["Name"] for b in s3.list_buckets()["Buckets"]],
  "encryption": s3.get_bucket_encryption(Bucket=args)["ServerSideEncryptionConfiguration"]["Rules"][0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"],
}`,
    BUCKET,
  );
  expect(live).toEqual({ status: 'CREATE_COMPLETE', buckets: [BUCKET], encryption: 'AES256' });
});

test('deploying it again changes nothing', () => {
  // WHEN the same command runs again
  const r = cdk([
    'deploy',
    STACK_ID,
    '--require-approval',
    'never',
    '--output',
    path.join(tempDir('bootstrap-out'), 'cdk.out'),
  ]);

  // THEN it succeeds, and the stack is still the one created
  expect({ status: r.status, said: r.stdout + r.stderr }).toEqual({
    status: 0,
    said: expect.stringContaining(`✅  ${STACK_ID} (WorkerStacks-Bootstrap)`),
  });
  expect(
    moto.python('out = [s["StackStatus"] for s in cfn.describe_stacks(StackName="WorkerStacks-Bootstrap")["Stacks"]]'),
  ).toEqual(['CREATE_COMPLETE']);
});
