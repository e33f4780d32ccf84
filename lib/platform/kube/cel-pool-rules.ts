import { LIMITS } from '../../model/cluster/rules/limits';
import { fmt, quoted } from '../../model/cluster/schema/openapi';
import {
  IMAGE_SOURCE,
  SUBNET_OUTSIDE,
  TAINTS_UNIQUE,
  TAKES_NO_POOL,
  UNKNOWN_POOL,
} from '../../model/cluster/pools/pool-rules';
import { DEFAULT_POOL } from '../../model/cluster/pools/pools';
import { archGiven, archMix } from './cel-arch-rules';
import { bind, bound, firstBad, indexed, named, PlacedValidation, unique, v } from './cel-build';

/**
 * lib/model/cluster/pools/pool-rules.ts as CEL: what applies to spec.pool applies to each spec.pools[i] (a rule on the item,
 * so that the API server names `spec.pools[2].minSize`), and the rules over pools and listeners. A rule whose message
 * names an item inside a pool (`spec.pools[1].instanceTypes[3]`) sits on the list of pools: a rule on the inner list
 * cannot know which pool it is in. What CEL cannot read stays with the reconciler, as for the cluster's own: the pool's
 * template and its values (spec.pools[].cloudConfig.values keeps unknown fields, which CEL does not see).
 */

const REPELLING = `['NoSchedule', 'NoExecute']`;

/**
 * Every pool's `inner` list (or every listener's) is distinct by `key`: a rule on the outer list whose message names
 * both items as `validate` does: `spec.pools[1].subnetIds[2] duplicates spec.pools[1].subnetIds[0] (subnets must be unique)`.
 */
function nestedUnique(
  at: string,
  inner: string,
  key: ((a: string) => string) | 'scalar',
  why: string,
): PlacedValidation {
  const keys = (p: string) => (key === 'scalar' ? `${p}.${inner}` : `${p}.${inner}.map(a, ${key('a')})`);
  const ok = (p: string) => `!has(${p}.${inner}) || ${bind('ks', keys(p), 'ks.all(k, ks.exists_one(j, j == k))')}`;
  const item = `${at}[%d].${inner}[%d]`;
  const message = bound(
    'i',
    firstBad('self', 'p', ok('p')),
    bound(
      'ks',
      keys('self[i]'),
      bound(
        't',
        'ks.filter(k, !ks.exists_one(j, j == k))',
        fmt(
          `${item} duplicates ${item} (${why} must be unique)`,
          'i',
          'ks.lastIndexOf(t[size(t) - 1])',
          'i',
          'ks.indexOf(t[0])',
        ),
      ),
    ),
  );
  return v(at, `self.all(p, ${ok('p')})`, { expr: message });
}

const CLUSTER_TAINTS = 'self.cloudConfig.values.nodeTaints';
const clashes = (t: string) => `${CLUSTER_TAINTS}.exists(c, c.key == ${t}.key && c.effect == ${t}.effect)`;
const taintsOk = (p: string) => `!has(${p}.taints) || !${p}.taints.exists(t, ${clashes('t')})`;
const subnetsOk = (p: string) => `!has(${p}.subnetIds) || ${p}.subnetIds.all(s, s in self.network.subnetIds)`;
const POOL_NAMES = `(has(self.pools) ? self.pools.map(p, p.name) : [${quoted(DEFAULT_POOL)}])`;
const namesOk = (l: string) => `!has(${l}.pools) || ${l}.pools.all(n, n in ns)`;
/** Some pool takes a listener that names none: one without a NoSchedule/NoExecute taint of its own (pools.ts listenerPools). */
const OPEN = `(!has(self.pools) || self.pools.exists(p, !has(p.taints) || !p.taints.exists(t, t.effect in ${REPELLING})))`;

/**
 * pool-rules.ts namedPools: every `spec.<list>[i].pools[j]` names a pool of this cluster (checked once the cluster has
 * pools at all), and names it once. `what` is the uniqueness message's subject.
 */
function namedPoolRules(list: 'listeners' | 'securityGroupRules', what: string): PlacedValidation[] {
  const known = v(
    'spec',
    `!has(self.${list}) || (!has(self.pool) && !has(self.pools)) || ${bind('ns', POOL_NAMES, `self.${list}.all(l, ${namesOk('l')})`)}`,
    {
      expr: bound(
        'ns',
        POOL_NAMES,
        bound(
          'i',
          firstBad(`self.${list}`, 'l', namesOk('l')),
          bound(
            'j',
            firstBad(`self.${list}[i].pools`, 'n', 'n in ns'),
            fmt(`spec.${list}[%d].pools[%d] "%s" ${UNKNOWN_POOL}`, 'i', 'j', `self.${list}[i].pools[j]`),
          ),
        ),
      ),
    },
    `.${list}`,
  );
  return [
    named('pool-names-known', known),
    named('pool-names-once', nestedUnique(`spec.${list}`, 'pools', 'scalar', what)),
  ];
}

export const POOL_RULES: readonly PlacedValidation[] = [
  // Exactly one of spec.pool and spec.pools.
  named(
    'pool-or-pools',
    v(
      'spec',
      'has(self.pool) != has(self.pools)',
      {
        expr: `has(self.pool) ? ${quoted('give spec.pool or spec.pools, not both (spec.pool is the pool named default: move it into spec.pools with name: default)')} : ${quoted('give spec.pool (one pool) or spec.pools (named pools)')}`,
      },
      '.pool',
    ),
  ),

  // What applies to spec.pool, on each pool (cel-rules.ts has spec.pool's).
  ...poolSizeRules('spec.pools[]'),
  ...['spec.pool', 'spec.pools[]']
    .map((at) => v(at, 'has(self.machineImage) != has(self.imageChannel)', { text: IMAGE_SOURCE }, '.machineImage'))
    .map((r) => named('image-source', r)),
  named(
    'launch-configuration-one-type',
    v(
      'spec.pools[]',
      '!has(self.legacyLaunchConfiguration) || !self.legacyLaunchConfiguration || size(self.instanceTypes) <= 1',
      { text: 'a launch configuration takes exactly one instance type (mixed instances need a launch template)' },
      '.instanceTypes',
    ),
  ),
  named(
    'instance-types-limit',
    v('spec.pools[].instanceTypes', `size(self) <= ${LIMITS.instanceTypesPerGroup}`, {
      expr: fmt(`%d instance types exceed the AWS limit of ${LIMITS.instanceTypesPerGroup} per group`, 'size(self)'),
    }),
  ),
  named('instance-types-unique', nestedUnique('spec.pools', 'instanceTypes', 'scalar', 'instance types')),
  named('one-architecture', archMix()),

  // What only named pools have.
  named(
    'pools-limit',
    v('spec.pools', `size(self) <= ${LIMITS.poolsPerCluster}`, {
      expr: fmt(
        `%d pools exceed the limit of ${LIMITS.poolsPerCluster} per cluster (each pool but default is a CloudFormation stack of its own, and every stack counts against the account's stack quota in the region)`,
        'size(self)',
      ),
    }),
  ),
  named(
    'pool-names-unique',
    unique('spec.pools', (a) => `${a}.name`, indexed('spec.pools', '.name'), 'pool names must be unique'),
  ),
  named('pool-architecture', archGiven()),
  named(
    'on-demand-base-within-max',
    v(
      'spec.pools[]',
      '!has(self.capacity) || !has(self.capacity.onDemandBaseCapacity) || self.capacity.onDemandBaseCapacity <= self.maxSize',
      {
        expr: fmt(
          '%d is above maxSize %d: the on-demand base is part of the group, at most its maximum size',
          'self.capacity.onDemandBaseCapacity',
          'self.maxSize',
        ),
      },
      '.capacity.onDemandBaseCapacity',
    ),
  ),
  named(
    'launch-configuration-no-capacity',
    v(
      'spec.pools[]',
      '!has(self.legacyLaunchConfiguration) || !self.legacyLaunchConfiguration || !has(self.capacity)',
      {
        text: 'a launch configuration has no mixed instances policy, so no on-demand base or spot (remove legacyLaunchConfiguration, or capacity)',
      },
      '.capacity',
    ),
  ),
  named(
    'pool-subnets-of-cluster',
    v(
      'spec',
      `!has(self.pools) || self.pools.all(p, ${subnetsOk('p')})`,
      {
        expr: bound(
          'i',
          firstBad('self.pools', 'p', subnetsOk('p')),
          bound(
            'j',
            firstBad('self.pools[i].subnetIds', 's', 's in self.network.subnetIds'),
            fmt(`spec.pools[%d].subnetIds[%d] %s ${SUBNET_OUTSIDE}`, 'i', 'j', 'self.pools[i].subnetIds[j]'),
          ),
        ),
      },
      '.pools',
    ),
  ),
  named('subnets-unique', nestedUnique('spec.pools', 'subnetIds', 'scalar', 'subnets')),
  named(
    'taints-unique',
    nestedUnique('spec.pools', 'taints', (a) => `${a}.key + '|' + ${a}.effect`, TAINTS_UNIQUE),
  ),
  named(
    'taints-unique',
    v(
      'spec',
      `!has(self.pools) || !has(${CLUSTER_TAINTS}) || self.pools.all(p, ${taintsOk('p')})`,
      {
        expr: bound(
          'i',
          firstBad('self.pools', 'p', taintsOk('p')),
          bound(
            'j',
            firstBad('self.pools[i].taints', 't', `!${clashes('t')}`),
            bound(
              't',
              'self.pools[i].taints[j]',
              fmt(
                `spec.pools[%d].taints[%d] duplicates spec.cloudConfig.values.nodeTaints[%d] (${TAINTS_UNIQUE} must be unique)`,
                'i',
                'j',
                `${CLUSTER_TAINTS}.map(c, c.key == t.key && c.effect == t.effect).indexOf(true)`,
              ),
            ),
          ),
        ),
      },
      '.pools',
    ),
  ),

  // Listeners and pools.
  ...namedPoolRules('listeners', 'pools of a listener'),
  ...namedPoolRules('securityGroupRules', 'pools of a rule'),
  named(
    'listener-takes-a-pool',
    v(
      'spec',
      `!has(self.listeners) || self.listeners.all(l, has(l.pools)) || ${OPEN}`,
      { expr: fmt(`spec.listeners[%d] ${TAKES_NO_POOL}`, 'self.listeners.map(l, has(l.pools)).indexOf(false)') },
      '.listeners',
    ),
  ),
];

/** A pool's sizes, on spec.pool and on each of spec.pools (one text for both: the rules are the same). */
export function poolSizeRules(at: 'spec.pool' | 'spec.pools[]'): PlacedValidation[] {
  return [
    named(
      'pool-size-order',
      v(
        at,
        'self.minSize <= self.maxSize',
        { expr: fmt('%d is greater than maxSize %d', 'self.minSize', 'self.maxSize') },
        '.minSize',
      ),
    ),
    named(
      'pool-size-order',
      v(
        at,
        '!has(self.desiredCapacity) || (self.desiredCapacity >= self.minSize && self.desiredCapacity <= self.maxSize)',
        {
          expr: fmt('%d is outside minSize..maxSize (%d..%d)', 'self.desiredCapacity', 'self.minSize', 'self.maxSize'),
        },
        '.desiredCapacity',
      ),
    ),
    named(
      'min-in-service-below-max',
      v(
        at,
        '!has(self.rollingUpdate) || !has(self.rollingUpdate.minInstancesInService) || self.rollingUpdate.minInstancesInService < self.maxSize',
        {
          expr: fmt(
            '%d must be less than maxSize %d, or no instance could ever be replaced',
            'self.rollingUpdate.minInstancesInService',
            'self.maxSize',
          ),
        },
        '.rollingUpdate.minInstancesInService',
      ),
    ),
  ];
}
