import { renderConfig } from '../../lib/model/cloudconfig/render';
import { AssetPublisher, FileAsset, PublishResult } from '../../lib/platform/aws/s3-publisher';
import { WorkerCluster } from '../../lib/model/cluster/schema';
import { Synthesizer } from '../../lib/engines/reconciler/workflow/context';
import { configBucketName, configKeyPrefix, workerStackName } from '../../lib/core/naming';
import { poolNamed, primaryPool, stackUnits } from '../../lib/model/cluster/pools';

/**
 * A synthesizer for the simulator: real CDK synthesis costs about a second, and thousands of schedules must run in
 * minutes. The template keeps what the reconciler's decisions read: the config checksum in the launch template's
 * user data (a config change rolls the group), the pool's sizes in the group (a change that does not roll), and the
 * ConfigChecksum output the live stack reports, per stack of the cluster (SynthesizeOptions.stackName: the shared stack
 * or a pool's own). Synthesis itself is tested with the real CDK elsewhere.
 */
export const simSynthesizer: Synthesizer = async (cluster: WorkerCluster, opts) => {
  const name = cluster.metadata.name;
  // opts.stackName picks one of the cluster's stacks (the shared one, or a pool's own), as the real synthesis does.
  const stackName = opts.stackName ?? workerStackName(name);
  const unit = stackUnits(cluster).find((u) => u.stackName === stackName);
  if (!unit) throw new Error(`${name} has no stack ${stackName}`);
  // The shared stack without a pool of its own still reports the first pool's config (as the reconciler expects).
  const pool = poolNamed(cluster.spec, unit.pool ?? primaryPool(cluster.spec).name) ?? primaryPool(cluster.spec);
  const config = opts.config ?? renderConfig(cluster, opts.templatesDir, pool.name);
  const template = {
    Resources: {
      LaunchTemplate: {
        Type: 'AWS::EC2::LaunchTemplate',
        Properties: {
          LaunchTemplateData: { UserData: `#!/bin/sh\n# config ${config.checksum}\n`, ImageId: pool.machineImage },
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
};

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
