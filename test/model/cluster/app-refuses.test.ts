import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES_DIR, REPO, tempDir } from '../../helpers/clusters';
import { run, RunResult } from '../../helpers/tools';

/**
 * The CDK app entry, run the way the CDK CLI runs it (cdk.json: `node bin/cdk-app.js`, the build when current,
 * else bin/app.ts from the sources; with CDK_OUTDIR set by the CLI). An invalid
 * object anywhere in the fleet must stop it before any file is written.
 */
function runApp(clustersDir: string, outdir: string, nag = false): RunResult {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WORKER_STACKS_CLUSTERS: clustersDir,
    CDK_OUTDIR: outdir,
    WORKER_STACKS_NAG: String(nag),
    CDK_VALIDATION: 'false',
  };
  delete env.NODE_ENV; // jest's; aws-cdk-lib reports differently under it
  return run(process.execPath, ['bin/cdk-app.js'], { cwd: REPO, env });
}

/** Every file under dir (recursively), relative to it. */
function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));
}

describe('bin/app.ts (the CDK app)', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('app');
    fs.mkdirSync(path.join(root, 'clusters'));
    fs.copyFileSync(path.join(EXAMPLES_DIR, 'staging-us1.yaml'), path.join(root, 'clusters', 'staging-us1.yaml'));
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a valid fleet synthesizes into CDK_OUTDIR (the control for the test below)', () => {
    // GIVEN a fleet of one valid example and an outdir that does not exist yet
    const outdir = path.join(root, 'out', 'cdk.out');

    // WHEN the app runs
    const r = runApp(path.join(root, 'clusters'), outdir);

    // THEN it succeeds and writes the worker stack's template
    expect(r.stderr).not.toMatch(/problem/);
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(outdir, 'WorkerStack-staging-us1.template.json'))).toBe(true);
  });

  test('one invalid object: non-zero exit, the problem on stderr, no cdk.out at all', () => {
    // GIVEN the valid example plus an invalid object, and an outdir that does not exist yet
    const bad = path.join(root, 'clusters', 'prod-eu1.yaml');
    fs.writeFileSync(
      bad,
      fs
        .readFileSync(path.join(EXAMPLES_DIR, 'prod-eu1.yaml'), 'utf8')
        .replace('{ name: ingress-http, port: 80,', '{ name: ingress-http, port: 70000,'),
    );
    const outdir = path.join(root, 'out', 'cdk.out');

    // WHEN the app runs
    const r = runApp(path.join(root, 'clusters'), outdir);

    // THEN it fails, naming file, field path and rule
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${path.relative(REPO, bad)}: spec.listeners[1].port: 70000 is not a port (1-65535)`);
    expect(r.stderr).toMatch(/1 problem in the cluster objects; nothing was synthesized or deployed/);
    // AND nothing was written: no outdir, and no template for the valid cluster anywhere in the temp dir
    expect(fs.existsSync(outdir)).toBe(false);
    expect(fs.existsSync(path.join(root, 'out'))).toBe(false);
    expect(filesUnder(root).filter((f) => f.endsWith('.template.json') || f.endsWith('manifest.json'))).toEqual([]);
  });

  test("hostile input (issue 21): public space on a node service, a CDK token, another cluster's secret: every problem, named, nothing written", () => {
    // GIVEN staging-us1 with three hostile values, each valid to the schema before issue 21
    const file = path.join(root, 'clusters', 'staging-us1.yaml');
    const text = fs
      .readFileSync(file, 'utf8')
      .replace('source: { cidr: 10.1.0.0/24 }', 'source: { cidr: 0.0.0.0/1 }')
      .replace('description: ICMP path MTU discovery', 'description: "ICMP ${Token[AWS.AccountId.4]}"')
      .replace('secret:worker-stacks/staging-us1/', 'secret:worker-stacks/prod-eu1/');
    fs.writeFileSync(file, text);
    const outdir = path.join(root, 'out', 'cdk.out');

    // WHEN the app runs
    const r = runApp(path.join(root, 'clusters'), outdir);

    // THEN it fails with all three, each with file, field path and rule, and writes nothing
    const shown = path.relative(REPO, file);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${shown}: spec.securityGroupRules[1].source.cidr: 0.0.0.0/1 holds public addresses (1.0.0.0 the first), and the rule opens tcp 10250, the port of the kubelet API (10250)`,
    );
    expect(r.stderr).toContain(
      `${shown}: spec.securityGroupRules[2].description: has the CDK token marker "\${Token["; synthesis would resolve it`,
    );
    expect(r.stderr).toContain(
      `${shown}: spec.cloudConfig.values.bootstrapTokenSecretArn: the secret "worker-stacks/prod-eu1/kubelet-bootstrap-XyZ123" is not one of this cluster's`,
    );
    expect(r.stderr).toMatch(/3 problems in the cluster objects; nothing was synthesized or deployed/);
    expect(fs.existsSync(outdir)).toBe(false);
  });

  test('a valid object cdk-nag refuses: non-zero exit, the finding at its file and field, nothing written (not even over an older assembly)', () => {
    // GIVEN staging-us1 with HTTPS open to the world on a port no node service uses (valid, but cdk-nag's EC23),
    // and an outdir holding an older synthesis
    const file = path.join(root, 'clusters', 'staging-us1.yaml');
    fs.writeFileSync(
      file,
      fs
        .readFileSync(file, 'utf8')
        .replace(
          'securityGroupRules:\n',
          'securityGroupRules:\n    - { description: https from anywhere, protocol: tcp, port: 8443, source: { cidr: 0.0.0.0/0 } }\n',
        ),
    );
    const outdir = path.join(root, 'out', 'cdk.out');
    fs.mkdirSync(outdir, { recursive: true });
    fs.writeFileSync(path.join(outdir, 'manifest.json'), '{"older":true}');

    // WHEN the app runs with cdk-nag, as `cdk synth` runs it
    const r = runApp(path.join(root, 'clusters'), outdir, true);

    // THEN it fails, naming the file, the field and the rule, and the outdir is as it was
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${path.relative(REPO, file)}: spec.securityGroupRules[0]: cdk-nag AwsSolutions-EC23`);
    expect(r.stderr).toContain('nothing was synthesized');
    expect(filesUnder(outdir)).toEqual(['manifest.json']);
    expect(fs.readFileSync(path.join(outdir, 'manifest.json'), 'utf8')).toBe('{"older":true}');
  });
});
