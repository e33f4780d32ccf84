import * as fs from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { BootstrapStack } from '../../../lib/engines/stacks/bootstrap-stack';
import { example, EXAMPLE_NAMES, ownSecret, tempDir, variant } from '../../helpers/clusters';
import { poolsVariant } from './pool-helpers';
import { requireTool, run } from '../../helpers/tools';

/**
 * checkov (PyPI, pinned by .ci/install-tools, in its own venv) on every template the examples synthesize: the
 * worker stacks and the bootstrap stacks. A failed check fails this test unless it is listed here, for the
 * resource type it may fail on, with the reason it is accepted. A listed check that no longer fails anywhere
 * fails the test too, so this list never outlives its reason.
 */
const JUSTIFIED: Readonly<Partial<Record<string, { readonly type: string; readonly reason: string }>>> = {
  CKV_AWS_18: {
    type: 'AWS::S3::Bucket',
    reason:
      'The config bucket holds immutable, content-addressed objects; reads are audited with CloudTrail S3 data events, which the account baseline enables. Server access logs would need a log bucket per account and region with its own exemption (the same reason as AwsSolutions-S1 in lib/engines/stacks/bootstrap-stack.ts).',
  },
  CKV_AWS_27: {
    type: 'AWS::SQS::Queue',
    reason:
      "The node-termination queue is encrypted at rest with SSE-SQS (SqsManagedSseEnabled, what aws-node-termination-handler's own setup uses); the check only counts a KMS key. A customer key per cluster would need a key policy for EventBridge and would cost a key per cluster for messages that live at most 300 s and hold instance ids only (test/engines/stacks/node-drain.test.ts asserts the encryption and the TLS-only policy).",
  },
  CKV_AWS_91: {
    type: 'AWS::ElasticLoadBalancingV2::LoadBalancer',
    reason:
      "A Network Load Balancer writes access logs for its TLS listeners' connections only, so for a load balancer without a TLS listener there is nothing to enable. One with a TLS listener (edge-ap1's api-tls, variant-a has none) could log them, but its logs need a delivery bucket with the log-delivery policy in each account and region, which the bootstrap stack does not make; connections to every listener, TLS or not, are observed with VPC flow logs, which the account baseline enables (the same reason as AwsSolutions-ELB2 in lib/engines/stacks/nag.ts).",
  },
};

interface FailedCheck {
  readonly check_id: string;
  readonly check_name: string;
  readonly file_path: string;
  /** `<type>.<logical id>` */
  readonly resource: string;
}

interface Report {
  readonly results: { readonly failed_checks?: FailedCheck[] };
  readonly summary: {
    readonly parsing_errors: number;
    readonly resource_count: number;
    readonly checkov_version: string;
  };
}

/** checkov on these files, every check, JSON; one report for the cloudformation framework. */
function checkov(files: readonly string[]): Report {
  const args = [
    ...files.flatMap((f) => ['-f', f]),
    '--framework',
    'cloudformation',
    '--output',
    'json',
    '--quiet',
    '--compact',
    '--skip-download',
  ];
  // --skip-download and no API key: checkov runs offline, on its bundled checks only.
  const r = run(requireTool('checkov'), args, {
    env: { ...process.env, BC_API_KEY: '', CHECKOV_SKIP_DOWNLOAD: 'true' },
    timeout: 300_000,
  });
  // Exit 1 means "some check failed"; anything else (or no JSON) means checkov itself did not run.
  if (r.status !== 0 && r.status !== 1) throw new Error(`checkov exited ${r.status}: ${r.stderr}`);
  const parsed = JSON.parse(r.stdout);
  const reports: Report[] = Array.isArray(parsed) ? parsed : [parsed];
  expect(reports).toHaveLength(1);
  return reports[0];
}

const typeOf = (f: FailedCheck) => f.resource.slice(0, f.resource.lastIndexOf('.'));

/** Synthesizes the examples (and a variant reaching the internet-facing and TCP_UDP branches) like `cdk synth`. */
function synthesizedTemplates(): string[] {
  const outdir = tempDir('checkov');
  const clusters = [
    ...EXAMPLE_NAMES.map(example),
    variant('prod-eu1', (raw) => {
      raw.metadata.name = 'variant-a';
      ownSecret(raw);
      raw.spec.pool.instanceTypes = ['m6i.large'];
      raw.spec.loadBalancer = { scheme: 'internet-facing', allowedCidrs: ['192.0.2.0/24'] };
      raw.spec.listeners.push({ name: 'dns', protocol: 'TCP_UDP', port: 53, nodePort: 30053 });
    }),
    // instance refresh with every preference, no drain (the branches the examples do not reach)
    variant('prod-eu1', (raw) => {
      raw.metadata.name = 'variant-refresh';
      ownSecret(raw);
      const ru = raw.spec.pool.rollingUpdate;
      delete ru.maxBatchSize;
      delete ru.minInstancesInService;
      ru.strategy = 'instanceRefresh';
      ru.instanceRefresh = {
        minHealthyPercentage: 90,
        maxHealthyPercentage: 150,
        instanceWarmupSeconds: 120,
        checkpoints: [25, 100],
        checkpointDelaySeconds: 600,
        bakeTimeSeconds: 900,
        alarms: ['nodes-not-ready'],
      };
      raw.spec.pool.drain = { enabled: false };
    }),
    // the three-pool fixture: a shared stack with exports and two pool stacks of their own
    poolsVariant(),
  ];
  buildFleetApp({
    clusters: clusters.map((cluster) => ({ file: cluster.metadata.name, cluster })),
    outdir,
    nag: false,
  }).app.synth();
  // and a bootstrap stack with a deployer role (many-accounts mode): the execution and deployer roles, the bucket's write policy
  const app = new App({ outdir });
  new BootstrapStack(app, {
    account: '444444444444',
    region: 'eu-west-1',
    trust: { principals: ['arn:aws:iam::999999999999:role/worker-stacks-daemon'], externalId: 'fleet' },
  });
  app.synth();
  return fs
    .readdirSync(outdir)
    .filter((f) => f.endsWith('.template.json'))
    .sort()
    .map((f) => path.join(outdir, f));
}

/** A bootstrap-like template without bucket encryption, and a TLS listener without SslPolicy: checkov must fail both. */
function brokenTemplate(): string {
  const file = path.join(tempDir('checkov-bad'), 'broken.template.json');
  const template = {
    Resources: {
      Bucket: { Type: 'AWS::S3::Bucket', Properties: { BucketName: 'b' } },
      Listener: {
        Type: 'AWS::ElasticLoadBalancingV2::Listener',
        Properties: { Protocol: 'TLS', Port: 443, LoadBalancerArn: 'arn', DefaultActions: [] },
      },
    },
  };
  fs.writeFileSync(file, JSON.stringify(template));
  return file;
}

// One checkov run scans the examples' templates and the broken one (a start of checkov costs ~5 s of CPU); each test
// reads its own files' findings.
let files: string[];
let broken: string;
let report: Report;
const fileOf = (f: FailedCheck) => path.basename(f.file_path);
beforeAll(() => {
  files = synthesizedTemplates();
  broken = brokenTemplate();
  report = checkov([...files, broken]);
}, 300_000);

test('every synthesized example template passes checkov, but for the justified checks', () => {
  // GIVEN the worker and bootstrap templates of the examples
  expect(files.map((f) => path.basename(f, '.template.json'))).toEqual(
    expect.arrayContaining([
      'WorkerStack-edge-ap1',
      'WorkerStack-prod-eu1',
      'WorkerStack-staging-us1',
      'WorkerStack-variant-a',
      'WorkerStack-pools-eu1',
      'WorkerStack-pools-eu1-Pool-spot',
      'WorkerStack-pools-eu1-Pool-arm64',
    ]),
  );
  expect(files.filter((f) => path.basename(f).startsWith('WorkerStacks-Bootstrap-')).length).toBeGreaterThan(0);

  // WHEN checkov scans them all (beforeAll)
  // THEN every file parsed, and no check failed that is not justified for that resource type
  expect(report.summary.parsing_errors).toBe(0);
  expect(report.summary.resource_count).toBeGreaterThan(files.length * 3);
  const failed = (report.results.failed_checks ?? []).filter((f) => fileOf(f) !== path.basename(broken));
  expect(failed.every((f) => files.some((file) => path.basename(file) === fileOf(f)))).toBe(true);
  const unjustified = failed.filter((f) => JUSTIFIED[f.check_id]?.type !== typeOf(f));
  expect(unjustified.map((f) => `${path.basename(f.file_path)}: ${f.check_id} ${f.resource}: ${f.check_name}`)).toEqual(
    [],
  );
  // Each justification still has a finding to justify.
  expect([...new Set(failed.map((f) => f.check_id))].sort()).toEqual(Object.keys(JUSTIFIED).sort());
});

test('checkov is live: a bucket without encryption and a TLS listener without a policy are failed checks', () => {
  // GIVEN a bootstrap template without bucket encryption, and a TLS listener without SslPolicy
  // WHEN checkov scans it, beside the examples (beforeAll)
  const failed = (report.results.failed_checks ?? [])
    .filter((f) => fileOf(f) === path.basename(broken))
    .map((f) => `${f.check_id} ${f.resource}`);

  // THEN both are reported
  expect(failed).toEqual(
    expect.arrayContaining([
      'CKV_AWS_103 AWS::ElasticLoadBalancingV2::Listener.Listener',
      'CKV_AWS_18 AWS::S3::Bucket.Bucket',
    ]),
  );
});
