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
import { renderConfig } from '../../lib/cloudconfig/render';
import { CLOUD_INIT_INSTALL_PATH, renderUserData } from '../../lib/cloudconfig/user-data';
import { example, EXAMPLE_NAMES, tempDir } from '../helpers/clusters';
import { requireTool, run } from '../helpers/tools';
import { ConfigServer, requireCommand, runAsync, startConfigServer, tamper } from '../fixtures/cloudconfig/boot';

const NAME = EXAMPLE_NAMES.find((n) => renderConfig(example(n)).format === 'cloud-init')!;
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
  const config = renderConfig(example(NAME));
  const objectName = `${config.checksum}.${config.extension}`;
  const userData = parse(renderUserData({ format: config.format, checksum: config.checksum, source: server.url(objectName) }));
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
  return runAsync(requireCommand('unshare'), ['--mount', '--propagation', 'private', 'sh', '-c', mountAndRun, 'boot', path.join(dir, 'cfg.d'), ...command], {
    env: { ...process.env, TMPDIR: path.join(dir, 'tmp') },
  });
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

  test('the real cloud-init reads the installed file as part of its configuration', async () => {
    // GIVEN
    const { config, objectName, argv } = node();
    server.put(objectName, config.bytes);
    expect((await inNamespace(argv)).status).toBe(0);
    const python = fs.readFileSync(requireTool('cloud-init'), 'utf8').split('\n')[0].replace(/^#!\s*/, '');
    const read = [
      'import json',
      'from cloudinit import util',
      'c = util.read_conf_with_confd("/etc/cloud/cloud.cfg")',
      'print(json.dumps({"paths": [f["path"] for f in c.get("write_files", [])], "runcmd": c.get("runcmd")}))',
    ].join('\n');
    // WHEN
    const result = await inNamespace([python, '-c', read]);
    // THEN
    expect(result.status).toBe(0);
    const seen = JSON.parse(result.stdout);
    expect(seen.paths).toEqual(parse(config.bytes.toString('utf8')).write_files.map((f: { path: string }) => f.path));
    expect(seen.paths).toContain('/var/lib/kubelet/config.yaml');
    expect(seen.runcmd).toContainEqual(['systemctl', 'daemon-reload']);
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
