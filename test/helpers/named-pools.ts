import { rawExample } from './clusters';
import { Json } from './json';

/**
 * prod-eu1 as named pools (issue 23): an on-demand system pool (tainted, its own labels), a spot pool (the example's
 * pool with a capacity of its own) and an arm64 pool on two of the cluster's subnets with a value of its own. Raw, as a
 * fresh deep copy; the listeners take the pools without a NoSchedule taint (spot and arm).
 */
export function rawPoolsExample(): Json {
  const o = rawExample('prod-eu1');
  const { pool } = o.spec;
  delete o.spec.pool;
  o.spec.pools = [
    {
      name: 'system',
      instanceTypes: ['m6i.large'],
      machineImage: pool.machineImage,
      minSize: 2,
      maxSize: 4,
      labels: { 'example.com/pool': 'system' },
      taints: [{ key: 'CriticalAddonsOnly', value: 'true', effect: 'NoSchedule' }],
    },
    {
      ...pool,
      name: 'spot',
      minSize: 0,
      capacity: { onDemandBaseCapacity: 0, onDemandPercentageAboveBaseCapacity: 0 },
    },
    {
      name: 'arm',
      architecture: 'arm64',
      instanceTypes: ['m7g.xlarge', 'c7g.xlarge'],
      machineImage: 'ami-0a0b0c0d0e0f01234',
      minSize: 0,
      maxSize: 10,
      subnetIds: o.spec.network.subnetIds.slice(0, 2),
      labels: { 'example.com/pool': 'arm' },
      cloudConfig: { values: { maxPods: 58 } },
    },
  ];
  return o;
}

/** An object's spec.pool as two named pools of its own settings: `default` (in the shared stack) and `spot` (a stack of its own). */
export function defaultAndSpot(raw: Json): void {
  const spec: Json = raw.spec;
  spec.pools = [
    { ...spec.pool, name: 'default' },
    { ...spec.pool, name: 'spot' },
  ];
  delete spec.pool;
}
