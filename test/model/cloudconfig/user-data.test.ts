/**
 * The small user data names the object and embeds its checksum, and nothing
 * else: no value of the cluster object, no secret. The big config names the
 * bootstrap token's secret by its ARN and never holds a token.
 */
import { parse } from 'yaml';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { LIMITS } from '../../../lib/model/cluster/rules/limits';
import { renderConfig, renderPools } from '../../../lib/model/cloudconfig/render';
import { renderUserData, configUserData } from '../../../lib/model/cloudconfig/user-data';
import { CLOUD_INIT_INSTALL_PATH } from '../../../lib/model/cloudconfig/cloud-init';
import { UsageError } from '../../../lib/core/errors';
import {
  BOOTSTRAP_EXAMPLES,
  CONFIG_IN_USER_DATA_EXAMPLES,
  example,
  EXAMPLE_NAMES,
  rawExample,
  validated,
  variant,
} from '../../helpers/clusters';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

/** A recognizable fake kubelet bootstrap token (the `[a-z0-9]{6}.[a-z0-9]{16}` format). */
const FAKE_TOKEN = 'fak3id.f4k3s3cr3tt0k3n0';
const TOKEN_FORMAT = /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/;

function render(cluster: WorkerCluster) {
  const config = renderConfig(cluster, defaultTemplates());
  const source = `s3://worker-stacks-configs-${cluster.spec.account}-${cluster.spec.region}/clusters/${cluster.metadata.name}/${config.checksum}.${config.extension}`;
  return {
    config,
    source,
    userData: configUserData(config, source, defaultTemplates()),
  };
}

/** Every scalar of spec.cloudConfig.values (and the label keys), as text. */
function valueStrings(cluster: WorkerCluster): string[] {
  const v = cluster.spec.cloudConfig.values;
  return [
    v.apiEndpoint,
    v.clusterCA.trim(),
    ...v.clusterCA.split('\n').filter((l) => l.length > 20),
    v.kubernetesVersion,
    v.clusterDNS,
    `maxPods: ${v.maxPods}`,
    ...Object.entries(v.nodeLabels).flat(),
    ...v.nodeTaints.map((t) => t.key),
    ...v.registryMirrors,
    v.bootstrapTokenSecretArn,
    cluster.metadata.name,
    cluster.spec.cloudConfig.template,
  ].filter((x): x is string => x !== undefined); // an EKS object has no kubernetesVersion nor bootstrap secret
}

/** The user data with the checksum and the source replaced by placeholders: what is left is fixed text. */
const skeleton = (userData: string, checksum: string, source: string) =>
  userData.split(source).join('<SOURCE>').split(checksum).join('<SUM>');

describe('the small user data holds only the source, the checksum and fixed text', () => {
  test.each(BOOTSTRAP_EXAMPLES)('%s: no value of the cluster object appears in it', (name) => {
    // GIVEN
    const cluster = example(name);
    // WHEN
    const { config, source, userData } = render(cluster);
    const rest = skeleton(userData, config.checksum, source);
    // THEN
    expect(userData).toContain(config.checksum);
    expect(userData).toContain(source);
    for (const value of valueStrings(cluster)) expect(rest).not.toContain(value);
    expect(rest).not.toMatch(TOKEN_FORMAT);
    expect(Buffer.byteLength(userData)).toBeLessThan(2048);
    expect(Buffer.byteLength(userData)).toBeLessThanOrEqual(LIMITS.smallUserDataBytes);
  });

  test.each(BOOTSTRAP_EXAMPLES)('%s: changing every value leaves the fixed text as it was', (name) => {
    // GIVEN
    const before = render(example(name));
    // WHEN
    const after = render(
      variant(name, (raw) => {
        raw.metadata.name = `${raw.metadata.name}-other`;
        raw.spec.account = '999999999999';
        const v = raw.spec.cloudConfig.values;
        Object.assign(v, {
          apiEndpoint: 'https://other.example.com',
          kubernetesVersion: 'v1.30.9',
          clusterDNS: '10.9.9.9',
          maxPods: 17,
        });
        v.nodeLabels = { other: 'label' };
        // References stay in the cluster's own region and account, and the secret is the cluster's own, which validation requires.
        v.bootstrapTokenSecretArn = `arn:aws:secretsmanager:${raw.spec.region}:999999999999:secret:worker-stacks/${raw.metadata.name}/other-AbCdEf`;
        for (const l of raw.spec.listeners ?? [])
          if (l.certificateArn) l.certificateArn = l.certificateArn.replace(/:\d{12}:/, ':999999999999:');
      }),
    );
    // THEN
    expect(after.config.checksum).not.toBe(before.config.checksum);
    expect(skeleton(after.userData, after.config.checksum, after.source)).toBe(
      skeleton(before.userData, before.config.checksum, before.source),
    );
  });

  test('the Ignition user data is exactly config.replace with the source and the sha256 hash', () => {
    // GIVEN
    const name = EXAMPLE_NAMES.find((n) => renderConfig(example(n), defaultTemplates()).format === 'ignition')!;
    // WHEN
    const { config, source, userData } = render(example(name));
    // THEN
    expect(JSON.parse(userData)).toEqual({
      ignition: {
        version: '3.3.0',
        config: { replace: { source, verification: { hash: `sha256-${config.checksum}` } } },
      },
    });
  });

  test('the cloud-init user data is one bootcmd that verifies with sha256sum before installing', () => {
    // GIVEN
    const name = EXAMPLE_NAMES.find((n) => renderConfig(example(n), defaultTemplates()).format === 'cloud-init')!;
    // WHEN
    const { config, source, userData } = render(example(name));
    const doc = parse(userData);
    // THEN
    expect(userData.startsWith('#cloud-config\n')).toBe(true);
    expect(Object.keys(doc)).toEqual(['bootcmd']);
    expect(doc.bootcmd).toHaveLength(1);
    const [sh, flag, script] = doc.bootcmd[0];
    expect([sh, flag]).toEqual(['sh', '-c']);
    expect(script).toContain(`want=${config.checksum}\n`);
    expect(script).toContain(`aws s3 cp --only-show-errors '${source}' "$tmp"`);
    expect(script).toContain(`dst=${CLOUD_INIT_INSTALL_PATH}\n`);
    expect(script.indexOf('sha256sum -c', script.indexOf('aws s3 cp'))).toBeLessThan(
      script.indexOf('mv "$tmp" "$dst"'),
    );
  });
});

describe('a user data that carries its config (EKS) holds the checksum, the source and exactly the stored bytes', () => {
  test.each(
    CONFIG_IN_USER_DATA_EXAMPLES.flatMap((n) =>
      [...renderPools(example(n), defaultTemplates()).keys()].map((p) => [n, p]),
    ),
  )('%s, pool %s: within EC2’s 16 KB, and no bootstrap token or secret ARN in it', (name, pool) => {
    // GIVEN
    const cluster = example(name);
    const config = renderPools(cluster, defaultTemplates()).get(pool)!;
    const source = `s3://worker-stacks-configs-${cluster.spec.account}-${cluster.spec.region}/clusters/${name}/${config.checksum}.${config.extension}`;
    const text = config.bytes.toString('utf8');
    // WHEN
    const userData = configUserData(config, source, defaultTemplates());
    // THEN
    expect(userData).toContain(config.checksum);
    expect(userData).toContain(source);
    expect(userData).toContain(text);
    expect(Buffer.byteLength(userData)).toBeLessThanOrEqual(LIMITS.userDataBytes);
    expect(userData).not.toMatch(TOKEN_FORMAT);
    // No secret's ARN at all (an EKS object names none; a secret of a template's own value would be one).
    expect(userData).not.toMatch(/arn:aws[a-z-]*:secretsmanager:/);
  });
});

describe('no secret in any config', () => {
  test.each(BOOTSTRAP_EXAMPLES)('%s: the big config names the token secret by ARN and holds no token', (name) => {
    // GIVEN
    const cluster = example(name);
    // WHEN
    const text = renderConfig(cluster, defaultTemplates())
      .node.files.map((f) => f.contents)
      .join('\n');
    // THEN
    expect(text).toContain(`--secret-id '${cluster.spec.cloudConfig.values.bootstrapTokenSecretArn}'`);
    expect(text).toContain('token: $token\n');
    expect(text).not.toMatch(TOKEN_FORMAT);
    expect(renderConfig(cluster, defaultTemplates()).bytes.toString('utf8')).not.toMatch(TOKEN_FORMAT);
  });

  test('a token cannot be put into the cluster object: the values are a closed set', () => {
    // GIVEN
    const raw = rawExample('prod-eu1');
    Object.assign(raw.spec.cloudConfig.values, { bootstrapToken: FAKE_TOKEN });
    // WHEN
    const attempt = () => validated(raw, 'clusters/prod-eu1.yaml');
    // THEN
    expect(attempt).toThrow(/bootstrapToken/);
  });

  test('the fake token given as the secret ARN is refused: only an ARN is accepted there', () => {
    // GIVEN
    const raw = rawExample('staging-us1');
    raw.spec.cloudConfig.values.bootstrapTokenSecretArn = FAKE_TOKEN;
    // WHEN
    const attempt = () => validated(raw, 'clusters/staging-us1.yaml');
    // THEN
    expect(attempt).toThrow(/bootstrapTokenSecretArn/);
    expect(FAKE_TOKEN).toMatch(TOKEN_FORMAT);
  });

  test.each(EXAMPLE_NAMES)('%s: the fake token in a field no template reads (a tag) reaches neither config', (name) => {
    // GIVEN
    const cluster = variant(name, (raw) => (raw.spec.tags = { ...raw.spec.tags, note: FAKE_TOKEN }));
    // WHEN
    const { config, userData } = render(cluster);
    // THEN
    expect(cluster.spec.tags.note).toBe(FAKE_TOKEN);
    expect(config.bytes.toString('utf8')).not.toContain(FAKE_TOKEN);
    expect(userData).not.toContain(FAKE_TOKEN);
    expect(config.checksum).toBe(renderConfig(example(name), defaultTemplates()).checksum);
  });
});

describe('renderUserData refuses what it cannot embed safely', () => {
  const checksum = 'ab'.repeat(32);

  test.each([
    ['a short checksum', { checksum: 'ab'.repeat(31), source: 's3://b/k' }, /64 hex digits/],
    ['an upper-case checksum', { checksum: checksum.toUpperCase(), source: 's3://b/k' }, /64 hex digits/],
    ['a quote in the source', { checksum, source: "s3://b/k';reboot;'" }, /without quotes/],
    ['a command substitution in the source', { checksum, source: 's3://b/$(reboot)' }, /without quotes/],
    ['a file:// source', { checksum, source: 'file:///etc/passwd' }, /s3:\/\/ or http/],
    ['a space in the source', { checksum, source: 's3://b/a b' }, /s3:\/\/ or http/],
  ])('%s', (_what, props, message) => {
    for (const format of ['ignition', 'cloud-init'] as const) {
      // GIVEN
      const input = { format, ...props };
      // WHEN
      const attempt = () => renderUserData(input);
      // THEN
      expect(attempt).toThrow(UsageError);
      expect(attempt).toThrow(message);
    }
  });

  test('a source that would push the user data over the 2 KiB budget', () => {
    // GIVEN
    const source = `s3://bucket/${'k'.repeat(LIMITS.smallUserDataBytes)}`;
    // WHEN
    const attempt = () => renderUserData({ format: 'cloud-init', checksum, source });
    // THEN
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(/over the 2048-byte budget/);
  });
});
