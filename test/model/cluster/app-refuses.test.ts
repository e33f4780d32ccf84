import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXAMPLES_DIR, REPO, tempDir } from '../../helpers/clusters';
import { run, RunResult } from '../../helpers/tools';

/**
 * The CDK app entry, run the way the CDK CLI runs it (cdk.json: `npx ts-node
 * --transpile-only bin/app.ts`, with CDK_OUTDIR set by the CLI). An invalid
 * object anywhere in the fleet must stop it before any file is written.
 */
function runApp(clustersDir: string, outdir: string): RunResult {
  return run('npx', ['ts-node', '--transpile-only', 'bin/app.ts'], {
    cwd: REPO,
    env: {
      ...process.env,
      WORKER_STACKS_CLUSTERS: clustersDir,
      CDK_OUTDIR: outdir,
      WORKER_STACKS_NAG: 'false',
      CDK_VALIDATION: 'false',
    },
  });
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
});
