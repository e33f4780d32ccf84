/**
 * Supply chain on the node (issue 21): the kubelet binary is pinned by its SHA-256 in the node config itself (which the
 * node verifies against the checksum in its user data), per architecture, and the AWS CLI image of the Flatcar boot
 * script by digest. The download origin's own `.sha256` is never read: an origin (or a path to it) that serves a rogue
 * binary serves a matching hash too. The install script is run for real (sh, curl, sha256sum) against a loopback
 * stand-in for dl.k8s.io.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { rawExample, tempDir, TEMPLATES, variant } from '../../helpers/clusters';
import { requireCommand, runAsync } from '../../fixtures/cloudconfig/boot';
import { Json } from '../../helpers/json';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const INSTALL = '/opt/bin/worker-stacks-install-kubelet';
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const HASH_A = 'a'.repeat(64);

describe('validate refuses an object whose kubelet or image is not pinned (file, field path, rule)', () => {
  const check = (name: string, mutate: (v: Json) => void) => {
    const raw = rawExample(name);
    mutate(raw.spec.cloudConfig.values);
    return validateCluster(raw, { file: `clusters/${name}.yaml`, templates: TEMPLATES }).problems;
  };

  test.each([
    // [what, example, mutate, field path, the rule's words, its id]
    [
      'no kubeletSha256 (flatcar-worker)',
      'prod-eu1',
      (v: Json) => delete v.kubeletSha256,
      'kubeletSha256',
      /^required field is missing \(template flatcar-worker needs it: SHA-256/,
      'template-value-required',
    ],
    [
      'no kubeletSha256 (al2023-worker)',
      'staging-us1',
      (v: Json) => delete v.kubeletSha256,
      'kubeletSha256',
      /^required field is missing \(template al2023-worker needs it: SHA-256/,
      'template-value-required',
    ],
    [
      'an upper-case hash',
      'staging-us1',
      (v: Json) => (v.kubeletSha256.amd64 = 'A'.repeat(64)),
      'kubeletSha256',
      /^"amd64": "A{64}" does not match \[0-9a-f\]\{64\} \(rule template-value\)$/,
      'template-value',
    ],
    [
      'a hash one digit short',
      'prod-eu1',
      (v: Json) => (v.kubeletSha256.arm64 = 'a'.repeat(63)),
      'kubeletSha256',
      /^"arm64": "a{63}" does not match \[0-9a-f\]\{64\} \(rule template-value\)$/,
      'template-value',
    ],
    [
      'a hash with a shell quote',
      'prod-eu1',
      (v: Json) => (v.kubeletSha256.amd64 = `${'a'.repeat(62)}'x`),
      'kubeletSha256',
      /does not match \[0-9a-f\]\{64\} \(rule template-value\)$/,
      'template-value',
    ],
    [
      'an architecture name as the hash',
      'prod-eu1',
      (v: Json) => (v.kubeletSha256.amd64 = 'arm64'),
      'kubeletSha256',
      /^"amd64": "arm64" does not match \[0-9a-f\]\{64\} \(rule template-value\)$/,
      'template-value',
    ],
    [
      'a uname name instead of amd64/arm64',
      'prod-eu1',
      (v: Json) => (v.kubeletSha256 = { x86_64: HASH_A }),
      'kubeletSha256',
      /^"x86_64": "x86_64" does not match amd64\|arm64 \(rule template-value\)$/,
      'template-value',
    ],
    [
      'one hash instead of a map',
      'staging-us1',
      (v: Json) => (v.kubeletSha256 = HASH_A),
      'kubeletSha256',
      /^is a string, expected a map/,
      'template-value',
    ],
    [
      'no awsCliImage (flatcar-worker)',
      'edge-ap1',
      (v: Json) => delete v.awsCliImage,
      'awsCliImage',
      /^required field is missing \(template flatcar-worker needs it: The AWS CLI container image/,
      'template-value-required',
    ],
    [
      'the AWS CLI image by tag only',
      'prod-eu1',
      (v: Json) => (v.awsCliImage = 'public.ecr.aws/aws-cli/aws-cli:2.22.0'),
      'awsCliImage',
      /^"public\.ecr\.aws\/aws-cli\/aws-cli:2\.22\.0" does not match /,
      'template-value',
    ],
    [
      'the AWS CLI image with a short digest',
      'prod-eu1',
      (v: Json) => (v.awsCliImage = `public.ecr.aws/aws-cli/aws-cli@sha256:${'a'.repeat(40)}`),
      'awsCliImage',
      /does not match /,
      'template-value',
    ],
  ])('%s', (_what, name, mutate, field, words, rule) => {
    // GIVEN an example with one pin removed or malformed; WHEN validated
    const problems = check(name, mutate);
    // THEN exactly one problem, on that value, with its rule
    expect(problems).toEqual([
      {
        file: `clusters/${name}.yaml`,
        path: `spec.cloudConfig.values.${field}`,
        message: expect.stringMatching(words),
        rule,
      },
    ]);
  });

  test("a pin for the pool's architecture only is valid (a node of the other refuses at boot, below)", () => {
    // GIVEN staging-us1 (t3.large: x86_64) with its amd64 pin only; WHEN validated; THEN valid
    expect(check('staging-us1', (v) => (v.kubeletSha256 = { amd64: HASH_A }))).toEqual([]);
  });

  test('no pin for the architecture the pool runs is refused, naming the pool (issue 32 item 5)', () => {
    // GIVEN staging-us1 (t3.large: x86_64) with an arm64 pin only; WHEN validated
    const problems = check('staging-us1', (v) => (v.kubeletSha256 = { arm64: HASH_A }));
    // THEN the pins' field, the architecture and the pool
    expect(problems).toEqual([
      {
        file: 'clusters/staging-us1.yaml',
        path: 'spec.cloudConfig.values.kubeletSha256',
        message: expect.stringMatching(
          /^has no pin for amd64, which pool default runs \(spec\.pool\.instanceTypes\): its nodes would refuse to install the kubelet and never join; add kubeletSha256\.amd64/,
        ),
        rule: 'kubelet-pins',
      },
    ]);
  });
});

describe('the rendered node config carries the pins', () => {
  test.each(['prod-eu1', 'staging-us1', 'edge-ap1'])(
    '%s: the install script holds both hashes and never downloads a .sha256',
    (name) => {
      // GIVEN an example with its pins; WHEN rendered
      const raw = rawExample(name);
      const script = renderConfig(
        variant(name, () => undefined),
        defaultTemplates(),
      ).node.files.find((f) => f.path === INSTALL)!.contents;
      // THEN
      expect(script).toContain(`amd64) want='${raw.spec.cloudConfig.values.kubeletSha256.amd64}' ;;`);
      expect(script).toContain(`arm64) want='${raw.spec.cloudConfig.values.kubeletSha256.arm64}' ;;`);
      const downloads = script.split('\n').filter((l) => /^\s*[^#]*\bcurl\b/.test(l));
      expect(downloads).toEqual(['curl -fsSL --retry 5 -o "$bin.new" "$origin/$version/bin/linux/$arch/kubelet"']);
      expect(script).not.toMatch(/sha256sum -c/);
    },
  );

  test('a changed pin changes the node config (and so rolls the nodes)', () => {
    const before = renderConfig(
      variant('staging-us1', () => undefined),
      defaultTemplates(),
    ).checksum;
    const after = renderConfig(
      variant('staging-us1', (r) => (r.spec.cloudConfig.values.kubeletSha256.arm64 = HASH_A)),
      defaultTemplates(),
    ).checksum;
    expect(after).not.toBe(before);
  });

  test.each(['prod-eu1', 'edge-ap1'])('%s: the Flatcar boot script runs the AWS CLI image by its digest', (name) => {
    const raw = rawExample(name);
    const script = renderConfig(
      variant(name, () => undefined),
      defaultTemplates(),
    ).node.files.find((f) => f.path === '/opt/bin/worker-stacks-bootstrap-token')!.contents;
    expect(raw.spec.cloudConfig.values.awsCliImage).toMatch(/@sha256:[0-9a-f]{64}$/);
    expect(script).toContain(
      `docker run --rm --network host '${raw.spec.cloudConfig.values.awsCliImage}' secretsmanager`,
    );
    // No image of any template is named by tag alone.
    for (const f of renderConfig(
      variant(name, () => undefined),
      defaultTemplates(),
    ).node.files)
      expect(f.contents).not.toMatch(/docker run [^\n]*aws-cli:[0-9.]+ /);
  });
});

describe('the install script, run for real against a loopback origin', () => {
  const GOOD = Buffer.from('#!/bin/sh\necho "Kubernetes v1.32.0"\n');
  const ROGUE = Buffer.from('#!/bin/sh\necho "Kubernetes v1.32.0" # and something else\n');
  let server: http.Server;
  let origin: string;
  let serve: Buffer;
  const requests: string[] = [];
  let dir: string;

  beforeAll(async () => {
    requireCommand('sh');
    requireCommand('curl');
    requireCommand('sha256sum');
    server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url?.endsWith('/kubelet')) res.writeHead(200).end(serve);
      // The origin would happily vouch for its own binary: the script must never ask.
      else if (req.url?.endsWith('/kubelet.sha256')) res.writeHead(200).end(sha256(serve));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}/release`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    dir = tempDir('kubelet-pin');
    requests.length = 0;
    serve = GOOD;
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Renders staging-us1 with the given pins and runs its install script as a node of `machine` (`uname -m`). */
  async function install(pins: Record<string, string>, machine: string) {
    const cluster = variant('staging-us1', (r) => (r.spec.cloudConfig.values.kubeletSha256 = pins));
    const script = path.join(dir, 'install-kubelet');
    fs.writeFileSync(
      script,
      renderConfig(cluster, defaultTemplates()).node.files.find((f) => f.path === INSTALL)!.contents,
      {
        mode: 0o755,
      },
    );
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin, { recursive: true });
    fs.writeFileSync(path.join(bin, 'uname'), `#!/bin/sh\necho ${machine}\n`, { mode: 0o755 });
    const kubelet = path.join(dir, 'opt', 'bin', 'kubelet');
    const r = await runAsync('sh', [script], {
      env: { PATH: `${bin}:${process.env.PATH}`, WS_KUBELET_ORIGIN: origin, WS_KUBELET_BIN: kubelet },
      timeoutMs: 30_000,
    });
    return { ...r, kubelet };
  }

  test.each([
    ['x86_64', 'amd64'],
    ['aarch64', 'arm64'],
  ])(
    'a %s node installs the binary whose hash matches its pin, from the %s path, and asks for no .sha256',
    async (machine, arch) => {
      // GIVEN the origin serves the pinned bytes; WHEN the script runs
      const r = await install({ amd64: sha256(GOOD), arm64: sha256(GOOD) }, machine);
      // THEN
      expect(r.status).toBe(0);
      expect(fs.readFileSync(r.kubelet).equals(GOOD)).toBe(true);
      expect(fs.statSync(r.kubelet).mode & 0o777).toBe(0o755);
      expect(requests).toEqual([`/release/v1.32.0/bin/linux/${arch}/kubelet`]);
    },
  );

  test('a binary whose hash differs from the pin is refused and nothing is installed, though the origin vouches for it', async () => {
    // GIVEN the origin serves other bytes (and their matching .sha256)
    serve = ROGUE;
    // WHEN
    const r = await install({ amd64: sha256(GOOD), arm64: sha256(GOOD) }, 'x86_64');
    // THEN
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `refused the downloaded amd64 kubelet v1.32.0: its SHA-256 is ${sha256(ROGUE)}, this node config pins ${sha256(GOOD)}`,
    );
    expect(fs.existsSync(r.kubelet)).toBe(false);
    expect(fs.existsSync(`${r.kubelet}.new`)).toBe(false);
    expect(requests.some((u) => u.endsWith('.sha256'))).toBe(false);
  });

  test.each([
    ['aarch64', { amd64: sha256(GOOD) }, 'arm64'],
    ['riscv64', { amd64: sha256(GOOD), arm64: sha256(GOOD) }, 'riscv64'],
  ])('a %s node with no pin for its architecture refuses before downloading anything', async (machine, pins, arch) => {
    const r = await install(pins, machine);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `no SHA-256 of the ${arch} kubelet v1.32.0 is pinned in this node config; refusing to install one`,
    );
    expect(requests).toEqual([]);
    expect(fs.existsSync(r.kubelet)).toBe(false);
  });

  test.each([
    ['the pinned bytes are already installed: nothing is downloaded', GOOD, []],
    [
      'other bytes that print the right version are replaced by the pinned ones',
      ROGUE,
      ['/release/v1.32.0/bin/linux/amd64/kubelet'],
    ],
  ])('%s', async (_what, present, expected) => {
    // GIVEN a kubelet already on the node
    const kubelet = path.join(dir, 'opt', 'bin', 'kubelet');
    fs.mkdirSync(path.dirname(kubelet), { recursive: true });
    fs.writeFileSync(kubelet, present, { mode: 0o755 });
    // WHEN
    const r = await install({ amd64: sha256(GOOD), arm64: sha256(GOOD) }, 'x86_64');
    // THEN
    expect(r.status).toBe(0);
    expect(requests).toEqual(expected);
    expect(fs.readFileSync(kubelet).equals(GOOD)).toBe(true);
  });
});
