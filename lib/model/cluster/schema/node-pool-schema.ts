import { z } from 'zod';
import { labelValue, nodeLabelKey } from './kubelet-rules';
import { awsId, dnsLabel, pattern } from './rules';
import { CloudConfigValuesSchema, POOL_OWN_VALUES } from './cloud-config-schema';
import { CapacitySchema, PoolSchema, TaintSchema } from './pool-schema';

/** One of spec.pools of the WorkerCluster object: spec.pool's fields, its own labels, taints, capacity and node config. */

const d = (text: string) => ({ description: text });

/**
 * A pool's own values: POOL_OWN_VALUES typed as in CloudConfigValuesSchema but optional and without their defaults (a
 * default here would replace the cluster's value in the pool's merged values), and the template's own (checked against
 * its values.yaml).
 */
function poolValuesSchema() {
  const own: readonly string[] = POOL_OWN_VALUES;
  const shape = Object.fromEntries(
    Object.entries(CloudConfigValuesSchema.shape)
      .filter(([key]) => own.includes(key))
      .map(([key, field]) => [
        key,
        (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field)
          .optional()
          .meta(d(`This pool's ${key}, in place of spec.cloudConfig.values.${key}. @default the cluster's`)),
      ]),
  );
  return z.strictObject(shape).catchall(z.unknown());
}

/** One named pool of spec.pools: spec.pool's fields, and what only a pool among several needs. */
export const NodePoolSchema = PoolSchema.extend({
  name: dnsLabel.meta(
    d(
      'Unique within the cluster. The pool named default lives in the stack WorkerStack-<cluster> (beside what the pools share); every other pool has its own stack WorkerStack-<cluster>-Pool-<name>.',
    ),
  ),
  architecture: z
    .enum(['x86_64', 'arm64'])
    .optional()
    .meta(
      d(
        "The machine image's architecture; every instance type must support it (EC2's DescribeInstanceTypes). @default the instance types' own",
      ),
    ),
  subnetIds: z
    .array(awsId('subnet', 'a subnet'))
    .min(1)
    .optional()
    .meta(d("Subnets of this pool, a subset of spec.network.subnetIds. @default all of the cluster's")),
  labels: z
    .record(nodeLabelKey, labelValue)
    .default({})
    .meta(d('Node labels of this pool, merged over spec.cloudConfig.values.nodeLabels. @default {}')),
  taints: z
    .array(TaintSchema)
    .default([])
    .meta(d('Node taints of this pool, added to spec.cloudConfig.values.nodeTaints. @default []')),
  capacity: CapacitySchema.optional().meta(
    d('On-demand and spot. @default every node on-demand, no mixed instances policy beyond the instance types'),
  ),
  cloudConfig: z
    .strictObject({
      template: pattern(/^[a-z0-9][a-z0-9-]*$/, 'a template name')
        .optional()
        .meta(d("Directory name under cloudconfig/. @default the cluster's")),
      values: poolValuesSchema()
        .default({})
        .meta(
          d(
            "Values merged over the cluster's spec.cloudConfig.values (a key here replaces the cluster's): of those every template takes, kubernetesVersion, maxPods and nodeReadyTimeoutSeconds (the others are the cluster's alone; the pool's labels and taints are its labels and taints), and the template's own. @default {}",
          ),
        ),
    })
    .optional()
    .meta(d("This pool's node config: template and values over the cluster's. @default the cluster's")),
}).meta(d('One worker pool: an Auto Scaling group in its own stack, rolling on its own.'));
