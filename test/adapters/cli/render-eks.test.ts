import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { runCli } from '../../../lib/adapters/cli/program';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { loadClusterFile } from '../../../lib/platform/files/load-clusters';
import { stackUnits } from '../../../lib/model/cluster/pools/pools';
import { REPO, TEMPLATES, tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';

/**
 * `worker-stacks render` of EKS pools prints the NodeConfig and the Bottlerocket TOML exactly as synthesis stores them,
 * and `--user-data` the launch template's user data: checked against a real synthesis of the EKS example (pool
 * default: eks-al2023, pool bottlerocket: eks-bottlerocket).
 */

const EXAMPLE = path.join(REPO, 'clusters', 'eks-us2.yaml');
const CLUSTER = 'eks-us2';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

let clustersDir: string;
const synthesized = new Map<string, { configBytes: Buffer; userData: string; checksumOutput: string }>();

beforeAll(() => {
  clustersDir = path.join(tempDir('render-eks'), 'clusters');
  fs.mkdirSync(clustersDir);
  fs.copyFileSync(EXAMPLE, path.join(clustersDir, `${CLUSTER}.yaml`));
  const r = loadClusterFile(path.join(clustersDir, `${CLUSTER}.yaml`), { templates: TEMPLATES, relativeTo: REPO });
  if (!r.cluster) throw new Error(JSON.stringify(r.problems));
  const outdir = tempDir('render-eks-out');
  buildFleetApp({ clusters: [{ file: 'test', cluster: r.cluster }], outdir, nag: false, bootstrap: false }).app.synth();
  for (const unit of stackUnits(r.cluster)) {
    if (unit.pool === undefined) continue;
    const template: Json = JSON.parse(fs.readFileSync(path.join(outdir, `${unit.stackName}.template.json`), 'utf8'));
    const manifest: Json = JSON.parse(fs.readFileSync(path.join(outdir, `${unit.stackName}.assets.json`), 'utf8'));
    const file = Object.values(manifest.files as Record<string, Json>).find(
      (f) => f.source.path !== `${unit.stackName}.template.json`,
    );
    const launchTemplate = Object.values(template.Resources as Record<string, Json>).find(
      (x) => x.Type === 'AWS::EC2::LaunchTemplate',
    );
    synthesized.set(unit.pool, {
      configBytes: fs.readFileSync(path.join(outdir, file.source.path as string)),
      userData: launchTemplate.Properties.LaunchTemplateData.UserData['Fn::Base64'] as string,
      checksumOutput: template.Outputs.ConfigChecksum.Value as string,
    });
  }
}, 120_000);

async function render(args: readonly string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(['render', ...args, '--clusters', clustersDir], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  return { code, out: out.join(''), err: err.join('') };
}

describe('render of EKS pools', () => {
  test.each([
    ['default', 'nodeadm', 'nodeconfig'],
    ['bottlerocket', 'bottlerocket', 'toml'],
  ])('pool %s: stdout is the stored %s config, its SHA-256 the checksum', async (pool, format, extension) => {
    // GIVEN the pool's stack as synthesis made it
    const stack = synthesized.get(pool)!;
    // WHEN
    const r = await render([CLUSTER, '--pool', pool]);
    // THEN
    expect(r.code).toBe(0);
    expect(Buffer.from(r.out, 'utf8').equals(stack.configBytes)).toBe(true);
    expect(r.err).toBe(
      `sha256 ${sha256(r.out)}  ${format}  s3 key clusters/${CLUSTER}/${sha256(r.out)}.${extension}\n`,
    );
    expect(stack.checksumOutput).toBe(sha256(r.out));
  });

  test('the Bottlerocket TOML as stored: canonical, and the settings the object asked for', async () => {
    // WHEN
    const r = await render([CLUSTER, '--pool', 'bottlerocket']);
    // THEN
    expect(r.out.startsWith('[settings.cloudformation]\n')).toBe(true);
    expect((parseToml(r.out) as Json).settings.kubernetes['node-taints']).toEqual({
      dedicated: ['bottlerocket:NoSchedule'],
    });
  });

  test.each(['default', 'bottlerocket'])(
    '--user-data --pool %s prints the launch template’s user data, which carries the stored bytes',
    async (pool) => {
      // GIVEN
      const stack = synthesized.get(pool)!;
      // WHEN
      const r = await render([CLUSTER, '--pool', pool, '--user-data']);
      // THEN
      expect(r.code).toBe(0);
      expect(r.out).toBe(stack.userData);
      expect(r.out).toContain(stack.configBytes.toString('utf8'));
      if (pool === 'bottlerocket') {
        // Bottlerocket's user data is the checksum comment, then exactly the stored bytes
        const [first, ...rest] = r.out.split('\n');
        expect(first).toMatch(new RegExp(`^# worker-stacks node config sha256 ${stack.checksumOutput} s3://`));
        expect(sha256(rest.join('\n'))).toBe(stack.checksumOutput);
      }
    },
  );
});
