import * as fs from 'node:fs';
import * as path from 'node:path';
import { SynthesisError } from '../../../lib/core/errors';
import { SynthPool } from '../../../lib/engines/synthesis/synth-pool';
import { synthesizeStack } from '../../../lib/engines/synthesis/synthesize';
import { assemblyDir } from '../../../lib/engines/synthesis/assembly-dir';
import { EXAMPLE, Harness, problem } from '../../fakes/harness';
import { example, tempDir, variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import * as appModule from '../../../lib/engines/stacks/app';
import { Json } from '../../helpers/json';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/** A rule cdk-nag refuses (AwsSolutions-EC23) and that only this rule's resource can acknowledge. */
// A port that is no node service: SSH (a node service) from public space is refused by validate itself (test/model/cluster/network/exposure.test.ts).
const sshFromAnywhere = (raw: Json) =>
  raw.spec.securityGroupRules.push({
    description: 'https from anywhere',
    protocol: 'tcp',
    port: 8443,
    source: { cidr: '0.0.0.0/0' },
  });

/** Entry types of a stack's assembly metadata file (`<stack>.metadata.json`, construct path -> entries). */
function metadataTypes(dir: string): Set<string> {
  const file = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('.metadata.json'));
  if (!file) throw new Error(`no metadata file under ${dir}`);
  const byPath = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, { type: string }[]>;
  return new Set(Object.values(byPath).flatMap((entries) => entries.map((e) => e.type)));
}

test.each(['prod-eu1', 'edge-ap1'])(
  '%s: the reconciler writes the bytes cdk synth writes, without the logical-id map it never reads',
  (name) => {
    // GIVEN a cluster, synthesized the way `cdk synth` does (nag on, like the reconciler)
    const cluster = example(name);
    const cli = synthCluster(cluster, { nag: true });
    const workDir = tempDir('reconciler-synth');

    // WHEN the reconciler synthesizes it
    const out = synthesizeStack(cluster, { templatesDir: DEFAULT_TEMPLATES_DIR, workDir, fingerprint: 'a'.repeat(64) });

    // THEN the template is the same bytes; only the CLI's assembly maps logical ids to construct paths
    expect(out.templateBody).toBe(cli.text);
    expect(metadataTypes(cli.outdir)).toContain('aws:cdk:logicalId');
    const types = metadataTypes(workDir);
    expect(types).not.toContain('aws:cdk:logicalId');
    // the acknowledgments stay, so a finding reported from this assembly still says why it was accepted
    expect(types).toContain('aws:cdk:acknowledged-rules');
  },
  60_000,
);

test('a cdk-nag finding is a SynthesisError: the rule, the resource and the fix, and no pointer to a report that is gone', async () => {
  // GIVEN a cluster with a rule cdk-nag refuses
  const cluster = variant('prod-eu1', sshFromAnywhere);
  const workDir = tempDir('nag-finding');
  const opts = { templatesDir: DEFAULT_TEMPLATES_DIR, workDir, fingerprint: 'b'.repeat(64) };

  // WHEN the reconciler synthesizes it, in this thread and in a pool thread
  let here: unknown;
  try {
    synthesizeStack(cluster, opts);
  } catch (e) {
    here = e;
  }
  const pool = new SynthPool({ size: 1 });
  const there: unknown = await pool.synthesize(cluster, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  await pool.close();

  // THEN both are SynthesisErrors that name the finding, the resource and what to do, and the assembly (with the
  // report aws-cdk-lib points at) is gone, so the message does not send anyone to it
  for (const e of [here, there] as Error[]) {
    expect(e).toBeInstanceOf(SynthesisError);
    expect(e.message).toMatch(/WorkerStack-prod-eu1 did not synthesize/);
    expect(e.message).toMatch(/AwsSolutions-EC23/);
    expect(e.message).toMatch(/WorkerStack-prod-eu1\/Rules\/tcp-8443-0-0-0-0-0/);
    expect(e.message).toMatch(/fix: .*lib\/engines\/stacks\/nag\.ts/);
    expect(e.message).not.toMatch(/validation-report/);
  }
  expect((here as SynthesisError).cause).toBeInstanceOf(Error);
  expect(fs.existsSync(assemblyDir(workDir, 'prod-eu1'))).toBe(false);
}, 120_000);

test('the daemon records a cdk-nag finding as Stalled/SynthesisFailed at once, before anything reaches AWS', async () => {
  // GIVEN a reconciler with cdk-nag on (as shipped) and a cluster with a rule cdk-nag refuses
  const h = new Harness();
  try {
    h.edit(EXAMPLE, sshFromAnywhere);

    // WHEN it reconciles the cluster
    const outcome = await h.reconcile(EXAMPLE, {}, h.deps({ nag: true }));

    // THEN the failure is recorded with its own reason and the finding, as needing a human (retrying cannot help, so no
    // requeue); the cluster, never live, is not Ready; nothing was published or sent to CloudFormation
    expect(outcome.result).toBe('stalled');
    expect(outcome.requeueAfterMs).toBeUndefined();
    expect(problem(h.status())).toMatchObject({ type: 'Stalled', status: 'True', reason: 'SynthesisFailed' });
    expect(h.condition('Ready')).toMatchObject({ status: 'False', reason: 'SynthesisFailed' });
    expect(problem(h.status())?.message).toMatch(
      /^synthesize: clusters\/staging-us1\.yaml: WorkerStack-staging-us1 did not synthesize:[\s\S]*AwsSolutions-EC23/,
    );
    expect(h.publisher.calls).toBe(0);
    expect(h.cfn.calls.get('createChangeSet')).toBeUndefined();
  } finally {
    h.cleanup();
  }
}, 60_000);

test('any other synthesis failure is a SynthesisError too, with the original as cause and no advice about nag', () => {
  // GIVEN a failure inside the CDK app that is not a finding (a bug, as the reconciler would meet it)
  const bug = new TypeError("Cannot read properties of undefined (reading 'port')");
  const spy = jest.spyOn(appModule, 'buildFleetApp').mockImplementation(() => {
    throw bug;
  });
  try {
    // WHEN the reconciler synthesizes a cluster
    const run = () =>
      synthesizeStack(example('prod-eu1'), {
        templatesDir: DEFAULT_TEMPLATES_DIR,
        workDir: tempDir('bug'),
        fingerprint: 'c'.repeat(64),
      });

    // THEN it gets the typed error, which keeps the original and says retrying will not help
    expect(run).toThrow(SynthesisError);
    expect(run).toThrow(/WorkerStack-prod-eu1 did not synthesize:\nCannot read properties of undefined/);
    expect(run).toThrow(/fix: `npx cdk synth` with this object reproduces it/);
    expect(run).not.toThrow(/nag\.ts/);
    try {
      run();
    } catch (e) {
      expect((e as Error).cause).toBe(bug);
    }
  } finally {
    spy.mockRestore();
  }
});
