/**
 * eks-al2023: the NodeConfig is stored under its SHA-256, the user data carries exactly those bytes in its
 * application/node.eks.aws part and a shell part that refuses any other bytes (fail closed), within EC2's 16 KB.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { loadClusterFile } from '../../../lib/platform/files/load-clusters';
import { LIMITS } from '../../../lib/model/cluster/rules/limits';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { renderConfig } from '../../../lib/model/cloudconfig/render';
import { configUserData } from '../../../lib/model/cloudconfig/user-data';
import { MIME_BOUNDARY, NODECONFIG_MEDIA_TYPE } from '../../../lib/model/cloudconfig/nodeadm';
import { UsageError } from '../../../lib/core/errors';
import { REPO, TEMPLATES, tempDir } from '../../helpers/clusters';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- objects are reshaped freely, into invalid forms too
type Raw = any;

const FIXTURE = path.join(REPO, 'test', 'fixtures', 'eks', 'eks-eu1.yaml');

/** The fixture, valid, after `mutate` changed its raw YAML. */
function eksCluster(mutate: (raw: Raw) => void = () => undefined): WorkerCluster {
  const raw = parse(fs.readFileSync(FIXTURE, 'utf8'));
  mutate(raw);
  const dir = tempDir('eks-');
  const file = path.join(dir, 'eks-eu1.yaml');
  fs.writeFileSync(file, JSON.stringify(raw));
  const r = loadClusterFile(file, { templates: TEMPLATES, relativeTo: dir });
  if (!r.cluster) throw new Error(JSON.stringify(r.problems));
  return r.cluster;
}

function render(cluster: WorkerCluster) {
  const config = renderConfig(cluster, defaultTemplates());
  const source = `s3://worker-stacks-config-555555555555-eu-west-1/clusters/eks-eu1/${config.checksum}.${config.extension}`;
  const text = config.bytes.toString('utf8');
  return {
    config,
    text,
    userData: configUserData(config, source, defaultTemplates()),
  };
}

/** MIME parts by RFC 2046: the newline before each delimiter belongs to it. */
function mimeParts(userData: string): Array<{ headers: string; body: string }> {
  const [preamble, ...rest] = userData.split(`\n--${MIME_BOUNDARY}`);
  expect(preamble).toBe(`MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="${MIME_BOUNDARY}"\n`);
  expect(rest.at(-1)).toBe('--\n');
  return rest.slice(0, -1).map((p) => {
    const at = p.indexOf('\n\n');
    return { headers: p.slice(1, at), body: p.slice(at + 2) };
  });
}

describe('eks-al2023 NodeConfig', () => {
  const cluster = eksCluster();
  const { config, text, userData } = render(cluster);
  const doc = parse(text);

  test.each([
    ['apiVersion', doc.apiVersion, 'node.eks.aws/v1alpha1'],
    ['kind', doc.kind, 'NodeConfig'],
    ['spec.cluster.name', doc.spec.cluster.name, 'eks-eu1'],
    ['spec.cluster.apiServerEndpoint', doc.spec.cluster.apiServerEndpoint, cluster.spec.cloudConfig.values.apiEndpoint],
    [
      'spec.cluster.certificateAuthority (base64 of the PEM)',
      Buffer.from(doc.spec.cluster.certificateAuthority, 'base64').toString('utf8'),
      cluster.spec.cloudConfig.values.clusterCA,
    ],
    ['spec.cluster.cidr', doc.spec.cluster.cidr, '10.100.0.0/16'],
    ['spec.kubelet.config.clusterDNS', doc.spec.kubelet.config.clusterDNS, ['10.100.0.10']],
    ['spec.kubelet.config.maxPods', doc.spec.kubelet.config.maxPods, 58],
    ['spec.kubelet.config.shutdownGracePeriod', doc.spec.kubelet.config.shutdownGracePeriod, '30s'],
    [
      'spec.kubelet.config.imageGCHighThresholdPercent (a number stays one)',
      doc.spec.kubelet.config.imageGCHighThresholdPercent,
      85,
    ],
    ['spec.kubelet.flags', doc.spec.kubelet.flags, ['--node-labels=node.kubernetes.io/pool=general']],
    ['spec.instance.localStorage.strategy', doc.spec.instance.localStorage.strategy, 'RAID0'],
  ])('%s comes from the object', (_field, got, want) => {
    // THEN
    expect(got).toEqual(want);
  });

  test('the stored object is the NodeConfig, and the user data carries exactly its bytes first, then the check, then the signal', () => {
    // WHEN
    const parts = mimeParts(userData);
    // THEN
    expect(config.format).toBe('nodeadm');
    expect(parts.map((p) => p.headers)).toEqual([
      `Content-Type: ${NODECONFIG_MEDIA_TYPE}`,
      'Content-Type: text/x-shellscript; charset="us-ascii"',
      'Content-Type: text/x-shellscript; charset="us-ascii"',
    ]);
    expect(parts[2].body).toContain('worker-stacks-signal-ready');
    expect(parts[0].body).toBe(text);
    expect(parts[1].body).toContain(`want=${config.checksum}\n`);
    expect(Buffer.byteLength(userData)).toBeLessThanOrEqual(LIMITS.userDataBytes);
  });

  test("Python's email package (the node's check) reads the NodeConfig part as the stored bytes", () => {
    // GIVEN
    const dir = tempDir('eks-ud-');
    fs.writeFileSync(path.join(dir, 'ud'), userData);
    fs.writeFileSync(path.join(dir, 'nc'), config.bytes);
    // WHEN
    const r = spawnSync(
      'python3',
      [
        '-c',
        `import email,sys; m=email.message_from_binary_file(open(sys.argv[1],"rb")); p=[x.get_payload(decode=True) for x in m.walk() if x.get_content_type()=="${NODECONFIG_MEDIA_TYPE}"]; sys.exit(p!=[open(sys.argv[2],"rb").read()])`,
        path.join(dir, 'ud'),
        path.join(dir, 'nc'),
      ],
      { encoding: 'utf8' },
    );
    // THEN
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  test('the same object gives the same bytes; the order of kubeletConfig keys does not matter', () => {
    // GIVEN
    const reordered = eksCluster((raw) => {
      const k = raw.spec.cloudConfig.values.kubeletConfig;
      raw.spec.cloudConfig.values.kubeletConfig = Object.fromEntries(Object.entries(k).reverse());
    });
    // WHEN
    const again = render(reordered);
    // THEN
    expect(again.userData).toBe(userData);
    expect(again.config.checksum).toBe(config.checksum);
  });

  test.each<[string, (raw: Raw) => void]>([
    ['a kubelet setting', (raw) => (raw.spec.cloudConfig.values.kubeletConfig.shutdownGracePeriod = '45s')],
    ['a label', (raw) => (raw.spec.cloudConfig.values.nodeLabels.extra = 'x')],
    ['the containerd config', (raw) => (raw.spec.cloudConfig.values.containerdConfig = 'version = 2')],
    ['the service CIDR', (raw) => (raw.spec.cloudConfig.values.serviceCidr = '172.20.0.0/16')],
  ])('a change of %s changes the checksum and the user data (the pool rolls)', (_what, mutate) => {
    // WHEN
    const after = render(eksCluster(mutate));
    // THEN
    expect(after.config.checksum).not.toBe(config.checksum);
    expect(after.userData).not.toBe(userData);
    expect(after.userData).toContain(after.config.checksum);
  });

  test('a NodeConfig that does not fit in EC2 user data is refused, with the budget', () => {
    // GIVEN 170 kubelet settings of 100 characters each (every one valid on its own)
    const big = eksCluster((raw) => {
      for (let i = 0; i < 170; i++) raw.spec.cloudConfig.values.kubeletConfig[`setting${i}`] = 'x'.repeat(100);
    });
    // WHEN / THEN
    expect(() => render(big)).toThrow(UsageError);
    expect(() => render(big)).toThrow(`over the ${LIMITS.userDataBytes}-byte budget`);
  });
});

describe('the shell part fails closed', () => {
  /** Runs the check with fakes for curl (serves `served`), systemctl and install (record what they were asked). */
  function runCheck(served: Buffer) {
    const { config, userData } = (() => {
      const c = renderConfig(eksCluster(), defaultTemplates());
      const source = `http://127.0.0.1:1/clusters/eks-eu1/${c.checksum}.nodeconfig`;
      return {
        config: c,
        userData: configUserData(c, source, defaultTemplates()),
      };
    })();
    const dir = tempDir('eks-check-');
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(dir, 'served'), served);
    fs.writeFileSync(path.join(dir, 'ud'), userData);
    const fake = (name: string, body: string) =>
      fs.writeFileSync(path.join(bin, name), `#!/bin/bash\n${body}\n`, { mode: 0o755 });
    fake('curl', `while [ "$1" != -o ]; do shift; done; cp "${dir}/served" "$2"`);
    fake('systemctl', `echo "$*" >> "${dir}/systemctl"`);
    fake('install', `cp "\${@: -2:1}" "${dir}/installed"`);
    const script = mimeParts(userData)[1].body;
    const r = spawnSync('bash', ['-c', script], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, WORKER_STACKS_USER_DATA: path.join(dir, 'ud') },
    });
    const read = (f: string) =>
      fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), 'utf8') : undefined;
    return { config, r, systemctl: read('systemctl'), installed: read('installed') };
  }

  test('the stored bytes: kept, kubelet left alone', () => {
    // GIVEN / WHEN
    const { config, r, systemctl, installed } = runCheck(renderConfig(eksCluster(), defaultTemplates()).bytes);
    // THEN
    expect(r.status).toBe(0);
    expect(systemctl).toBeUndefined();
    expect(installed).toBe(config.bytes.toString('utf8'));
  });

  test('other bytes at the source: kubelet masked, nothing kept, exit 1', () => {
    // GIVEN / WHEN
    const { r, systemctl, installed } = runCheck(Buffer.from('apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\n'));
    // THEN
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('does not hash to');
    expect(systemctl).toBe('mask --runtime kubelet.service\n');
    expect(installed).toBeUndefined();
  });
});
