import { Problem } from '../../core/errors';
import { architectureOf } from '../cluster/pools/instance-architecture';
import { found } from '../cluster/rules/rule-registry';
import { WorkerCluster } from '../cluster/schema/schema';
import { ImageResolver } from './image-pins';

/**
 * Pins each pool that names an image channel to the channel's release in the cluster's region: the pool's
 * machineImage becomes the release's literal AMI id, so synthesis, the roll key, `review` and the waves see a new
 * release like any other new image. Every problem at once, on the pool's imageChannel: an unknown channel, one
 * without a release for the region, a channel of another architecture than the pool's instance types.
 */
export function pinPools(cluster: WorkerCluster, resolve: ImageResolver, file: string): Problem[] {
  const problems: Problem[] = [];
  const region = cluster.spec.region;
  const pools = [
    ...(cluster.spec.pool ? [{ pool: cluster.spec.pool, at: 'spec.pool', architecture: undefined }] : []),
    ...(cluster.spec.pools ?? []).map((pool, i) => ({ pool, at: `spec.pools[${i}]`, architecture: pool.architecture })),
  ];
  for (const { pool, at, architecture } of pools) {
    if (pool.imageChannel === undefined) continue;
    const pin = resolve(pool.imageChannel, region, {
      name: cluster.metadata.name,
      labels: cluster.metadata.labels ?? {},
    });
    if ('problem' in pin) {
      problems.push({ file, path: `${at}.imageChannel`, message: pin.problem, rule: pin.rule });
      continue;
    }
    const runs = architecture ?? pool.instanceTypes.map(architectureOf).find((a) => a !== undefined);
    if (runs !== undefined && runs !== pin.architecture) {
      problems.push({
        file,
        ...found(
          'image-channel',
          `${at}.imageChannel`,
          `WorkerImageChannel ${pin.channel} is ${pin.architecture}, the pool runs ${runs}: its images would not boot (name a channel of ${runs} images)`,
        ),
      });
      continue;
    }
    pool.machineImage = pin.imageId;
  }
  return problems;
}
