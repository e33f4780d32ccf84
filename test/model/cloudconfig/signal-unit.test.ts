/**
 * The health-signal unit is part of every node config, in both formats, from the one script in cloudconfig/_shared/:
 * it passes the real validators (ignition-validate, cloud-init schema), starts after the kubelet, names the cluster's
 * own stack and group, and renders byte-identically on every run.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { WORKER_GROUP_LOGICAL_ID } from '../../../lib/core/naming';
import { BOOTSTRAP_EXAMPLES, example, tempDir, variant } from '../../helpers/clusters';
import { requireTool, run } from '../../helpers/tools';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const SCRIPT = '/opt/bin/worker-stacks-signal-ready';
const UNIT = 'worker-stacks-signal-ready.service';

/** The values of one systemd directive (all its lines, space-separated lists split). */
const directive = (unit: string, key: string) =>
  [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].flatMap((m) => m[1].trim().split(/\s+/));

let dir: string;
beforeAll(() => {
  dir = tempDir('signal-unit');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// The Ignition and cloud-init configs; an EKS pool's config is no such file set: Bottlerocket signals by its own settings
// (settings.cloudformation, bottlerocket.test.ts), and the AL2023 NodeConfig does not yet (docs/node-configs.md).
test.each(BOOTSTRAP_EXAMPLES)(
  '%s: the signal script and its unit are in the config, after the kubelet, and the config stays valid',
  (name) => {
    // GIVEN
    const cluster = example(name);
    // WHEN
    const config = renderConfig(cluster, defaultTemplates());
    // THEN
    const script = config.node.files.find((f) => f.path === SCRIPT);
    const unit = config.node.units.find((u) => u.name === UNIT);
    expect(script?.mode).toBe(0o755);
    expect(unit?.enabled).toBe(true);
    expect(directive(unit!.contents, 'After')).toContain('kubelet.service');
    expect(directive(unit!.contents, 'Wants')).toContain('kubelet.service');
    expect(directive(unit!.contents, 'ExecStart')).toEqual([SCRIPT]);
    expect(script!.contents).toContain(`stack='WorkerStack-${name}'`);
    expect(script!.contents).toContain(`resource='${WORKER_GROUP_LOGICAL_ID}'`);
    expect(script!.contents).toContain(`region='${cluster.spec.region}'`);
    expect(script!.contents).toContain(`default_timeout=${cluster.spec.cloudConfig.values.nodeReadyTimeoutSeconds}\n`);
    const file = path.join(dir, `${name}.${config.extension}`);
    fs.writeFileSync(file, config.bytes);
    if (config.format === 'ignition')
      expect(run(requireTool('ignition-validate'), [file])).toEqual({ status: 0, stdout: '', stderr: '' });
    else
      expect(run(requireTool('cloud-init'), ['schema', '-c', file])).toEqual({
        status: 0,
        stdout: `Valid cloud-config: ${file}\n`,
        stderr: '',
      });
    // cloud-init enables the unit from runcmd, after writing it
    if (config.format === 'cloud-init')
      expect(config.bytes.toString('utf8')).toMatch(new RegExp(`- ${UNIT.replace(/\./g, '\\.')}\n`));
  },
);

test("both formats carry the same script, and the node timeout is the cluster's value", () => {
  // GIVEN
  const flatcar = renderConfig(
    variant('prod-eu1', (r) => (r.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 300)),
    defaultTemplates(),
  );
  const al2023 = renderConfig(
    variant(
      'prod-eu1',
      (r) => (
        (r.spec.cloudConfig.template = 'al2023-worker'),
        delete r.spec.cloudConfig.values.awsCliImage,
        (r.spec.cloudConfig.values.nodeReadyTimeoutSeconds = 300)
      ),
    ),
    defaultTemplates(),
  );
  // THEN
  const script = (c: typeof flatcar) => c.node.files.find((f) => f.path === SCRIPT)!.contents;
  expect(flatcar.format).toBe('ignition');
  expect(al2023.format).toBe('cloud-init');
  expect(script(flatcar)).toBe(script(al2023));
  expect(script(flatcar)).toContain('default_timeout=300\n');
  // and no credential, key or token is rendered into it: they are read on the node at signal time
  expect(script(flatcar)).not.toMatch(/AKIA|ASIA|aws_secret|BEGIN .*PRIVATE KEY/);
});

test('rendering is deterministic: the same object gives the same bytes', () => {
  expect(
    renderConfig(example('prod-eu1'), defaultTemplates()).bytes.equals(
      renderConfig(example('prod-eu1'), defaultTemplates()).bytes,
    ),
  ).toBe(true);
});
