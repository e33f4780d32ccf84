import { duplicatesBy } from '../rules/duplicates';
import { architectureOf } from './instance-architecture';
import { LIMITS } from '../rules/limits';
import { rawPools } from './raw-pools';
import { CloudConfigValuesSchema, POOL_OWN_VALUES } from '../schema/cloud-config-schema';
import { arr, Found, int, Loose, obj, str } from '../rules/loose';
import { found } from '../rules/rule-registry';

/** The values every template takes that only the cluster sets (cloud-config-schema.ts POOL_OWN_VALUES are the pool's). */
const CLUSTER_ONLY_VALUES = Object.keys(CloudConfigValuesSchema.shape).filter(
  (k) => k !== 'nodeLabels' && k !== 'nodeTaints' && !(POOL_OWN_VALUES as readonly string[]).includes(k),
);

/**
 * The rules of the worker pools, as one pure function over the raw object (it still reports while other fields have
 * type errors, every problem at once): what applies to `spec.pool` applies to each `spec.pools[i]` at its own path
 * (sizes, instance types and their architecture, launch configuration), and what only named pools have (names,
 * architecture, subnets, taints, capacity, their own template) and what refers to them (listener pools). The CRD states
 * the same rules in CEL (lib/platform/kube/cel-pool-rules.ts) with the same paths and messages.
 */

/** Taint effects that keep ordinary pods off a node (pools.ts listenerPools). */
const REPELLING = ['NoSchedule', 'NoExecute'];
export const TAINTS_UNIQUE = 'taints (same key and effect; the kubelet refuses them)';
/** Why a pool's subnet must be the cluster's (the message of validate and of the CRD). */
export const SUBNET_OUTSIDE = "is not one of spec.network.subnetIds (a pool's subnets are a subset of the cluster's)";
export const UNKNOWN_POOL = 'is not a pool of this cluster (a name of spec.pools, or default with spec.pool)';
export const TAKES_NO_POOL =
  'takes no pool: every pool has a NoSchedule or NoExecute taint of its own (name the pools its target group takes in its pools)';

const taintKey = (t: unknown) => {
  const x = obj(t);
  return str(x.key) !== undefined && str(x.effect) !== undefined ? [x.key, x.effect] : undefined;
};

export function poolProblems(spec: Loose, templates: ReadonlySet<string>): Found[] {
  const out: Found[] = [];
  if (Object.keys(spec).length > 0 && (spec.pool === undefined) === (spec.pools === undefined))
    out.push(
      found(
        'pool-or-pools',
        'spec.pool',
        spec.pool === undefined
          ? 'give spec.pool (one pool) or spec.pools (named pools)'
          : 'give spec.pool or spec.pools, not both (spec.pool is the pool named default: move it into spec.pools with name: default)',
      ),
    );
  for (const { pool, at } of rawPools(spec)) out.push(...onePool(pool, at));
  out.push(...namedPoolProblems(spec, templates));
  out.push(...listenerPoolProblems(spec));
  return out;
}

/** Rule image-source: a pool's image is an AMI id or a channel's pinned release, never both, never neither. */
export const IMAGE_SOURCE =
  'set exactly one of machineImage (an AMI id) and imageChannel (a WorkerImageChannel whose release the daemon pins)';

/** What applies to every pool, spec.pool and spec.pools[i] alike. */
function onePool(pool: Loose, at: string): Found[] {
  const out: Found[] = [];
  const min = int(pool.minSize);
  const max = int(pool.maxSize);
  const desired = int(pool.desiredCapacity);
  if (min !== undefined && max !== undefined && min > max)
    out.push(found('pool-size-order', `${at}.minSize`, `${min} is greater than maxSize ${max}`));
  if (desired !== undefined && ((min !== undefined && desired < min) || (max !== undefined && desired > max)))
    out.push(
      found('pool-size-order', `${at}.desiredCapacity`, `${desired} is outside minSize..maxSize (${min}..${max})`),
    );
  const minInService = int(obj(pool.rollingUpdate).minInstancesInService);
  if (minInService !== undefined && max !== undefined && minInService >= max)
    out.push(
      found(
        'min-in-service-below-max',
        `${at}.rollingUpdate.minInstancesInService`,
        `${minInService} must be less than maxSize ${max}, or no instance could ever be replaced`,
      ),
    );
  if ((pool.machineImage === undefined) === (pool.imageChannel === undefined))
    out.push(found('image-source', `${at}.machineImage`, IMAGE_SOURCE));
  const types = arr(pool.instanceTypes);
  if (types.length > LIMITS.instanceTypesPerGroup)
    out.push(
      found(
        'instance-types-limit',
        `${at}.instanceTypes`,
        `${types.length} instance types exceed the AWS limit of ${LIMITS.instanceTypesPerGroup} per group`,
      ),
    );
  const legacy = pool.legacyLaunchConfiguration === true;
  if (legacy && types.length > 1)
    out.push(
      found(
        'launch-configuration-one-type',
        `${at}.instanceTypes`,
        'a launch configuration takes exactly one instance type (mixed instances need a launch template)',
      ),
    );
  out.push(...duplicatesBy('instance-types-unique', types, str, (i) => `${at}.instanceTypes[${i}]`, 'instance types'));
  // One AMI serves every type of the group: an arm64 image does not boot on x86_64 and the other way round.
  const archs = types.map((t) => (typeof t === 'string' ? architectureOf(t) : undefined));
  const first = archs.findIndex((a) => a !== undefined);
  const other = archs.findIndex((a) => a !== undefined && a !== archs[first]);
  if (first >= 0 && other >= 0)
    out.push(
      found(
        'one-architecture',
        `${at}.instanceTypes[${other}]`,
        `${String(types[other])} is ${archs[other]}, ${String(types[first])} is ${archs[first]}: one machine image boots one architecture (give instance types of one architecture; another architecture needs its own pool and AMI)`,
      ),
    );
  const arch = str(pool.architecture);
  if (arch === 'arm64' || arch === 'x86_64')
    archs.forEach((a, i) => {
      if (a !== undefined && a !== arch)
        out.push(
          found(
            'pool-architecture',
            `${at}.instanceTypes[${i}]`,
            `${String(types[i])} is ${a}, not the pool's architecture ${arch} (its machine image's): give instance types that run ${arch}`,
          ),
        );
    });
  const capacity = obj(pool.capacity);
  const base = int(capacity.onDemandBaseCapacity);
  if (base !== undefined && max !== undefined && base > max)
    out.push(
      found(
        'on-demand-base-within-max',
        `${at}.capacity.onDemandBaseCapacity`,
        `${base} is above maxSize ${max}: the on-demand base is part of the group, at most its maximum size`,
      ),
    );
  if (legacy && pool.capacity !== undefined)
    out.push(
      found(
        'launch-configuration-no-capacity',
        `${at}.capacity`,
        'a launch configuration has no mixed instances policy, so no on-demand base or spot (remove legacyLaunchConfiguration, or capacity)',
      ),
    );
  return out;
}

/** What only the items of spec.pools have: names, their number, subnets, taints, their own template. */
function namedPoolProblems(spec: Loose, templates: ReadonlySet<string>): Found[] {
  if (!Array.isArray(spec.pools)) return [];
  const pools = spec.pools.map(obj);
  const out: Found[] = [];
  if (pools.length > LIMITS.poolsPerCluster)
    out.push(
      found(
        'pools-limit',
        'spec.pools',
        `${pools.length} pools exceed the limit of ${LIMITS.poolsPerCluster} per cluster (each pool but default is a CloudFormation stack of its own, and every stack counts against the account's stack quota in the region)`,
      ),
    );
  out.push(
    ...duplicatesBy(
      'pool-names-unique',
      pools,
      (p) => str(obj(p).name),
      (i) => `spec.pools[${i}].name`,
      'pool names',
    ),
  );
  const clusterSubnets = new Set(arr(obj(spec.network).subnetIds).filter((s) => typeof s === 'string'));
  const clusterTaints = arr(obj(obj(spec.cloudConfig).values).nodeTaints);
  pools.forEach((pool, i) => {
    const at = `spec.pools[${i}]`;
    const subnets = arr(pool.subnetIds);
    subnets.forEach((s, j) => {
      if (typeof s === 'string' && Array.isArray(obj(spec.network).subnetIds) && !clusterSubnets.has(s))
        out.push(found('pool-subnets-of-cluster', `${at}.subnetIds[${j}]`, `${s} ${SUBNET_OUTSIDE}`));
    });
    out.push(...duplicatesBy('subnets-unique', subnets, str, (j) => `${at}.subnetIds[${j}]`, 'subnets'));
    const taints = arr(pool.taints);
    out.push(...duplicatesBy('taints-unique', taints, taintKey, (j) => `${at}.taints[${j}]`, TAINTS_UNIQUE));
    // The node registers the cluster's taints and the pool's: one key and effect in both is a taint twice.
    const clusterKeys = clusterTaints.map((t) => JSON.stringify(taintKey(t)));
    taints.forEach((t, j) => {
      const k = taintKey(t);
      const c = k === undefined ? -1 : clusterKeys.indexOf(JSON.stringify(k));
      if (c >= 0)
        out.push(
          found(
            'taints-unique',
            `${at}.taints[${j}]`,
            `duplicates spec.cloudConfig.values.nodeTaints[${c}] (${TAINTS_UNIQUE} must be unique)`,
          ),
        );
    });
    const cc = obj(pool.cloudConfig);
    const template = str(cc.template);
    if (template !== undefined && !templates.has(template))
      out.push(
        found(
          'template-known',
          `${at}.cloudConfig.template`,
          `unknown template ${JSON.stringify(template)} (known: ${[...templates].sort().join(', ') || 'none'})`,
        ),
      );
    const values = obj(cc.values);
    for (const [key, own] of [
      ['nodeLabels', 'labels'],
      ['nodeTaints', 'taints'],
    ])
      if (values[key] !== undefined)
        out.push(
          found(
            'pool-values-own-fields',
            `${at}.cloudConfig.values.${key}`,
            `a pool's ${own} are ${at}.${own} (added to spec.cloudConfig.values.${key}); move them there`,
          ),
        );
    for (const key of CLUSTER_ONLY_VALUES)
      if (values[key] !== undefined)
        out.push(
          found(
            'cluster-only-values',
            `${at}.cloudConfig.values.${key}`,
            `is the cluster's alone (every pool joins the same API server the same way): set it in spec.cloudConfig.values; a pool may set ${POOL_OWN_VALUES.join(', ')} and its template's own values`,
          ),
        );
  });
  return out;
}

/** Each pool a listener names exists; a listener that names none takes at least one pool. */
function listenerPoolProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const pools = rawPools(spec);
  // spec.pool is the pool named default (rawPools names it so).
  const names = new Set(pools.map((p) => p.name).filter((n) => n !== undefined));
  // A pool takes a listener's traffic by default unless a taint of its own repels ordinary pods (the cluster's taints
  // are on every pool alike, so the listener's pods tolerate them).
  const open = pools.some(({ pool }) => !arr(pool.taints).some((t) => REPELLING.includes(str(obj(t).effect) ?? '')));
  arr(spec.listeners).forEach((raw, i) => {
    const l = obj(raw);
    if (l.pools === undefined) {
      if (pools.length > 0 && !open) out.push(found('listener-takes-a-pool', `spec.listeners[${i}]`, TAKES_NO_POOL));
      return;
    }
    out.push(...namedPools(l.pools, `spec.listeners[${i}]`, names, pools.length > 0, 'pools of a listener'));
  });
  // A security-group rule that names pools goes on those pools' own groups (network-schema.ts SecurityGroupRuleSchema.pools).
  arr(spec.securityGroupRules).forEach((raw, i) => {
    const r = obj(raw);
    if (r.pools !== undefined)
      out.push(...namedPools(r.pools, `spec.securityGroupRules[${i}]`, names, pools.length > 0, 'pools of a rule'));
  });
  return out;
}

/** `<at>.pools`: each a pool of this cluster (once the cluster has pools to check against), each once. */
function namedPools(raw: unknown, at: string, names: ReadonlySet<unknown>, known: boolean, what: string): Found[] {
  const named = arr(raw);
  const out: Found[] = [];
  named.forEach((n, j) => {
    if (typeof n === 'string' && known && !names.has(n))
      out.push(found('pool-names-known', `${at}.pools[${j}]`, `${JSON.stringify(n)} ${UNKNOWN_POOL}`));
  });
  out.push(...duplicatesBy('pool-names-once', named, str, (j) => `${at}.pools[${j}]`, what));
  return out;
}
