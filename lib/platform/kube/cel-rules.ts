import { fmt, quoted } from '../../model/cluster/schema/openapi';
import { LIMITS } from '../../model/cluster/rules/limits';
import { archRule } from './cel-arch-rules';
import { indexed, named, PlacedValidation, unique, v } from './cel-build';
import { POOL_RULES, poolSizeRules } from './cel-pool-rules';
import { templateRequiredRules } from './cel-template-rules';
import { LISTENER_CEL_RULES } from './cel-listener-rules';
import { NETWORK_CEL_RULES } from './cel-network-rules';

/**
 * The cross-field rules of lib/model/cluster (cross-field.ts, node-ports.ts, references.ts) as CEL, so that the API
 * server refuses a bad WorkerCluster at `kubectl apply`, with the file store's message where CEL can build it. Each is
 * the twin of a named rule (rule-registry.ts) and its message ends with the rule's id; the pools', network's and
 * listeners' rules are in cel-pool-rules.ts, cel-network-rules.ts and cel-listener-rules.ts.
 * Each rule sits on the schema node (`at`) nearest to the fields it reads, so the error's path names the list
 * item (`spec.listeners[2].certificateArn`); a rule over a whole list names the item in its message.
 *
 * What CEL cannot say stays with the reconciler, which reports it in the object's conditions with the same
 * message as `validate` (docs/kubernetes.md lists them): whether the template exists in
 * cloudconfig/ and its own values (the templates are files of the daemon, not of the API server), a listener
 * certificate's region and account (below), and anything that needs synthesis (cdk-nag).
 */

/** List and map sizes: they bound the CEL cost estimate. Each is at or above the AWS limit the rules check. */
export const CAPS: Readonly<Record<string, { maxItems?: number; maxProperties?: number }>> = {
  'spec.network.availabilityZones': { maxItems: 32 },
  'spec.network.subnetIds': { maxItems: 32 },
  'spec.pool.instanceTypes': { maxItems: 64 },
  'spec.loadBalancer.allowedCidrs': { maxItems: 64 },
  'spec.loadBalancer.subnetIds': { maxItems: 32 },
  'spec.securityGroupRules': { maxItems: LIMITS.inboundRulesPerSecurityGroup },
  'spec.listeners': { maxItems: 64 },
  'spec.cloudConfig.values.nodeLabels': { maxProperties: 64 },
  'spec.cloudConfig.values.nodeTaints': { maxItems: 32 },
  'spec.cloudConfig.values.registryMirrors': { maxItems: 16 },
  'spec.tags': { maxProperties: 64 },
  'spec.rollout.maintenanceWindows': { maxItems: 16 },
  'spec.rollout.rollbackAlarms': { maxItems: 5 },
  'spec.pool.rollingUpdate.instanceRefresh.alarms': { maxItems: 10 },
  // Above the limit, so that the rule on it (cel-pool-rules.ts) gives validate's message.
  'spec.pools': { maxItems: 32 },
  'spec.pools[].instanceTypes': { maxItems: 64 },
  'spec.pools[].subnetIds': { maxItems: 32 },
  'spec.pools[].labels': { maxProperties: 64 },
  'spec.pools[].taints': { maxItems: 50 },
  'spec.pools[].rollingUpdate.instanceRefresh.alarms': { maxItems: 10 },
  'spec.listeners[].pools': { maxItems: 32 },
  'spec.securityGroupRules[].pools': { maxItems: 32 },
};

/** An ARN's region, account and partition against the cluster's (lib/model/cluster/rules/references.ts). */
const ARN = `'^arn:[a-z-]+:[a-z0-9-]+:[a-z0-9-]*:[0-9]{12}:'`;
const REGION_OK = `self.region.matches('^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]$')`;
const PARTITION = `(self.region.startsWith('cn-') ? 'aws-cn' : self.region.startsWith('us-gov-') ? 'aws-us-gov' : self.region.matches('^[a-z]{2}-iso-') ? 'aws-iso' : self.region.matches('^[a-z]{2}-iso[a-z]-') ? 'aws-iso-' + self.region.substring(6, 7) : 'aws')`;
function arnRules(arn: string, what: string, fieldPath: string): PlacedValidation[] {
  // The value is optional (an EKS object has no bootstrap secret): a rule that read it absent would fail to evaluate.
  const guard = `!has(${arn}) || !${REGION_OK} || !self.account.matches('^[0-9]{12}$') || !${arn}.matches(${ARN}) || `;
  return [
    v(
      'spec',
      `${guard}${arn}.split(':')[3] == self.region`,
      {
        expr: `${quoted(`${what} is in region `)} + ${arn}.split(':')[3] + ', the cluster in ' + self.region + ${quoted(` (use ${what} of `)} + self.region + ')'`,
      },
      fieldPath,
    ),
    v(
      'spec',
      `${guard}${arn}.split(':')[4] == self.account`,
      {
        expr: `${quoted(`${what} is in account `)} + ${arn}.split(':')[4] + ', the cluster in ' + self.account + ${quoted(` (use ${what} of account `)} + self.account + ')'`,
      },
      fieldPath,
    ),
    v(
      'spec',
      `${guard}${arn}.split(':')[1] == ${PARTITION}`,
      {
        expr: `${quoted(`${what} is in partition `)} + ${arn}.split(':')[1] + ', but region ' + self.region + ' is in ' + ${PARTITION}`,
      },
      fieldPath,
    ),
  ];
}

/**
 * rollout-rules.ts rollbackAlarmProblems: each rollback alarm in the cluster's region, account and partition. A rule
 * over the list (at most 5 alarms) names the first bad item in its message, as the other list rules do.
 */
function alarmRules(): PlacedValidation[] {
  const list = 'self.rollout.rollbackAlarms';
  const shaped = `a.matches('^arn:[a-z-]+:cloudwatch:[a-z0-9-]+:[0-9]{12}:alarm:')`;
  const guard = `!${REGION_OK} || !self.account.matches('^[0-9]{12}$') || !has(self.rollout) || !has(${list}) || `;
  const rule = (part: number, expected: string, text: string, ...args: string[]) => {
    const bad = `${list}.filter(a, ${shaped} && a.split(':')[${part}] != ${expected})[0]`;
    return v(
      'spec',
      `${guard}${list}.all(a, !${shaped} || a.split(':')[${part}] == ${expected})`,
      {
        expr: fmt(
          `spec.rollout.rollbackAlarms[%d] ${text}`,
          `${list}.indexOf(${bad})`,
          `${bad}.split(':')[${part}]`,
          ...args,
        ),
      },
      '.rollout.rollbackAlarms',
    );
  };
  return [
    rule(
      3,
      'self.region',
      "alarm is in region %s, not the cluster's %s (CloudFormation reads rollback alarms in the stack's region)",
      'self.region',
    ),
    rule(4, 'self.account', "alarm is in account %s, not the cluster's %s", 'self.account'),
    rule(1, PARTITION, 'alarm is in partition %s, but region %s is in %s', 'self.region', PARTITION),
  ];
}

/** references.ts clusterSecretPrefix: the secret's name starts with worker-stacks/<metadata.name>/. */
function secretScope(): PlacedValidation {
  const arn = 'self.spec.cloudConfig.values.bootstrapTokenSecretArn';
  const name = `${arn}.substring(${arn}.indexOf(':secret:') + 8)`;
  const prefix = `'worker-stacks/' + self.metadata.name + '/'`;
  return v(
    '',
    `!has(${arn}) || !${arn}.matches('^arn:[a-z-]+:secretsmanager:[a-z0-9-]*:[0-9]{12}:secret:.') || (${name}.startsWith(${prefix}) && size(${name}) > size(${prefix}))`,
    {
      expr: `'the secret "' + ${name} + '" is not one of this cluster\\'s: its name must start with ' + ${prefix} + ' (the nodes of cluster ' + self.metadata.name + ' may read only those; create the secret under that name)'`,
    },
    '.spec.cloudConfig.values.bootstrapTokenSecretArn',
  );
}

export const CROSS_FIELD_RULES: readonly PlacedValidation[] = [
  // metadata.name becomes part of the stack name: a DNS label of at most 40 characters (rules.ts dnsLabel).
  v(
    '',
    `self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= 40`,
    {
      expr: `'"' + self.metadata.name + ${quoted(`" is not a DNS label (lower-case letters, digits and '-', starting and ending with a letter or digit, at most 40 characters)`)}`,
    },
    '.metadata.name',
  ),

  // cross-field.ts poolProblems
  ...poolSizeRules('spec.pool'),
  named(
    'launch-configuration-one-type',
    v(
      'spec.pool',
      '!has(self.legacyLaunchConfiguration) || !self.legacyLaunchConfiguration || size(self.instanceTypes) <= 1',
      { text: 'a launch configuration takes exactly one instance type (mixed instances need a launch template)' },
      '.instanceTypes',
    ),
  ),
  named(
    'instance-types-limit',
    v('spec.pool.instanceTypes', `size(self) <= ${LIMITS.instanceTypesPerGroup}`, {
      expr: fmt(`%d instance types exceed the AWS limit of ${LIMITS.instanceTypesPerGroup} per group`, 'size(self)'),
    }),
  ),
  named(
    'instance-types-unique',
    unique('spec.pool.instanceTypes', 'scalar', indexed('spec.pool.instanceTypes'), 'instance types must be unique'),
  ),
  named('one-architecture', archRule()),

  // pool-rules.ts: each of spec.pools as spec.pool above, and the rules of named pools and listener pools
  ...POOL_RULES,

  ...NETWORK_CEL_RULES,

  ...LISTENER_CEL_RULES,

  // references.ts
  ...arnRules(
    'self.cloudConfig.values.bootstrapTokenSecretArn',
    'the secret',
    '.cloudConfig.values.bootstrapTokenSecretArn',
  ).map((r) => named('reference-in-cluster', r)),
  named('secret-scope', secretScope()),
  // template-values.ts: the typed values a template requires (kubernetesVersion, bootstrapTokenSecretArn).
  ...templateRequiredRules(),
  ...alarmRules().map((r) => named('reference-in-cluster', r)),
  // A listener certificate's region and account: one rule over the list would have to format the ARN's parts of the
  // first bad listener, which the cost estimator cannot bound; the reconciler reports it (docs/kubernetes.md).

  // cross-field.ts taintProblems, tagProblems
  named(
    'taints-unique',
    unique(
      'spec.cloudConfig.values.nodeTaints',
      (a) => `${a}.key + '|' + ${a}.effect`,
      indexed('spec.cloudConfig.values.nodeTaints'),
      'taints (same key and effect; the kubelet refuses them) must be unique',
    ),
  ),
  named(
    'tags-limit',
    v('spec.tags', `size(self) <= ${LIMITS.userTagsPerStack}`, {
      expr: fmt(
        `%d tags, at most ${LIMITS.userTagsPerStack} allowed (AWS takes 50 per resource, and worker-stacks adds its own)`,
        'size(self)',
      ),
    }),
  ),
];
