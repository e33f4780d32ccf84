import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { Io } from '../../../lib/adapters/cli/context';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { stackUnits } from '../../../lib/model/cluster/pools/pools';
import { EXAMPLES_DIR, REPO, example, tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { cleanEnv } from '../../engines/review/cli-run';

/**
 * `worker-stacks render <cluster> --pool <name>` prints the bytes synthesis stores for that pool's stack, and the
 * user data its launch template boots: checked against a real synthesis of clusters/apps-eu1.yaml (three pools).
 */

/** An Io that keeps what a command prints. */
function capture(): { io: Io; out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (t) => out.push(t), err: (t) => err.push(t) }, out: () => out.join(''), err: () => err.join('') };
}

async function render(args: readonly string[]) {
  const c = capture();
  const code = await runCli(['render', ...args, '--clusters', EXAMPLES_DIR], c.io);
  return { code, out: c.out(), err: c.err() };
}

/** Runs the installed command, stdout a pipe: what `render ... | sha256sum` reads, as bytes. */
function installed(args: readonly string[]): Promise<{ code: number | null; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    // NODE_ENV=test (jest's) is not the user's environment.
    const env = cleanEnv();
    delete env.NODE_ENV;
    const child = spawn(process.execPath, [path.join(REPO, 'bin', 'worker-stacks.js'), ...args], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(chunks), stderr }));
  });
}

const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

/** The line render writes on stderr: `sha256 <checksum>  <format>  s3 key <key>`. */
const CHECKSUM_LINE = /^sha256 ([0-9a-f]{64}) {2}(\S+) {2}s3 key (\S+)\n$/;

/** What synthesis made of one stack: its config asset (bytes and object key), checksum output and user data. */
interface SynthesizedPool {
  readonly configBytes: Buffer;
  readonly objectKey: string;
  readonly checksumOutput: string;
  readonly userData: string;
}

const CLUSTER = 'apps-eu1';
let outdir: string;
/** By pool name. */
const synthesized = new Map<string, SynthesizedPool>();

beforeAll(() => {
  // One synthesis of every stack of the cluster, as `cdk synth` writes it.
  outdir = tempDir('render-pools');
  const cluster = example(CLUSTER);
  buildFleetApp({ clusters: [{ file: 'test', cluster }], outdir, nag: false, bootstrap: false }).app.synth();
  for (const unit of stackUnits(cluster)) {
    if (unit.pool === undefined) continue;
    const template: Json = JSON.parse(fs.readFileSync(path.join(outdir, `${unit.stackName}.template.json`), 'utf8'));
    const manifest: Json = JSON.parse(fs.readFileSync(path.join(outdir, `${unit.stackName}.assets.json`), 'utf8'));
    // The stack's one file asset besides its own template (a large one is published too) is its node config: what
    // the CDK CLI and the reconciler publish to S3.
    const files = Object.values(manifest.files as Record<string, Json>).filter(
      (f) => f.source.path !== `${unit.stackName}.template.json`,
    );
    expect(files).toHaveLength(1);
    const destinations = Object.values(files[0].destinations as Record<string, Json>);
    const launchTemplate = Object.values(template.Resources as Record<string, Json>).find(
      (r) => r.Type === 'AWS::EC2::LaunchTemplate',
    );
    synthesized.set(unit.pool, {
      configBytes: fs.readFileSync(path.join(outdir, files[0].source.path as string)),
      objectKey: destinations[0].objectKey as string,
      checksumOutput: template.Outputs.ConfigChecksum.Value as string,
      userData: launchTemplate.Properties.LaunchTemplateData.UserData['Fn::Base64'] as string,
    });
  }
}, 120_000);
afterAll(() => fs.rmSync(outdir, { recursive: true, force: true }));

describe('render --pool', () => {
  test.each(['spot', 'arm'])(
    'pool %s of apps-eu1: stdout is the config asset synthesis stores for its stack, stderr its checksum',
    async (pool) => {
      // GIVEN the pool's stack as synthesis made it
      const stack = synthesized.get(pool)!;

      // WHEN render runs for the pool
      const r = await render([CLUSTER, '--pool', pool]);

      // THEN stdout is exactly the stored bytes, and their SHA-256 is the checksum on stderr, the stack's
      // ConfigChecksum output and the one the pool's user data makes the node verify
      expect(r.code).toBe(0);
      expect(Buffer.from(r.out, 'utf8').equals(stack.configBytes)).toBe(true);
      const [, checksum, format, key] = CHECKSUM_LINE.exec(r.err)!;
      expect({ sha256: sha256(r.out), format, key }).toEqual({
        sha256: checksum,
        format: 'ignition',
        key: stack.objectKey,
      });
      expect(stack.checksumOutput).toBe(checksum);
      expect(stack.userData).toContain(`sha256-${checksum}`);
      // AND it is the pool's own config, not the first pool's
      expect(checksum).not.toBe(synthesized.get('default')!.checksumOutput);
    },
  );

  test.each(['default', 'spot', 'arm'])(
    '--user-data --pool %s prints the user data of that pool stack’s launch template',
    async (pool) => {
      // GIVEN the pool's stack as synthesis made it
      const stack = synthesized.get(pool)!;

      // WHEN render runs for the pool's user data
      const r = await render([CLUSTER, '--pool', pool, '--user-data']);

      // THEN stdout is exactly the launch template's user data, and stderr the same checksum line as without --user-data
      expect(r.code).toBe(0);
      expect(r.out).toBe(stack.userData);
      expect(r.err).toBe((await render([CLUSTER, '--pool', pool])).err);
    },
  );

  test.each([[[]], [['--user-data']]])(
    'without --pool (%j) render prints the first pool, as --pool with its name does',
    async (flags) => {
      // GIVEN / WHEN render runs without --pool and with the first pool's name
      const without = await render([CLUSTER, ...flags]);
      const first = await render([CLUSTER, ...flags, '--pool', 'default']);

      // THEN both print the same, exit 0
      expect(without).toEqual(first);
      expect(without.code).toBe(0);
    },
  );

  test.each([
    { cluster: CLUSTER, pool: 'gpu', flags: [], pools: 'default, spot, arm', first: 'default' },
    { cluster: CLUSTER, pool: 'Spot', flags: ['--user-data'], pools: 'default, spot, arm', first: 'default' },
    { cluster: CLUSTER, pool: '', flags: [], pools: 'default, spot, arm', first: 'default' },
    // A single-pool object's spec.pool is the pool named default.
    { cluster: 'prod-eu1', pool: 'spot', flags: [], pools: 'default', first: 'default' },
  ])(
    'an unknown pool ($cluster --pool "$pool" $flags): exit 2, nothing on stdout, one message listing the pools',
    async ({ cluster, pool, flags, pools, first }) => {
      // GIVEN / WHEN render runs for a pool the cluster does not have
      const r = await render([cluster, '--pool', pool, ...flags]);

      // THEN it is a usage error that names the cluster's pools and what to do
      expect(r).toEqual({
        code: 2,
        out: '',
        err:
          `error: cluster ${cluster} has no pool ${JSON.stringify(pool)}; its pools: ${pools}\n` +
          `  fix: pass one of them to --pool, or leave --pool out for the first (${first})\n`,
      });
    },
  );

  test('--pool default of a single-pool object prints what render always printed for it', async () => {
    // GIVEN / WHEN
    const without = await render(['prod-eu1']);
    const named = await render(['prod-eu1', '--pool', 'default']);
    // THEN
    expect(named).toEqual(without);
    expect(sha256(named.out)).toBe(CHECKSUM_LINE.exec(named.err)![1]);
  });

  test('the installed command pipes the pool’s stored bytes unchanged: `render apps-eu1 --pool spot | sha256sum`', async () => {
    // GIVEN the spot pool's config asset as synthesis stores it
    const stack = synthesized.get('spot')!;

    // WHEN the installed command writes into a pipe
    const r = await installed(['render', CLUSTER, '--pool', 'spot', '--clusters', EXAMPLES_DIR]);

    // THEN the pipe carries exactly those bytes, and stderr only the checksum line with their SHA-256
    expect(r.code).toBe(0);
    expect(r.stdout.equals(stack.configBytes)).toBe(true);
    expect(CHECKSUM_LINE.exec(r.stderr)?.[1]).toBe(createHash('sha256').update(r.stdout).digest('hex'));
  }, 120_000);
});
