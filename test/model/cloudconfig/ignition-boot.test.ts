/**
 * Fail closed, end to end, with the real Ignition binary (Debian package
 * ignition): the small user data makes Ignition fetch the big config from a
 * loopback HTTP server standing in for S3, verify its SHA-256, and write the
 * node's files into a scratch root. One changed byte and Ignition refuses it
 * before it caches or applies anything.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { renderConfig, RenderedConfig } from '../../../lib/model/cloudconfig/render';
import { renderUserData } from '../../../lib/model/cloudconfig/user-data';
import { example, EXAMPLE_NAMES, tempDir } from '../../helpers/clusters';
import { requireTool, run } from '../../helpers/tools';
import { ConfigServer, runAsync, startConfigServer, tamper } from '../../fixtures/cloudconfig/boot';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const IGNITION_EXAMPLES = EXAMPLE_NAMES.filter(
  (n) => renderConfig(example(n), defaultTemplates()).format === 'ignition',
);

let server: ConfigServer;
let dir: string;
beforeAll(async () => {
  server = await startConfigServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  dir = tempDir('ignition-boot');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A node's view: the small user data on disk, a cache and state file, a root with the SELinux relabel inputs Ignition needs. */
function node(config: RenderedConfig, name: string) {
  const objectName = `${config.checksum}.${config.extension}`;
  const userData = path.join(dir, 'user-data.ign');
  fs.writeFileSync(
    userData,
    renderUserData({ format: config.format, checksum: config.checksum, source: server.url(objectName) }),
  );
  const root = path.join(dir, 'root');
  fs.mkdirSync(path.join(root, 'etc/selinux/targeted/contexts/files'), { recursive: true });
  fs.writeFileSync(path.join(root, 'etc/selinux/config'), 'SELINUX=disabled\nSELINUXTYPE=targeted\n');
  fs.writeFileSync(path.join(root, 'etc/selinux/targeted/contexts/files/file_contexts'), '');
  const cache = path.join(dir, 'cache.json');
  const state = path.join(dir, 'state');
  const ignition = (stage: 'fetch' | 'files') =>
    runAsync(
      requireTool('ignition'),
      [
        '--platform',
        'file',
        '--stage',
        stage,
        '--config-cache',
        cache,
        '--state-file',
        state,
        '--log-to-stdout',
        ...(stage === 'files' ? ['--root', root] : []),
      ],
      {
        env: {
          ...process.env,
          IGNITION_CONFIG_FILE: userData,
          PATH: `${path.dirname(requireTool('setfiles'))}:${process.env.PATH}`,
        },
      },
    );
  return { name, objectName, userData, root, cache, state, ignition };
}

const mode = (file: string) => fs.statSync(file).mode & 0o7777;

describe('Ignition fetches, verifies and applies the big config', () => {
  test.each(IGNITION_EXAMPLES)('%s: the right bytes are fetched, cached and written to the root', async (name) => {
    // GIVEN
    const cluster = example(name);
    const config = renderConfig(cluster, defaultTemplates());
    const n = node(config, name);
    server.put(n.objectName, config.bytes);
    expect(run(requireTool('ignition-validate'), [n.userData])).toEqual({ status: 0, stdout: '', stderr: '' });
    // WHEN
    const fetch = await n.ignition('fetch');
    const files = await n.ignition('files');
    // THEN
    expect({ status: fetch.status, log: fetch.stdout + fetch.stderr }).toEqual({
      status: 0,
      log: expect.stringContaining('fetch passed'),
    });
    expect(server.requests).toContain(`/${n.objectName}`);
    expect(fs.existsSync(n.cache)).toBe(true);
    expect({ status: files.status, log: files.stdout + files.stderr }).toEqual({
      status: 0,
      log: expect.stringContaining('files passed'),
    });
    expect(files.stdout + files.stderr).toMatch(/setfiles/);

    const kubelet = fs.readFileSync(path.join(n.root, 'var/lib/kubelet/config.yaml'), 'utf8');
    expect(kubelet).toContain(`clusterDNS:\n  - ${cluster.spec.cloudConfig.values.clusterDNS}\n`);
    expect(kubelet).toContain(`maxPods: ${cluster.spec.cloudConfig.values.maxPods}\n`);
    const service = fs.readFileSync(path.join(n.root, 'etc/systemd/system/kubelet.service'), 'utf8');
    expect(service).toBe(config.node.units.find((u) => u.name === 'kubelet.service')!.contents);
    const preset = fs.readFileSync(path.join(n.root, 'etc/systemd/system-preset/20-ignition.preset'), 'utf8');
    for (const unit of config.node.units.filter((u) => u.enabled)) expect(preset).toContain(`enable ${unit.name}\n`);
    expect(preset).toContain('enable kubelet.service\n');

    for (const file of config.node.files) {
      const onDisk = path.join(n.root, file.path);
      expect({ path: file.path, contents: fs.readFileSync(onDisk, 'utf8'), mode: mode(onDisk) }).toEqual({
        path: file.path,
        contents: file.contents,
        mode: file.mode,
      });
    }
    expect(mode(path.join(n.root, 'opt/bin/worker-stacks-install-kubelet'))).toBe(0o755);
    expect(mode(path.join(n.root, 'opt/bin/worker-stacks-bootstrap-token'))).toBe(0o755);
  });
});

/** What the kubelet checks with protectKernelDefaults: true; it refuses to start when one of them differs. */
const PROTECTED_KERNEL_DEFAULTS = {
  'vm.overcommit_memory': 1,
  'vm.panic_on_oom': 0,
  'kernel.panic': 10,
  'kernel.panic_on_oops': 1,
  'kernel.keys.root_maxkeys': 1000000,
  'kernel.keys.root_maxbytes': 25000000,
};

/** The values of one systemd directive (all its lines, space-separated lists split). */
const directive = (unit: string, key: string) =>
  [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].flatMap((m) => m[1].trim().split(/\s+/));

test.each(IGNITION_EXAMPLES)(
  '%s: kernel modules and sysctl settings are in force before the kubelet starts',
  async (name) => {
    // GIVEN the root as the real Ignition leaves it (its files stage runs in the initramfs, before the real root's systemd starts)
    const config = renderConfig(example(name), defaultTemplates());
    const n = node(config, name);
    server.put(n.objectName, config.bytes);
    expect((await n.ignition('fetch')).status).toBe(0);
    // WHEN
    expect((await n.ignition('files')).status).toBe(0);
    // THEN the kernel files are there when systemd-modules-load and systemd-sysctl first run, and the kernel unit is enabled
    const read = (p: string) => fs.readFileSync(path.join(n.root, p), 'utf8');
    expect(read('etc/modules-load.d/kubernetes.conf').split('\n')).toEqual(
      expect.arrayContaining(['br_netfilter', 'overlay']),
    );
    const sysctl = read('etc/sysctl.d/90-kubernetes.conf');
    expect(sysctl).toMatch(/^net\.bridge\.bridge-nf-call-iptables = 1$/m);
    for (const [key, value] of Object.entries(PROTECTED_KERNEL_DEFAULTS))
      expect(sysctl).toContain(`\n${key} = ${value}\n`);
    expect(read('etc/systemd/system-preset/20-ignition.preset')).toContain('enable worker-stacks-kernel.service\n');
    // and systemd starts the kubelet only after the kernel unit has loaded the modules, then applied every sysctl file
    const kubelet = read('etc/systemd/system/kubelet.service');
    const kernel = read('etc/systemd/system/worker-stacks-kernel.service');
    expect(directive(kubelet, 'Requires')).toContain('worker-stacks-kernel.service');
    expect(directive(kubelet, 'After')).toContain('worker-stacks-kernel.service');
    expect(directive(kernel, 'Type')).toEqual(['oneshot']);
    expect(directive(kernel, 'RemainAfterExit')).toEqual(['true']);
    expect(directive(kernel, 'ExecStart')).toEqual([
      '/usr/lib/systemd/systemd-modules-load',
      '/usr/lib/systemd/systemd-sysctl',
    ]);
  },
);

test.each(IGNITION_EXAMPLES)(
  '%s: the health-signal script and unit are written, enabled, and start after the kubelet',
  async (name) => {
    // GIVEN
    const config = renderConfig(example(name), defaultTemplates());
    const n = node(config, name);
    server.put(n.objectName, config.bytes);
    expect((await n.ignition('fetch')).status).toBe(0);
    // WHEN
    expect((await n.ignition('files')).status).toBe(0);
    // THEN
    const read = (p: string) => fs.readFileSync(path.join(n.root, p), 'utf8');
    expect(mode(path.join(n.root, 'opt/bin/worker-stacks-signal-ready'))).toBe(0o755);
    expect(read('opt/bin/worker-stacks-signal-ready')).toMatch(/^#!\/bin\/bash\n/);
    expect(read('etc/systemd/system-preset/20-ignition.preset')).toContain(
      'enable worker-stacks-signal-ready.service\n',
    );
    const unit = read('etc/systemd/system/worker-stacks-signal-ready.service');
    expect(directive(unit, 'After')).toContain('kubelet.service');
    expect(directive(unit, 'ExecStart')).toEqual(['/opt/bin/worker-stacks-signal-ready']);
  },
);

describe('Ignition refuses a tampered config (fail closed)', () => {
  test.each(IGNITION_EXAMPLES)(
    '%s: one changed byte at the same URL fails the fetch stage and caches nothing',
    async (name) => {
      // GIVEN
      const config = renderConfig(example(name), defaultTemplates());
      const n = node(config, name);
      const tampered = tamper(config.bytes);
      server.put(n.objectName, tampered);
      const tamperedFile = path.join(dir, 'tampered.ign');
      fs.writeFileSync(tamperedFile, tampered);
      const before = server.requests.length;
      // WHEN
      const fetch = await n.ignition('fetch');
      // THEN
      expect(tampered.length).toBe(config.bytes.length);
      expect([...tampered].filter((b, i) => b !== config.bytes[i])).toHaveLength(1);
      expect(run(requireTool('ignition-validate'), [tamperedFile]).status).toBe(0);
      expect(server.requests.slice(before)).toContain(`/${n.objectName}`);
      expect(fetch.status).not.toBe(0);
      expect(fetch.stdout + fetch.stderr).toMatch(/hash verification failed/);
      expect(fs.existsSync(n.cache)).toBe(false);
    },
  );

  test('the files stage without a verified fetch applies nothing', async () => {
    // GIVEN
    const config = renderConfig(example(IGNITION_EXAMPLES[0]), defaultTemplates());
    const n = node(config, IGNITION_EXAMPLES[0]);
    server.put(n.objectName, tamper(config.bytes));
    const fetch = await n.ignition('fetch');
    // WHEN
    const files = await n.ignition('files');
    // THEN
    expect(fetch.status).not.toBe(0);
    expect(files.status).not.toBe(0);
    expect(files.stdout + files.stderr).toMatch(/failed to acquire config: open .*cache.json: no such file/);
    expect(fs.existsSync(path.join(n.root, 'var/lib/kubelet/config.yaml'))).toBe(false);
    expect(fs.existsSync(path.join(n.root, 'etc/systemd/system/kubelet.service'))).toBe(false);
  });
});
