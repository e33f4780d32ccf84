import { Tags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import { UsageError } from '../../core/errors';

/** What cluster-autoscaler needs to know of a pool to scale it from zero. */
export interface AutoscalerTagsProps {
  /** The cluster's name (auto-discovery: `k8s.io/cluster-autoscaler/<cluster>`). */
  readonly cluster: string;
  /** The node labels the pool's nodes register with (the cluster's, with the pool's over them). */
  readonly labels: Readonly<Record<string, string>>;
  /** The taints the pool's nodes register with (the cluster's, then the pool's). */
  readonly taints: readonly { readonly key: string; readonly value: string; readonly effect: string }[];
  /** The root volume, in GiB: the node's ephemeral storage. */
  readonly rootVolumeGiB: number;
  /** Where the pool is in the object, for messages (`spec.pools[2]`). */
  readonly field: string;
}

/** The prefix of cluster-autoscaler's auto-discovery and node-template tags. */
export const AUTOSCALER_TAG_PREFIX = 'k8s.io/cluster-autoscaler/';
/** An Auto Scaling group tag key is at most 128 characters. */
const TAG_KEY_LIMIT = 128;

/**
 * The group tags cluster-autoscaler discovers a pool by (`--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,k8s.io/cluster-autoscaler/<cluster>`)
 * and reads a node template from when the pool has no node (labels, taints, ephemeral storage; CPU, memory and
 * architecture it reads from the instance type). On the group only, never propagated: a tag change is an in-place
 * update of the group, it never rolls a node.
 */
export function tagForClusterAutoscaler(group: autoscaling.AutoScalingGroup, props: AutoscalerTagsProps): void {
  const tags: [string, string][] = [
    [`${AUTOSCALER_TAG_PREFIX}enabled`, 'true'],
    [`${AUTOSCALER_TAG_PREFIX}${props.cluster}`, 'owned'],
    [`${AUTOSCALER_TAG_PREFIX}node-template/resources/ephemeral-storage`, `${props.rootVolumeGiB}Gi`],
  ];
  for (const key of Object.keys(props.labels).sort())
    tags.push([`${AUTOSCALER_TAG_PREFIX}node-template/label/${key}`, props.labels[key]]);
  // A key once: the kubelet registers one taint per key and effect, cluster-autoscaler's tag holds one value per key.
  const byKey = new Map<string, string>();
  for (const t of props.taints) byKey.set(t.key, `${t.value}:${t.effect}`);
  for (const key of [...byKey.keys()].sort())
    tags.push([`${AUTOSCALER_TAG_PREFIX}node-template/taint/${key}`, byKey.get(key) ?? '']);
  for (const [key, value] of tags) {
    if (key.length > TAG_KEY_LIMIT) {
      throw new UsageError(
        `${props.field}: the cluster-autoscaler tag ${key} is ${key.length} characters, above the ${TAG_KEY_LIMIT} of an Auto Scaling group tag key`,
        {
          hint: 'shorten the label or taint key (or the cluster name) so that cluster-autoscaler can read it from the group',
        },
      );
    }
    Tags.of(group).add(key, value, { applyToLaunchedInstances: false });
  }
  // What will be written, counted once the tags are all on (aspects run before validations): AWS takes 50 tags per
  // Auto Scaling group, and the stack's own tags (worker-stacks.io/cluster, /owner) are propagated to it as well.
  group.node.addValidation({
    validate: () => {
      const cfn = group.node.defaultChild as autoscaling.CfnAutoScalingGroup;
      const written = (cfn.tags.renderTags() as unknown[] | undefined)?.length ?? 0;
      const total = written + STACK_TAGS;
      return total > GROUP_TAG_LIMIT
        ? [
            `${props.field}: the Auto Scaling group would carry ${total} tags (${tags.length} of them cluster-autoscaler's, one per node label and taint, ${STACK_TAGS} the stack's own), above AWS's ${GROUP_TAG_LIMIT} per group; give the pool fewer labels, taints or spec.tags`,
          ]
        : [];
    },
  });
}

/** AWS's tags per Auto Scaling group. */
const GROUP_TAG_LIMIT = 50;
/** The stack tags every change set sets (worker-stacks.io/cluster, worker-stacks.io/owner), which CloudFormation propagates. */
const STACK_TAGS = 2;
