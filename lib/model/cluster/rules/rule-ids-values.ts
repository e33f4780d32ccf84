import { ClusterRule } from './cluster-rule';

// The named rules of references to AWS resources, templates and their values, and rollouts (references.ts,
// template-values.ts, kubelet-pins.ts, rollout-rules.ts, validate.ts; the CRD: lib/platform/kube/cel-rules.ts,
// cel-template-rules.ts).

/** Why a rule over the templates has no CEL twin. */
const TEMPLATES = 'it reads the templates of cloudconfig/, files of the daemon that the API server cannot see';

export const VALUE_RULES = [
  {
    id: 'name-matches-file',
    paths: ['metadata.name'],
    says: "A file's metadata.name is its file name (clusters/<name>.yaml).",
    cel: { none: 'the file store alone has file names' },
  },
  {
    id: 'reference-in-cluster',
    paths: [
      'spec.cloudConfig.values.bootstrapTokenSecretArn',
      'spec.listeners[].certificateArn',
      'spec.rollout.rollbackAlarms[]',
    ],
    says: "A secret, certificate or rollback alarm is in the cluster's own region, account and partition.",
    cel: {
      partly:
        "a listener certificate's region and account: the message of a rule over the listeners would format the parts of an ARN, which the cost estimate cannot bound; the reconciler reports it",
    },
  },
  {
    id: 'secret-arn',
    paths: ['spec.cloudConfig.values', 'spec.pools[].cloudConfig.values'],
    says: 'A template value that names a secret names it by its full Secrets Manager ARN.',
    cel: { none: "a template's own values are unknown fields to the CRD, which CEL does not see" },
  },
  {
    id: 'secret-scope',
    paths: [
      'spec.cloudConfig.values.bootstrapTokenSecretArn',
      'spec.cloudConfig.values',
      'spec.pools[].cloudConfig.values',
    ],
    says: "A secret's name starts with worker-stacks/<cluster name>/: the nodes may read only their own cluster's secrets.",
    cel: { partly: "bootstrapTokenSecretArn only: a template's own values are unknown fields to the CRD" },
  },
  {
    id: 'template-known',
    paths: ['spec.cloudConfig.template', 'spec.pools[].cloudConfig.template'],
    says: 'A template is one of cloudconfig/.',
    cel: { none: TEMPLATES },
  },
  {
    id: 'template-declaration',
    paths: ['spec.cloudConfig.values', 'spec.pools[].cloudConfig.values'],
    says: "The template's value declaration (cloudconfig/<template>/values.yaml) is valid.",
    cel: { none: TEMPLATES },
  },
  {
    id: 'template-value-known',
    paths: ['spec.cloudConfig.values', 'spec.pools[].cloudConfig.values'],
    says: 'Every cloud-config value is one every template takes or one the template declares.',
    cel: { none: TEMPLATES },
  },
  {
    id: 'template-value',
    paths: ['spec.cloudConfig.values', 'spec.pools[].cloudConfig.values'],
    says: 'A value the template declares has its declared type, pattern, enum and bounds.',
    cel: { none: TEMPLATES },
  },
  {
    id: 'template-value-required',
    paths: ['spec.cloudConfig.values', 'spec.pools[].cloudConfig.values'],
    says: 'A value the template requires is set (a template a pool renders requires it).',
    cel: {
      partly:
        "kubernetesVersion and bootstrapTokenSecretArn of the cluster's template (cel-template-rules.ts); a template's own values and a pool's template stay the reconciler's",
    },
  },
  {
    id: 'kubelet-pins',
    paths: ['spec.cloudConfig.values.kubeletSha256', 'spec.pools[].cloudConfig.values.kubeletSha256'],
    says: 'The kubelet pins cover every architecture a pool runs, or its nodes never join.',
    cel: { none: TEMPLATES },
  },
  {
    id: 'rollout-strategy-fields',
    paths: ['spec.pool.rollingUpdate', 'spec.pools[].rollingUpdate'],
    says: 'instanceRefresh applies only with strategy: instanceRefresh; maxBatchSize, minInstancesInService and waitOnResourceSignals only with strategy: rolling.',
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
  {
    id: 'instance-refresh-launch-template',
    paths: ['spec.pool.rollingUpdate.strategy', 'spec.pools[].rollingUpdate.strategy'],
    says: 'An instance refresh needs a launch template (not legacyLaunchConfiguration).',
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
  {
    id: 'pause-time-covers-boot',
    paths: ['spec.pool.rollingUpdate.pauseTime', 'spec.pools[].rollingUpdate.pauseTime'],
    says: 'With signals, pauseTime is at least the node ready timeout plus the boot margin.',
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
  {
    id: 'healthy-percentage',
    paths: [
      'spec.pool.rollingUpdate.instanceRefresh.maxHealthyPercentage',
      'spec.pools[].rollingUpdate.instanceRefresh.maxHealthyPercentage',
    ],
    says: 'maxHealthyPercentage is above 100 when the minimum is 100, and at most 100 above minHealthyPercentage.',
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
  {
    id: 'refresh-checkpoints',
    paths: ['spec.pool.rollingUpdate.instanceRefresh', 'spec.pools[].rollingUpdate.instanceRefresh'],
    says: 'Checkpoints ascend and end with 100; checkpointDelaySeconds needs checkpoints.',
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
  {
    id: 'refresh-alarms',
    paths: ['spec.pool.rollingUpdate.instanceRefresh.alarms', 'spec.pools[].rollingUpdate.instanceRefresh.alarms'],
    says: "An instance refresh's alarms are unique and at most AWS's limit.",
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
  {
    id: 'rollback-alarms',
    paths: ['spec.rollout.rollbackAlarms'],
    says: "Rollback alarms are unique and at most CloudFormation's rollback triggers per stack.",
    cel: { none: 'not stated in the CRD yet: the reconciler reports it' },
  },
] as const satisfies readonly ClusterRule[];
