/**
 * Fail closed for cloud-init: the bootstrap in the small user data's bootcmd
 * is run exactly as cloud-init runs it (its argv, `sh -c SCRIPT`) against a
 * loopback HTTP server standing in for S3. It runs in a private mount
 * namespace (`unshare --mount --propagation private`) with a scratch
 * directory bind-mounted over /etc/cloud/cloud.cfg.d, so the real /etc/cloud
 * is never touched while the script uses its real install path.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { renderUserData } from '../../../lib/model/cloudconfig/user-data';
import { CLOUD_INIT_INSTALL_PATH } from '../../../lib/model/cloudconfig/cloud-init';
import { example, EXAMPLE_NAMES, tempDir } from '../../helpers/clusters';
import { requireTool, run } from '../../helpers/tools';
import { ConfigServer, requireCommand, runAsync, startConfigServer, tamper } from '../../fixtures/cloudconfig/boot';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const NAME = EXAMPLE_NAMES.find((n) => renderConfig(example(n), defaultTemplates()).format === 'cloud-init')!;
const CFG_D = path.dirname(CLOUD_INIT_INSTALL_PATH);
const INSTALLED = path.basename(CLOUD_INIT_INSTALL_PATH);

let server: ConfigServer;
let dir: string;
beforeAll(async () => {
  server = await startConfigServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  dir = tempDir('cloud-init-boot');
  fs.mkdirSync(path.join(dir, 'cfg.d'));
  fs.mkdirSync(path.join(dir, 'tmp'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
  // THEN (every test): the host's own cloud-init directory saw nothing, and no mount leaked out of the namespace.
  expect(fs.existsSync(CLOUD_INIT_INSTALL_PATH)).toBe(false);
  expect(fs.readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(` ${CFG_D} `);
});

/** The config, its object name on the server, and the bootcmd argv of the user data that names it. */
function node() {
  const config = renderConfig(example(NAME), defaultTemplates());
  const objectName = `${config.checksum}.${config.extension}`;
  const userData = parse(
    renderUserData({ format: config.format, checksum: config.checksum, source: server.url(objectName) }),
  );
  expect(userData.bootcmd).toHaveLength(1);
  const argv: string[] = userData.bootcmd[0];
  return { config, objectName, argv };
}

/** Runs `command...` in a private mount namespace, with the scratch cfg.d bind-mounted over /etc/cloud/cloud.cfg.d. */
function inNamespace(command: readonly string[]) {
  requireCommand('mount');
  requireCommand('curl');
  requireCommand('sha256sum');
  const mountAndRun = `mount --bind "$1" ${CFG_D} && shift && exec "$@"`;
  return runAsync(
    requireCommand('unshare'),
    ['--mount', '--propagation', 'private', 'sh', '-c', mountAndRun, 'boot', path.join(dir, 'cfg.d'), ...command],
    {
      env: { ...process.env, TMPDIR: path.join(dir, 'tmp') },
    },
  );
}

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

/** kubelet.service requires and is ordered after the kernel unit, which loads modules first and applies sysctl after. */
function expectKernelBeforeKubelet(kubelet: string, kernel: string) {
  expect(directive(kubelet, 'Requires')).toContain('worker-stacks-kernel.service');
  expect(directive(kubelet, 'After')).toContain('worker-stacks-kernel.service');
  expect(directive(kernel, 'Type')).toEqual(['oneshot']);
  expect(directive(kernel, 'RemainAfterExit')).toEqual(['true']);
  expect(directive(kernel, 'ExecStart')).toEqual([
    '/usr/lib/systemd/systemd-modules-load',
    '/usr/lib/systemd/systemd-sysctl',
  ]);
}

const installed = () => path.join(dir, 'cfg.d', INSTALLED);
const entries = (sub: string) => fs.readdirSync(path.join(dir, sub));

describe('the cloud-init bootstrap installs only the verified config', () => {
  test('the right bytes are installed where cloud-init reads its config, mode 0600', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    server.put(objectName, config.bytes);
    const before = server.requests.length;
    // WHEN
    const boot = await inNamespace(argv);
    // THEN
    expect(boot).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(server.requests.slice(before)).toEqual([`/${objectName}`]);
    expect(fs.readFileSync(installed()).equals(config.bytes)).toBe(true);
    expect(run('sha256sum', [installed()]).stdout.split(' ')[0]).toBe(config.checksum);
    expect(fs.statSync(installed()).mode & 0o777).toBe(0o600);
    expect(entries('tmp')).toEqual([]);
  });

  /** Boots the node with the verified object, then has the real cloud-init print `expr` of its merged configuration `c`. */
  async function bootAndReadMergedConfig(bytes: Buffer, objectName: string, argv: string[], expr: string) {
    server.put(objectName, bytes);
    expect((await inNamespace(argv)).status).toBe(0);
    const python = fs
      .readFileSync(requireTool('cloud-init'), 'utf8')
      .split('\n')[0]
      .replace(/^#!\s*/, '');
    const read = [
      'import json',
      'from cloudinit import util',
      'c = util.read_conf_with_confd("/etc/cloud/cloud.cfg")',
      `print(json.dumps(${expr}))`,
    ].join('\n');
    return inNamespace([python, '-c', read]);
  }

  test('the real cloud-init reads the installed file as part of its configuration', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    // WHEN
    const result = await bootAndReadMergedConfig(
      config.bytes,
      objectName,
      argv,
      '{"paths": [f["path"] for f in c.get("write_files", [])], "runcmd": c.get("runcmd")}',
    );
    // THEN
    expect(result.status).toBe(0);
    const seen = JSON.parse(result.stdout);
    expect(seen.paths).toEqual(parse(config.bytes.toString('utf8')).write_files.map((f: { path: string }) => f.path));
    expect(seen.paths).toContain('/var/lib/kubelet/config.yaml');
    expect(seen.runcmd).toContainEqual(['systemctl', 'daemon-reload']);
  });

  test('kernel modules and sysctl settings are in force before the kubelet starts (the order cloud-init and systemd apply them)', async () => {
    // GIVEN the verified config installed, and the real cloud-init's merged configuration (its module order included)
    const { config, objectName, argv } = node();
    const result = await bootAndReadMergedConfig(
      config.bytes,
      objectName,
      argv,
      '{"final": c.get("cloud_final_modules"), "files": c.get("write_files", []), "runcmd": c.get("runcmd")}',
    );
    // WHEN (the merged configuration is read above, after the boot)
    // THEN
    expect(result.status).toBe(0);
    const seen = JSON.parse(result.stdout);
    const files = new Map<string, { content: string; defer: boolean }>(
      seen.files.map((f: { path: string; content: string; defer: boolean }) => [f.path, f]),
    );
    const file = (p: string) => files.get(p)?.content ?? '';
    // 1. The files (kernel settings and both units) are written in the final stage, before that stage runs runcmd.
    const final: string[] = seen.final.map((m: string | string[]) => (Array.isArray(m) ? m[0] : m).replace(/_/g, '-'));
    expect(final.indexOf('write-files-deferred')).toBeGreaterThanOrEqual(0);
    expect(final.indexOf('write-files-deferred')).toBeLessThan(final.indexOf('scripts-user'));
    for (const p of [
      '/etc/modules-load.d/kubernetes.conf',
      '/etc/sysctl.d/90-kubernetes.conf',
      '/etc/systemd/system/worker-stacks-kernel.service',
      '/etc/systemd/system/kubelet.service',
    ]) {
      expect({ p, defer: files.get(p)?.defer }).toEqual({ p, defer: true });
    }
    // 2. runcmd (in scripts-user) reloads systemd, then starts the kernel unit and the kubelet.
    const enable = seen.runcmd.findIndex((c: string[]) => c[1] === 'enable');
    expect(seen.runcmd.findIndex((c: string[]) => c[1] === 'daemon-reload')).toBeLessThan(enable);
    expect(seen.runcmd[enable]).toEqual(
      expect.arrayContaining(['--now', 'kubelet.service', 'worker-stacks-kernel.service']),
    );
    // 3. systemd starts the kubelet only after the kernel unit has loaded the modules, then applied every sysctl file.
    expectKernelBeforeKubelet(
      file('/etc/systemd/system/kubelet.service'),
      file('/etc/systemd/system/worker-stacks-kernel.service'),
    );
    expect(file('/etc/modules-load.d/kubernetes.conf').split('\n')).toEqual(
      expect.arrayContaining(['br_netfilter', 'overlay']),
    );
    expect(file('/etc/sysctl.d/90-kubernetes.conf')).toMatch(/^net\.bridge\.bridge-nf-call-iptables = 1$/m);
    for (const [key, value] of Object.entries(PROTECTED_KERNEL_DEFAULTS))
      expect(file('/etc/sysctl.d/90-kubernetes.conf')).toContain(`\n${key} = ${value}\n`);
  });

  test('a second boot with the right file installed exits 0 without fetching', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    server.put(objectName, config.bytes);
    expect((await inNamespace(argv)).status).toBe(0);
    const before = server.requests.length;
    // WHEN
    const again = await inNamespace(argv);
    // THEN
    expect(again).toEqual({ status: 0, stdout: '', stderr: '' });
    expect(server.requests.length).toBe(before);
    expect(fs.readFileSync(installed()).equals(config.bytes)).toBe(true);
  });

  test('a stale installed file (an older config) is replaced by the verified new one', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    server.put(objectName, config.bytes);
    fs.writeFileSync(installed(), '#cloud-config\n# an older config\n');
    const before = server.requests.length;
    // WHEN
    const boot = await inNamespace(argv);
    // THEN
    expect(boot.status).toBe(0);
    expect(server.requests.length).toBe(before + 1);
    expect(fs.readFileSync(installed()).equals(config.bytes)).toBe(true);
  });
});

describe('the cloud-init bootstrap fails closed', () => {
  test('one changed byte: exit non-zero, "checksum mismatch", nothing installed', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    const tampered = tamper(config.bytes);
    server.put(objectName, tampered);
    const before = server.requests.length;
    // WHEN
    const boot = await inNamespace(argv);
    // THEN
    expect([...tampered].filter((b, i) => b !== config.bytes[i])).toHaveLength(1);
    expect(server.requests.slice(before)).toEqual([`/${objectName}`]);
    expect(boot.status).not.toBe(0);
    expect(boot.stderr).toMatch(/checksum mismatch/);
    expect(entries('cfg.d')).toEqual([]);
    expect(entries('tmp')).toEqual([]);
  });

  test('one changed byte with an older config installed: the older one stays, the tampered one is refused', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    server.put(objectName, tamper(config.bytes));
    const older = '#cloud-config\n# an older config\n';
    fs.writeFileSync(installed(), older);
    // WHEN
    const boot = await inNamespace(argv);
    // THEN
    expect(boot.status).not.toBe(0);
    expect(boot.stderr).toMatch(/checksum mismatch/);
    expect(fs.readFileSync(installed(), 'utf8')).toBe(older);
  });

  test('an object that is not there (HTTP 404): exit non-zero, nothing installed', async () => {
    // GIVEN
    const { argv } = node();
    const missing = argv.map((a) => a.replace(/\/[0-9a-f]{64}\.yaml'/, `/${'0'.repeat(64)}.yaml'`));
    // WHEN
    const boot = await inNamespace(missing);
    // THEN
    expect(missing).not.toEqual(argv);
    expect(boot.status).not.toBe(0);
    expect(boot.stderr).toMatch(/404/);
    expect(entries('cfg.d')).toEqual([]);
  });
});
