import * as fs from 'node:fs';
import * as path from 'node:path';
import { CLUSTER_TAG, poolStackName, workerStackName } from '../../../lib/core/naming';
import { formatTerminal } from '../../../lib/engines/review/format-terminal';
import { formatMarkdown } from '../../../lib/engines/review/format-markdown';
import { compareSides } from '../../../lib/engines/review/compare-sides';
import { renderPools, RenderedConfig } from '../../../lib/model/cloudconfig/render';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { rawExample, tempDir, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { schemaProblems } from './formats';
import { reviewExitCode } from '../../../lib/engines/review/review';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

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

/** How the fixture's groups are built beyond their config: a drain hook, a desired capacity. */
interface GroupOptions {
  /**
   * A termination lifecycle hook on the group, as drain makes it: inline in the group (this release's pool stacks), or
   * a resource of its own (the shared stack; a pool stack of an earlier release). @default none
   */
  readonly drain?: 'inline' | 'resource';
  /** The group's DesiredCapacity. @default none */
  readonly desired?: number;
  /** The pool whose group is built so. @default every pool's */
  readonly pool?: string;
}

/** A worker group on a launch template whose user data carries the config checksum, as the worker stack makes it. */
function groupTemplate(config: RenderedConfig, shared: boolean, group: GroupOptions = {}): Json {
  return {
    Resources: {
      ...(group.drain === 'resource'
        ? {
            PoolGroupDrainOnTerminate: {
              Type: 'AWS::AutoScaling::LifecycleHook',
              Properties: {
                AutoScalingGroupName: { Ref: 'PoolGroupASG' },
                LifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING',
              },
            },
          }
        : {}),
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
          ...(group.desired !== undefined ? { DesiredCapacity: String(group.desired) } : {}),
          ...(group.drain === 'inline'
            ? {
                LifecycleHookSpecificationList: [
                  {
                    LifecycleHookName: 'worker-stacks-drain',
                    LifecycleTransition: 'autoscaling:EC2_INSTANCE_TERMINATING',
                  },
                ],
              }
            : {}),
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
  group: GroupOptions = {},
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
        ? groupTemplate(config, shared, !group.pool || stackName === poolStackName(c.name, group.pool) ? group : {})
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

/** `head` undefined: the cluster object is gone at head. `group`: how base's groups are built. */
function review(base: WorkerCluster, head: WorkerCluster | undefined, group: GroupOptions = {}) {
  const of = (c: WorkerCluster) => ({ name: c.metadata.name, configs: renderPools(c, defaultTemplates()) });
  return compareSides(
    {
      side: 'base',
      label: 'base main',
      outdir: assembly('base', [of(base)], true, group),
      ref: 'main',
      commit: 'a'.repeat(40),
    },
    { side: 'head', label: 'head (working tree)', outdir: assembly('head', head ? [of(head)] : []) },
  );
}

const withoutPool =
  (name: string) =>
  (raw: Json): void => {
    raw.spec.pools = (raw.spec.pools as Json[]).filter((p) => p.name !== name);
  };

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
    const configs = renderPools(pooled(), defaultTemplates());
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
    const configs = renderPools(pooled(), defaultTemplates());
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

  test.each([
    // the change, how base's groups are, what the removed pool's line says, the cluster's verdict
    [
      'arm removed',
      withoutPool('arm'),
      {},
      "its nodes (1–4) are terminated when the reconciler deletes WorkerStack-staging-us1-Pool-arm, once the cluster's other stacks are settled and Ready",
      'rolls nodes: removes pool arm: its nodes (1–4) are terminated when its stack is deleted; pools: arm removed; default, spot unchanged',
    ],
    [
      'arm removed, its group at desired capacity 3',
      withoutPool('arm'),
      { desired: 3, pool: 'arm' },
      "its 3 nodes are terminated when the reconciler deletes WorkerStack-staging-us1-Pool-arm, once the cluster's other stacks are settled and Ready",
      'rolls nodes: removes pool arm: its 3 nodes are terminated when its stack is deleted; pools: arm removed; default, spot unchanged',
    ],
    [
      'arm removed, its group drained by a hook inline in it',
      withoutPool('arm'),
      { drain: 'inline', pool: 'arm' },
      "its nodes (1–4) are terminated when the reconciler deletes WorkerStack-staging-us1-Pool-arm, once the cluster's other stacks are settled and Ready, each drained first (its drain hook goes with its group)",
      'rolls nodes: removes pool arm: its nodes (1–4) are terminated when its stack is deleted; pools: arm removed; default, spot unchanged',
    ],
    [
      'arm removed, its group drained by a hook resource (a pool stack of an earlier release)',
      withoutPool('arm'),
      { drain: 'resource', pool: 'arm' },
      "its nodes (1–4) are terminated when the reconciler deletes WorkerStack-staging-us1-Pool-arm, once the cluster's other stacks are settled and Ready; CloudFormation deletes its drain hook before its group, so they are not drained: drain them first",
      'rolls nodes: removes pool arm: its nodes (1–4) are terminated when its stack is deleted; pools: arm removed; default, spot unchanged',
    ],
    [
      'arm renamed arm2',
      (raw: Json): void => {
        (raw.spec.pools as Json[]).find((p) => p.name === 'arm').name = 'arm2';
      },
      {},
      "its nodes (1–4) are terminated when the reconciler deletes WorkerStack-staging-us1-Pool-arm, once pool arm2 (added) is created and Ready and the cluster's other stacks are settled and Ready",
      'rolls nodes: removes pool arm: its nodes (1–4) are terminated when its stack is deleted; pools: arm2 added; arm removed; default, spot unchanged',
    ],
  ] as const)(
    '%s: the pool’s nodes go with its stack, a roll (--fail-on roll fails)',
    (_what, change, group, why, verdict) => {
      // GIVEN
      const base = pooled();
      const head = pooled(change);
      // WHEN
      const r = review(base, head, group);
      // THEN
      const c = r.clusters[0];
      expect(c.pools.find((p) => p.name === 'arm')).toMatchObject({ status: 'removed', rolls: true, why });
      expect({
        status: c.status,
        verdict: c.verdict,
        rollReasons: c.rollReasons,
        rollingUpdate: c.rollingUpdate,
      }).toEqual({
        status: 'rolls',
        verdict,
        rollReasons: [
          `removes pool arm (WorkerStack-staging-us1-Pool-arm): ${why.split(' when ')[0]} when its stack is deleted`,
        ],
        rollingUpdate: null,
      });
      expect([reviewExitCode(r), reviewExitCode(r, 'change'), reviewExitCode(r, 'roll')]).toEqual([0, 1, 1]);
      expect(formatTerminal(r, { color: false })).toContain(
        `pool arm (WorkerStack-staging-us1-Pool-arm): removed: ${why}`,
      );
      expect(schemaProblems(JSON.parse(JSON.stringify(r)))).toEqual([]);
    },
  );

  test('a rename: the new pool says it is created and Ready before the old pool’s stack is deleted', () => {
    // GIVEN
    const head = pooled((raw) => ((raw.spec.pools as Json[]).find((p) => p.name === 'arm').name = 'arm2'));
    // WHEN
    const c = review(pooled(), head).clusters[0];
    // THEN
    expect(c.pools.find((p) => p.name === 'arm2')).toMatchObject({
      status: 'added',
      rolls: false,
      why: 'WorkerStack-staging-us1-Pool-arm2 is created with its own group: no running node is replaced; it is created and Ready before the stack of pool arm is deleted',
    });
  });

  test('a pool removed beside one that rolls: the cluster rolls as that pool does, and names both', () => {
    // GIVEN
    const head = pooled((raw) => {
      spot(raw).labels = { 'example.com/capacity': 'spot' };
      withoutPool('arm')(raw);
    });
    // WHEN
    const c = review(pooled(), head).clusters[0];
    // THEN
    expect(c.status).toBe('rolls');
    expect(c.rollingUpdate).not.toBeNull();
    expect(c.rollReasons).toEqual([
      'removes pool arm (WorkerStack-staging-us1-Pool-arm): its nodes (1–4) are terminated when its stack is deleted',
      expect.stringMatching(/^pool spot \(WorkerStack-staging-us1-Pool-spot\): launch template/),
    ]);
    expect(c.verdict).toMatch(/^rolls nodes: .*; pools: spot rolls; arm removed; default unchanged$/);
  });

  test('a removed cluster object: its pools’ stacks are not deleted for it, and nothing rolls', () => {
    // WHEN the whole object is gone at head
    const r = review(pooled(), undefined);
    // THEN
    const c = r.clusters[0];
    expect(c.status).toBe('removed');
    expect(c.pools.filter((p) => !p.shared).map((p) => [p.name, p.status, p.rolls])).toEqual([
      ['arm', 'removed', false],
      ['spot', 'removed', false],
    ]);
    expect(c.pools.find((p) => p.name === 'arm')?.why).toMatch(
      /^the cluster object is gone from the head; the reconciler does not delete WorkerStack-staging-us1-Pool-arm for it/,
    );
    expect(c.notes.join(' ')).toMatch(/does not delete a removed object's stacks/);
    expect(reviewExitCode(r, 'roll')).toBe(0);
  });
});
