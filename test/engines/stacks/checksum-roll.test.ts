import * as fs from 'node:fs';
import * as path from 'node:path';
import { example, tempDir, variant } from '../../helpers/clusters';
import { synthCluster, templateDelta } from '../../helpers/synth';
import { Json } from '../../helpers/json';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/** A copy of cloudconfig/ with one byte changed in one template file. */
function templatesWithOneByteChanged(): string {
  const dir = tempDir('tpl');
  fs.cpSync(DEFAULT_TEMPLATES_DIR, dir, { recursive: true });
  const file = path.join(dir, '_shared', 'sysctl.conf.hbs');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('kernel.panic = 10', 'kernel.panic = 11'));
  return dir;
}

const userDataOf = (json: Json, id: string) =>
  JSON.stringify(json.Resources[id].Properties.LaunchTemplateData?.UserData ?? json.Resources[id].Properties.UserData);

describe.each([
  ['prod-eu1', 'AWS::EC2::LaunchTemplate'],
  ['staging-us1', 'AWS::EC2::LaunchTemplate'],
  ['edge-ap1', 'AWS::AutoScaling::LaunchConfiguration'],
])('%s: a config change rolls the nodes and changes nothing else', (name, launchType) => {
  test('one byte of the rendered config changes the checksum, the user data and the launch template only', () => {
    // GIVEN
    const before = synthCluster(example(name));
    // WHEN
    const after = synthCluster(example(name), { templatesDir: templatesWithOneByteChanged() });
    // THEN
    expect(after.checksum).not.toEqual(before.checksum);
    const delta = templateDelta(before.json, after.json);
    expect(delta.resources.added).toEqual([]);
    expect(delta.resources.removed).toEqual([]);
    expect(delta.resources.modified).toHaveLength(1);
    const [launch] = delta.resources.modified;
    expect(after.json.Resources[launch].Type).toBe(launchType);
    expect(userDataOf(after.json, launch)).toContain(after.checksum);
    expect(userDataOf(before.json, launch)).toContain(before.checksum);
    expect(delta.outputs).toEqual({ added: [], removed: [], modified: ['ConfigChecksum'] });
    expect(after.json.Outputs.ConfigChecksum.Value).toBe(after.checksum);
  });

  test('a listener or rule change leaves the user data alone', () => {
    // GIVEN
    const before = synthCluster(example(name));
    // WHEN
    const after = synthCluster(
      variant(name, (raw) => {
        raw.spec.securityGroupRules[0].description = 'changed by the test';
        if (raw.spec.listeners?.length) raw.spec.listeners[0].port = 8443;
      }),
    );
    // THEN
    expect(after.checksum).toBe(before.checksum);
    const delta = templateDelta(before.json, after.json);
    expect(delta.resources.modified.length).toBeGreaterThan(0);
    for (const id of delta.resources.modified) expect(after.json.Resources[id].Type).not.toBe(launchType);
  });
});

test('the same cluster synthesized twice gives byte-identical templates and configs', () => {
  for (const name of ['prod-eu1', 'staging-us1', 'edge-ap1']) {
    // GIVEN / WHEN
    const a = synthCluster(example(name));
    const b = synthCluster(example(name));
    // THEN
    expect(b.text).toBe(a.text);
    expect(b.configBytes.equals(a.configBytes)).toBe(true);
    const asset = (dir: string) =>
      fs.readFileSync(
        path.join(
          dir,
          fs.readdirSync(dir).find((f) => f.startsWith('asset.'))!,
        ),
      );
    expect(asset(b.outdir).equals(asset(a.outdir))).toBe(true);
  }
});

test('the stored asset is exactly the rendered bytes, under its checksum', () => {
  // GIVEN
  const s = synthCluster(example('prod-eu1'));
  // WHEN
  const manifest = JSON.parse(fs.readFileSync(path.join(s.outdir, 'WorkerStack-prod-eu1.assets.json'), 'utf8'));
  const entry = manifest.files[s.checksum];
  // THEN
  expect(entry.destinations[Object.keys(entry.destinations)[0]]).toMatchObject({
    bucketName: 'worker-stacks-config-111111111111-eu-west-1',
    objectKey: `clusters/prod-eu1/${s.checksum}.ign`,
    region: 'eu-west-1',
  });
  expect(fs.readFileSync(path.join(s.outdir, entry.source.path)).equals(s.configBytes)).toBe(true);
});
