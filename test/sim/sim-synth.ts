import { renderConfig } from '../../lib/model/cloudconfig/render';
import { AssetPublisher, FileAsset, PublishResult } from '../../lib/platform/aws/s3-publisher';
import { WorkerCluster } from '../../lib/model/cluster/schema/schema';
import { Synthesizer } from '../../lib/engines/reconciler/workflow/context';
import { configBucketName, configKeyPrefix, workerStackName } from '../../lib/core/naming';
import { poolNamed, primaryPool, stackUnits } from '../../lib/model/cluster/pools/pools';
import { templateDirectory } from '../../lib/platform/files/template-directory';

/**
 * A synthesizer for the simulator: real CDK synthesis costs about a second, and thousands of schedules must run in
 * minutes. The template keeps what the reconciler's decisions read: the config checksum in the launch template's
 * user data (a config change rolls the group), the pool's sizes in the group (a change that does not roll), and the
 * ConfigChecksum output the live stack reports, per stack of the cluster (SynthesizeOptions.stackName: the shared stack
 * or a pool's own). Synthesis itself is tested with the real CDK elsewhere.
 */
export const simSynthesizer: Synthesizer = (cluster, opts) => simSynthesizerFor(0)(cluster, opts);

/** The tag a release of the simulated code writes into every launch template (release 0 writes none). */
export const RELEASE_TAG = 'sim.example.com/release';

/**
 * The synthesizer of release `release` of the simulated code: release 0 is `simSynthesizer`; each later one writes its
 * number into every launch template's instance tags (TagSpecifications), as a release of worker-stacks that writes the
 * launch template differently would: every stack's roll key changes, and no object did (the `release()` command).
 */
export function simSynthesizerFor(release: number): Synthesizer {
  return async (cluster, opts) => simStack(cluster, opts, release);
}

/** One stack's template as release `release` of the simulated code synthesizes it (the invariants' desired roll keys too). */
export function simStack(
  cluster: WorkerCluster,
  opts: Parameters<Synthesizer>[1],
  release: number,
): Awaited<ReturnType<Synthesizer>> {
  const name = cluster.metadata.name;
  // opts.stackName picks one of the cluster's stacks (the shared one, or a pool's own), as the real synthesis does.
  const stackName = opts.stackName ?? workerStackName(name);
  const unit = stackUnits(cluster).find((u) => u.stackName === stackName);
  if (!unit) throw new Error(`${name} has no stack ${stackName}`);
  // The shared stack without a pool of its own still reports the first pool's config (as the reconciler expects).
  const pool = poolNamed(cluster.spec, unit.pool ?? primaryPool(cluster.spec).name) ?? primaryPool(cluster.spec);
  const config = opts.config ?? renderConfig(cluster, templateDirectory(opts.templatesDir), pool.name);
  const template = {
    Resources: {
      LaunchTemplate: {
        Type: 'AWS::EC2::LaunchTemplate',
        Properties: {
          LaunchTemplateData: {
            UserData: `#!/bin/sh\n# config ${config.checksum}\n`,
            ImageId: pool.machineImage,
            ...(release > 0
              ? {
                  TagSpecifications: [
                    { ResourceType: 'instance', Tags: [{ Key: RELEASE_TAG, Value: String(release) }] },
                  ],
                }
              : {}),
          },
        },
      },
      Group: {
        Type: 'AWS::AutoScaling::AutoScalingGroup',
        Properties: {
          MinSize: String(pool.minSize),
          MaxSize: String(pool.maxSize),
          // What the roll key reads (lib/engines/stacks/roll-key.ts): the group's launch template, by reference.
          LaunchTemplate: {
            LaunchTemplateId: { Ref: 'LaunchTemplate' },
            Version: { 'Fn::GetAtt': ['LaunchTemplate', 'LatestVersionNumber'] },
          },
        },
      },
    },
    Outputs: { ConfigChecksum: { Value: config.checksum } },
  };
  const asset: FileAsset = {
    sourcePath: `/nonexistent/${name}/${config.checksum}`,
    bucketName: configBucketName(cluster.spec.account, cluster.spec.region),
    objectKey: `${configKeyPrefix(name)}${config.checksum}.${config.extension}`,
  };
  return { stackName, templateBody: JSON.stringify(template), assets: [asset], durationMs: 0 };
}

/** A content-addressed bucket that only remembers keys (the simulator's publish never reads a file). */
export class SimPublisher implements AssetPublisher {
  public readonly keys = new Set<string>();
  public async publish(assets: readonly FileAsset[]): Promise<PublishResult> {
    const r: PublishResult = { uploaded: [], skipped: [] };
    for (const a of assets) {
      const key = `${a.bucketName}/${a.objectKey}`;
      (this.keys.has(key) ? r.skipped : r.uploaded).push(a.objectKey);
      this.keys.add(key);
    }
    return r;
  }
  public templateUrl(asset: FileAsset): string {
    return `https://s3.sim/${asset.bucketName}/${asset.objectKey}`;
  }
}

/** The template an out-of-band change makes live: another checksum, as someone else's deploy would. */
export function outOfBandTemplate(checksum: string): string {
  return JSON.stringify({
    Resources: {
      LaunchTemplate: {
        Type: 'AWS::EC2::LaunchTemplate',
        Properties: { LaunchTemplateData: { UserData: `# config ${checksum}` } },
      },
    },
    Outputs: { ConfigChecksum: { Value: checksum } },
  });
}

/**
 * The release of the simulated code that wrote a template (0: none, or not one of ours), read from its launch
 * template's instance tags. Memoized: the invariants ask it of the same few templates at every operation.
 */
export function releaseOfTemplate(body: string | undefined): number {
  if (!body) return 0;
  let hit = RELEASES.get(body);
  if (hit === undefined) {
    type Tagged = { TagSpecifications?: { Tags?: { Key: string; Value: string }[] }[] };
    const template = JSON.parse(body) as {
      Resources?: Partial<Record<string, { Properties?: { LaunchTemplateData?: Tagged } }>>;
    };
    const specs = template.Resources?.LaunchTemplate?.Properties?.LaunchTemplateData?.TagSpecifications ?? [];
    const tag = specs.flatMap((t) => t.Tags ?? []).find((t) => t.Key === RELEASE_TAG);
    hit = tag ? Number(tag.Value) : 0;
    if (RELEASES.size > 10_000) RELEASES.clear();
    RELEASES.set(body, hit);
  }
  return hit;
}
const RELEASES = new Map<string, number>();
