/**
 * Every example cluster's big config and small user data pass the real
 * validator of their format, from Debian: `ignition-validate` (package
 * ignition) and `cloud-init schema` (package cloud-init 22.4). The broken
 * documents at the end prove that the validators and the way these tests read
 * their verdicts do reject something.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { renderConfig, RenderedConfig } from '../../../lib/model/cloudconfig/render';
import { renderUserData } from '../../../lib/model/cloudconfig/user-data';
import { BOOTSTRAP_EXAMPLES, example, ownSecret, tempDir, TEMPLATES, variant } from '../../helpers/clusters';
import { requireTool, run, RunResult } from '../../helpers/tools';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

let dir: string;
beforeAll(() => {
  dir = tempDir('validators');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, bytes: Buffer | string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
}

const ignitionValidate = (file: string): RunResult => run(requireTool('ignition-validate'), [file]);
const cloudInitSchema = (file: string): RunResult => run(requireTool('cloud-init'), ['schema', '-c', file]);

/** The verdict as these tests read it: ignition-validate passes only with exit 0 and no output at all (warnings count). */
function expectValid(format: RenderedConfig['format'], file: string): void {
  if (format === 'ignition') {
    expect(ignitionValidate(file)).toEqual({ status: 0, stdout: '', stderr: '' });
  } else {
    expect(cloudInitSchema(file)).toEqual({ status: 0, stdout: `Valid cloud-config: ${file}\n`, stderr: '' });
  }
}

function smallUserData(cluster: WorkerCluster, config: RenderedConfig): string {
  const source = `s3://bucket/clusters/${cluster.metadata.name}/${config.checksum}.${config.extension}`;
  return renderUserData({ format: config.format, checksum: config.checksum, source });
}

/** Each template once, with every list and map of the values filled, so loops in templates render several items. */
// The EKS configs are neither Ignition nor cloud-config: nodeadm-strict.test.ts checks the NodeConfig with nodeadm's own
// tools, bottlerocket.test.ts the TOML settings against the settings reference.
const RICH = [...TEMPLATES]
  .filter((t) => t !== 'eks-al2023' && t !== 'eks-bottlerocket')
  .sort()
  .map((template) =>
    variant('prod-eu1', (raw) => {
      raw.metadata.name = `rich-${template}`;
      ownSecret(raw);
      const v = raw.spec.cloudConfig.values;
      raw.spec.cloudConfig.template = template;
      // The AWS CLI image is flatcar-worker's own value (Flatcar has no AWS CLI).
      if (template !== 'flatcar-worker') delete v.awsCliImage;
      v.maxPods = 250;
      v.nodeLabels = { 'a.example.com/x': 'one', b: 'two', 'node.kubernetes.io/pool': 'rich' };
      v.nodeTaints = [
        { key: 'example.com/gpu', value: 'true', effect: 'NoSchedule' },
        { key: 'example.com/gpu', effect: 'NoExecute' },
        { key: 'dedicated', value: 'ml', effect: 'PreferNoSchedule' },
      ];
      v.registryMirrors = ['https://mirror-a.example.com', 'https://mirror-b.example.com:5000/v2/docker'];
    }),
  );

// The Ignition and cloud-init examples; the EKS example's configs are checked by nodeadm-strict.test.ts (its NodeConfig)
// and bottlerocket.test.ts (its TOML settings).
describe('the big config passes the real validator of its format', () => {
  test.each(BOOTSTRAP_EXAMPLES)('example %s', (name) => {
    // GIVEN
    const cluster = example(name);
    // WHEN
    const config = renderConfig(cluster, defaultTemplates());
    const file = write(`${name}.${config.extension}`, config.bytes);
    // THEN
    expectValid(config.format, file);
  });

  test.each(RICH.map((c) => [c.spec.cloudConfig.template, c] as const))(
    'template %s with every value filled',
    (_template, cluster) => {
      // GIVEN
      const config = renderConfig(cluster, defaultTemplates());
      // WHEN
      const file = write(`${cluster.metadata.name}.${config.extension}`, config.bytes);
      // THEN
      expectValid(config.format, file);
      expect(config.node.files.find((f) => f.path.endsWith('hosts.toml'))?.contents).toContain(
        '[host."https://mirror-b.example.com:5000/v2/docker"]',
      );
    },
  );

  test('both formats are covered by the examples', () => {
    // GIVEN
    const formats = new Set(BOOTSTRAP_EXAMPLES.map((n) => renderConfig(example(n), defaultTemplates()).format));
    // WHEN
    const sorted = [...formats].sort();
    // THEN
    expect(sorted).toEqual(['cloud-init', 'ignition']);
  });
});

describe('the small user data passes the real validator of its format', () => {
  test.each(BOOTSTRAP_EXAMPLES)('example %s', (name) => {
    // GIVEN
    const cluster = example(name);
    const config = renderConfig(cluster, defaultTemplates());
    // WHEN
    const file = write(`${name}.user-data`, smallUserData(cluster, config));
    // THEN
    expectValid(config.format, file);
  });
});

describe('the validators are live: broken documents are rejected', () => {
  const ignitionExample = BOOTSTRAP_EXAMPLES.find(
    (n) => renderConfig(example(n), defaultTemplates()).format === 'ignition',
  )!;
  const cloudInitExample = BOOTSTRAP_EXAMPLES.find(
    (n) => renderConfig(example(n), defaultTemplates()).format === 'cloud-init',
  )!;

  test('ignition-validate warns about an unknown key, which fails the check above', () => {
    // GIVEN
    const doc = JSON.parse(renderConfig(example(ignitionExample), defaultTemplates()).bytes.toString('utf8'));
    doc.systemd.units[0].bogusKey = true;
    // WHEN
    const result = ignitionValidate(write('unknown-key.ign', JSON.stringify(doc)));
    // THEN
    expect(`${result.stdout}${result.stderr}`).toMatch(/Unused key bogusKey/);
    expect(() => expectValid('ignition', path.join(dir, 'unknown-key.ign'))).toThrow();
  });

  test('ignition-validate rejects a relative file path and a truncated hash', () => {
    // GIVEN
    const doc = JSON.parse(renderConfig(example(ignitionExample), defaultTemplates()).bytes.toString('utf8'));
    doc.storage.files[0].path = 'etc/relative';
    const small = renderUserData({ format: 'ignition', checksum: 'a'.repeat(64), source: 's3://bucket/x.ign' }).replace(
      'a'.repeat(64),
      'a'.repeat(63),
    );
    // WHEN
    const relative = ignitionValidate(write('relative.ign', JSON.stringify(doc)));
    const truncated = ignitionValidate(write('truncated.ign', small));
    // THEN
    expect(relative.status).not.toBe(0);
    expect(`${relative.stdout}${relative.stderr}`).toMatch(/path not absolute/);
    expect(truncated.status).not.toBe(0);
    expect(`${truncated.stdout}${truncated.stderr}`).toMatch(/incorrect size for hash sum/);
  });

  test('cloud-init schema rejects an unknown key in write_files', () => {
    // GIVEN
    const doc = parse(renderConfig(example(cloudInitExample), defaultTemplates()).bytes.toString('utf8'));
    doc.write_files[0].bogusKey = 1;
    // WHEN
    const result = cloudInitSchema(write('unknown-key.yaml', `#cloud-config\n${stringify(doc)}`));
    // THEN
    expect(result.status).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/'bogusKey' was unexpected/);
    expect(result.stdout).not.toMatch(/Valid cloud-config/);
  });

  test('cloud-init schema rejects a bootcmd that is not a list', () => {
    // GIVEN
    const cluster = example(cloudInitExample);
    const small = parse(smallUserData(cluster, renderConfig(cluster, defaultTemplates())));
    small.bootcmd = { script: small.bootcmd[0][2] };
    // WHEN
    const result = cloudInitSchema(write('bad-bootcmd.yaml', `#cloud-config\n${stringify(small)}`));
    // THEN
    expect(result.status).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/bootcmd: .* is not of type 'array'/);
  });
});
