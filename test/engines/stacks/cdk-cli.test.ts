import * as fs from 'node:fs';
import * as path from 'node:path';
import { example, EXAMPLE_NAMES, REPO, tempDir } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { run } from '../../helpers/tools';
import { POOLS_FIXTURE } from './pool-helpers';
import { Json } from '../../helpers/json';
import { stackUnits } from '../../../lib/model/cluster/pools/pools';

/** The CDK CLI as a user runs it, offline, with aws-cdk-lib's built-in template validation opted in (CDK_VALIDATION=true). */
const cdk = (args: string[], extraEnv: Record<string, string> = {}) => {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CDK_DISABLE_VERSION_CHECK: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_VALIDATION: 'true',
    ...extraEnv,
  };
  return run('npx', ['--no-install', 'cdk', ...args], { cwd: REPO, env, timeout: 300_000 });
};

let outdir: string;

beforeAll(() => {
  outdir = path.join(tempDir('cdk-cli'), 'cdk.out');
  const r = cdk(['synth', '--quiet', '--output', outdir]);
  if (r.status !== 0) throw new Error(`cdk synth failed (${r.status}):\n${r.stderr}`);
});

test('cdk synth builds one worker stack per example and one bootstrap stack per account and region', () => {
  // THEN
  const templates = fs
    .readdirSync(outdir)
    .filter((f) => f.endsWith('.template.json'))
    .sort();
  expect(templates).toEqual([
    ...EXAMPLE_NAMES.flatMap((n) => stackUnits(example(n)).map((u) => `${u.stackName}.template.json`)).sort(),
    ...EXAMPLE_NAMES.map((n) => example(n))
      .map((c) => `WorkerStacks-Bootstrap-${c.spec.account}-${c.spec.region}.template.json`)
      .sort(),
  ]);
  const bootstrap = JSON.parse(
    fs.readFileSync(
      path.join(
        outdir,
        templates.find((t) => t.startsWith('WorkerStacks-Bootstrap-111'))!,
      ),
      'utf8',
    ),
  );
  const bucket = Object.values<Json>(bootstrap.Resources).find((r: Json) => r.Type === 'AWS::S3::Bucket');
  expect(bucket.Properties).toMatchObject({
    BucketName: 'worker-stacks-config-111111111111-eu-west-1',
    PublicAccessBlockConfiguration: {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    },
    BucketEncryption: {
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    },
  });
  const policy = Object.values<Json>(bootstrap.Resources).find((r: Json) => r.Type === 'AWS::S3::BucketPolicy');
  expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
});

test('cdk synth gives the same template as the in-process synthesis the reconciler uses', () => {
  for (const name of EXAMPLE_NAMES) {
    // WHEN
    const cli = fs.readFileSync(path.join(outdir, `WorkerStack-${name}.template.json`), 'utf8');
    // THEN
    expect(JSON.parse(cli)).toEqual(synthCluster(example(name)).json);
  }
});

test('cdk diff --template against a saved template: no differences, then exactly the changed resource', () => {
  // GIVEN
  const saved = path.join(tempDir('diff'), 'saved.json');
  fs.copyFileSync(path.join(outdir, 'WorkerStack-prod-eu1.template.json'), saved);
  // WHEN
  const same = cdk(['diff', '--app', outdir, '--template', saved, 'WorkerStack-prod-eu1']);
  // THEN
  expect(same.status).toBe(0);
  expect(same.stdout + same.stderr).toMatch(/There were no differences/);

  // GIVEN: the saved template had a different max size
  const old = JSON.parse(fs.readFileSync(saved, 'utf8'));
  const group = Object.keys(old.Resources).find((k) => old.Resources[k].Type === 'AWS::AutoScaling::AutoScalingGroup')!;
  old.Resources[group].Properties.MaxSize = '31';
  fs.writeFileSync(saved, JSON.stringify(old));
  // WHEN
  const changed = cdk(['diff', '--app', outdir, '--template', saved, '--fail', 'WorkerStack-prod-eu1']);
  // THEN
  expect(changed.status).toBe(1);
  expect(changed.stdout + changed.stderr).toMatch(
    new RegExp(`\\[~\\] AWS::AutoScaling::AutoScalingGroup .*${group}[\\s\\S]*MaxSize`),
  );
});

test.each([
  ['WORKER_STACKS_CLUSTERS', 'cluster objects \\(\\*\\.yaml\\)', 'clusters'],
  ['WORKER_STACKS_TEMPLATES', 'cloud-config templates', 'cloudconfig'],
])(
  '%s naming a missing directory: cdk synth prints one line with the variable and the fix, no stack trace',
  (variable, what, fallback) => {
    // GIVEN the variable set to a directory that does not exist
    const missing = path.join(tempDir('missing'), 'no-such-dir');

    // WHEN cdk synth runs
    const r = cdk(['synth', '--quiet', '--output', path.join(tempDir('cdk-missing'), 'cdk.out')], {
      [variable]: missing,
    });

    // THEN it fails with the app's one line (beside only the CLI's own exit line and npm's config notices)
    expect(r.status).not.toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l.trim() !== '' && !/^npm warn /.test(l) && !/Subprocess exited with error/.test(l));
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^error: ${variable}=${missing}: ${missing} does not exist; fix: set ${variable} to a directory of ${what}, or unset it to use .*/${fallback}$`,
        ),
      ),
    ]);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  },
);

test('cdk synth of a spec.pools object: the shared stack and one stack per other pool, each depending on the shared one', () => {
  // GIVEN a clusters directory with the three-pool fixture
  const clusters = tempDir('cdk-pools');
  fs.copyFileSync(POOLS_FIXTURE, path.join(clusters, 'pools-eu1.yaml'));
  const out = path.join(tempDir('cdk-pools-out'), 'cdk.out');
  // WHEN the CLI synthesizes it
  const r = cdk(['synth', '--quiet', '--output', out], { WORKER_STACKS_CLUSTERS: clusters });
  // THEN it wrote every stack, and `cdk deploy WorkerStack-pools-eu1-Pool-spot` deploys the shared stack first
  expect(r.status).toBe(0);
  expect(
    fs
      .readdirSync(out)
      .filter((f) => f.startsWith('WorkerStack-') && f.endsWith('.template.json'))
      .sort(),
  ).toEqual([
    'WorkerStack-pools-eu1-Pool-arm64.template.json',
    'WorkerStack-pools-eu1-Pool-spot.template.json',
    'WorkerStack-pools-eu1.template.json',
  ]);
  const manifest = JSON.parse(fs.readFileSync(path.join(out, 'manifest.json'), 'utf8'));
  for (const pool of ['spot', 'arm64'])
    expect(manifest.artifacts[`WorkerStack-pools-eu1-Pool-${pool}`].dependencies).toContain('WorkerStack-pools-eu1');
  expect(manifest.artifacts['WorkerStack-pools-eu1'].dependencies ?? []).not.toContain(
    'WorkerStack-pools-eu1-Pool-spot',
  );
}, 300_000);
