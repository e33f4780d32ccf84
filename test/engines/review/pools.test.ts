import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLUSTER_TAG, poolStackName, workerStackName } from '../../../lib/core/naming';
import { formatTerminal } from '../../../lib/engines/review/format-terminal';
import { formatMarkdown } from '../../../lib/engines/review/format-markdown';
import { compareSides } from '../../../lib/engines/review/compare-sides';
import { renderPools, RenderedConfig } from '../../../lib/model/cloudconfig/render';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/model/cloudconfig/templates';
import { WorkerCluster } from '../../../lib/model/cluster/schema';
import { rawExample, tempDir, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { schemaProblems } from './formats';

/*
 * Review of a cluster of several pools. The sides are cloud assemblies written here in the shape `cdk synth` gives
 * them (manifest, templates with the cluster tag, asset manifests, the node config assets rendered by the real
 * renderer): one shared stack with the pool `default`, and one own stack per other pool.
 */

/** staging-us1 with the pools default (on-demand), spot and arm; `change` reshapes the raw object first. */
function pooled(change: (raw: Json) => void = () => undefined): WorkerCluster {
  const raw = rawExample('staging-us1');
  const pool = raw.spec.pool;
  delete raw.spec.pool;
  raw.spec.pools = [
    { ...pool, name: 'default' },
    {
      ...pool,
      name: 'spot',
      instanceTypes: ['m6i.large', 'm5.large'],
      capacity: { onDemandPercentageAboveBaseCapacity: 0 },
    },
    {
      ...pool,
      name: 'arm',
      architecture: 'arm64',
      instanceTypes: ['m7g.large'],
      machineImage: 'ami-0a1b2c3d4e5f60718',
    },
  ];
  change(raw);
  return validated(raw, 'clusters/staging-us1.yaml');
}

const spot = (raw: Json): Json => (raw.spec.pools as Json[]).find((p) => p.name === 'spot');

/** A worker group on a launch template whose user data carries the config checksum, as the worker stack makes it. */
function groupTemplate(config: RenderedConfig, shared: boolean): Json {
  return {
    Resources: {
      ...(shared
        ? { NodeSecurityGroup: { Type: 'AWS::EC2::SecurityGroup', Properties: { GroupDescription: 'nodes' } } }
        : {}),
      PoolLaunchTemplate: {
        Type: 'AWS::EC2::LaunchTemplate',
        Properties: { LaunchTemplateData: { UserData: { 'Fn::Base64': `#!/bin/sh\nCHECKSUM=${config.checksum}\n` } } },
      },
      PoolGroupASG: {
        Type: 'AWS::AutoScaling::AutoScalingGroup',
        Properties: {
          MinSize: '1',
          MaxSize: '4',
          LaunchTemplate: {
            LaunchTemplateId: { Ref: 'PoolLaunchTemplate' },
            Version: { 'Fn::GetAtt': ['PoolLaunchTemplate', 'LatestVersionNumber'] },
          },
        },
        UpdatePolicy: {
          AutoScalingRollingUpdate: { MaxBatchSize: '1', MinInstancesInService: '1', PauseTime: 'PT10M' },
        },
      },
    },
  };
}

/** Writes the cloud assembly of the given clusters (each: its name, its pools' configs) into a new directory. */
function assembly(
  side: string,
  clusters: ReadonlyArray<{ name: string; configs: ReadonlyMap<string, RenderedConfig> }>,
  /** Stacks carry the cluster tag (an older app's may not). */
  tagged = true,
) {
  const outdir = path.join(tempDir(`review-pools-${side}`), 'cdk.out');
  fs.mkdirSync(outdir, { recursive: true });
  const artifacts: Record<string, Json> = {};
  for (const c of clusters) {
    const stacks: Array<[string, RenderedConfig | undefined, boolean]> = [
      [workerStackName(c.name), c.configs.get('default'), true],
      ...[...c.configs]
        .filter(([p]) => p !== 'default')
        .map(([p, cfg]): [string, RenderedConfig, boolean] => [poolStackName(c.name, p), cfg, false]),
    ];
    for (const [stackName, config, shared] of stacks) {
      const template = config
        ? groupTemplate(config, shared)
        : { Resources: { Sg: { Type: 'AWS::EC2::SecurityGroup' } } };
      fs.writeFileSync(path.join(outdir, `${stackName}.template.json`), JSON.stringify(template));
      const files: Record<string, Json> = {};
      if (config) {
        const asset = `asset.${config.checksum}.${config.extension}`;
        fs.writeFileSync(path.join(outdir, asset), config.bytes);
        files[config.checksum] = { source: { path: asset, packaging: 'file' }, destinations: {} };
      }
      fs.writeFileSync(path.join(outdir, `${stackName}.assets.json`), JSON.stringify({ version: '1', files }));
      artifacts[`${stackName}.assets`] = {
        type: 'cdk:asset-manifest',
        properties: { file: `${stackName}.assets.json` },
      };
      artifacts[stackName] = {
        type: 'aws:cloudformation:stack',
        environment: 'aws://222222222222/us-east-1',
        properties: {
          templateFile: `${stackName}.template.json`,
          stackName,
          ...(tagged ? { tags: { [CLUSTER_TAG]: c.name } } : {}),
        },
        dependencies: [`${stackName}.assets`],
      };
    }
  }
  fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ version: '1', artifacts }));
  return outdir;
}

function review(base: WorkerCluster, head: WorkerCluster) {
  const of = (c: WorkerCluster) => ({ name: c.metadata.name, configs: renderPools(c, DEFAULT_TEMPLATES_DIR) });
  return compareSides(
    { side: 'base', label: 'base main', outdir: assembly('base', [of(base)]), ref: 'main', commit: 'a'.repeat(40) },
    { side: 'head', label: 'head (working tree)', outdir: assembly('head', [of(head)]) },
  );
}

describe('review of a cluster of several pools', () => {
  test('a change to one pool’s labels rolls that pool only, with its own checksum and config lines', () => {
    // GIVEN
    const base = pooled();
    const head = pooled((raw) => (spot(raw).labels = { 'example.com/capacity': 'spot' }));
    // WHEN
    const r = review(base, head);
    // THEN
    const c = r.clusters[0];
    expect(c.status).toBe('rolls');
    expect(c.pools.map((p) => [p.name, p.stackName, p.status])).toEqual([
      ['default', 'WorkerStack-staging-us1', 'unchanged'],
      ['arm', 'WorkerStack-staging-us1-Pool-arm', 'unchanged'],
      ['spot', 'WorkerStack-staging-us1-Pool-spot', 'rolls'],
    ]);
    const s = c.pools.find((p) => p.name === 'spot');
    expect(s?.checksum.base).not.toBe(s?.checksum.head);
    expect(s?.why).toMatch(/launch template PoolLaunchTemplate changes \(user data: node config/);
    expect(
      s?.config?.entries.flatMap((e) => e.lines).some((l) => l.startsWith('+') && l.includes('example.com/capacity')),
    ).toBe(true);
    expect(c.pools.filter((p) => p.name !== 'spot').every((p) => !p.rolls && p.config === null)).toBe(true);
    expect(c.rollReasons).toEqual([
      expect.stringMatching(/^pool spot \(WorkerStack-staging-us1-Pool-spot\): launch template/),
    ]);
    expect(c.verdict).toMatch(/; pools: spot rolls; default, arm unchanged$/);
    expect(schemaProblems(JSON.parse(JSON.stringify(r)))).toEqual([]);
  });

  test('the terminal and markdown formats name each pool, its stack and why', () => {
    // GIVEN
    const r = review(
      pooled(),
      pooled((raw) => (spot(raw).labels = { 'example.com/capacity': 'spot' })),
    );
    // WHEN
    const text = formatTerminal(r, { color: false });
    const md = formatMarkdown(r);
    // THEN
    expect(text).toContain('pool spot (WorkerStack-staging-us1-Pool-spot): rolls: launch template');
    expect(text).toContain('pool arm (WorkerStack-staging-us1-Pool-arm): unchanged:');
    expect(text).toMatch(/Node config of pool spot \(cloud-init, checksum [0-9a-f]{12} -> [0-9a-f]{12}\)/);
    expect(md).toContain('- pool `spot` (`WorkerStack-staging-us1-Pool-spot`): **rolls**');
  });

  test('an added pool creates its stack and rolls no node', () => {
    // GIVEN
    const base = pooled((raw) => (raw.spec.pools = (raw.spec.pools as Json[]).filter((p) => p.name !== 'arm')));
    // WHEN
    const c = review(base, pooled()).clusters[0];
    // THEN
    expect(c.status).toBe('changes');
    expect(c.pools.find((p) => p.name === 'arm')).toMatchObject({ status: 'added', rolls: false });
    expect(c.pools.filter((p) => p.name !== 'arm').map((p) => p.status)).toEqual(['unchanged', 'unchanged']);
  });

  test('a single-pool cluster has one pool, default, in its shared stack, and its verdict as before', () => {
    // GIVEN
    const one = validated(rawExample('staging-us1'), 'clusters/staging-us1.yaml');
    const more = validated(
      (() => {
        const raw = rawExample('staging-us1');
        raw.spec.cloudConfig.values.maxPods = 64;
        return raw;
      })(),
      'clusters/staging-us1.yaml',
    );
    // WHEN
    const c = review(one, more).clusters[0];
    // THEN
    expect(c.pools.map((p) => [p.name, p.stackName, p.shared, p.status])).toEqual([
      ['default', 'WorkerStack-staging-us1', true, 'rolls'],
    ]);
    expect(c.verdict).not.toContain('pools:');
    expect(c.rollReasons).toEqual([expect.stringMatching(/^launch template PoolLaunchTemplate changes/)]);
  });

  test('a pool’s own stack belongs to the cluster its tag names; a cluster named x-pool-y is a cluster', () => {
    // GIVEN clusters a (with the pool c) and a-pool-b
    const configs = renderPools(pooled(), DEFAULT_TEMPLATES_DIR);
    const one = new Map([['default', configs.get('default') as RenderedConfig]]);
    const sides = [
      { name: 'a', configs: new Map([...one, ['c', configs.get('spot') as RenderedConfig]]) },
      { name: 'a-pool-b', configs: one },
    ];
    // WHEN
    const r = compareSides(
      { side: 'base', label: 'base', outdir: assembly('base', sides), ref: 'main', commit: 'a'.repeat(40) },
      { side: 'head', label: 'head', outdir: assembly('head', sides) },
    );
    // THEN
    expect(r.clusters.map((c) => [c.name, c.pools.map((p) => p.stackName)])).toEqual([
      ['a', ['WorkerStack-a', 'WorkerStack-a-Pool-c']],
      ['a-pool-b', ['WorkerStack-a-pool-b']],
    ]);
  });

  test('without the cluster tag, WorkerStack-<cluster>-Pool-<pool> is a pool of <cluster>; WorkerStack-x-pool-y a cluster’s', () => {
    // GIVEN untagged stacks of clusters a (with the pool c) and x-pool-y (no cluster x)
    const configs = renderPools(pooled(), DEFAULT_TEMPLATES_DIR);
    const one = new Map([['default', configs.get('default') as RenderedConfig]]);
    const sides = [
      { name: 'a', configs: new Map([...one, ['c', configs.get('spot') as RenderedConfig]]) },
      { name: 'x-pool-y', configs: one },
    ];
    // WHEN
    const r = compareSides(
      { side: 'base', label: 'base', outdir: assembly('base', sides, false), ref: 'main', commit: 'a'.repeat(40) },
      { side: 'head', label: 'head', outdir: assembly('head', sides, false) },
    );
    // THEN
    expect(r.clusters.map((c) => [c.name, c.pools.map((p) => p.stackName)])).toEqual([
      ['a', ['WorkerStack-a', 'WorkerStack-a-Pool-c']],
      ['x-pool-y', ['WorkerStack-x-pool-y']],
    ]);
  });
});
