import fc from 'fast-check';
import { rawExample } from './clusters';
import { Json } from './json';

/**
 * apps-eu1 with generated pools (two to four, with or without `default`), each made of what changes what a pool's stack
 * holds: nodes at creation or none (the group's signals and the grant aws-cdk-lib adds for them), a rolling update with
 * or without signals or an instance refresh, a launch template, mixed instances, spot capacity or a launch
 * configuration (its own instance profile for the shared role), drain on or off (a lifecycle hook), a security-group
 * rule narrowed to it (its own group) from a CIDR, its own nodes or the load balancer. The listeners take generated
 * pools. Raw: validate it.
 */
export function arbitraryPoolsObject(): fc.Arbitrary<Json> {
  const pool = fc.record({
    minSize: fc.integer({ min: 0, max: 2 }),
    desiredCapacity: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
    update: fc.constantFrom('signals', 'no signals', 'instance refresh'),
    launch: fc.constantFrom('template', 'mixed', 'capacity', 'launch configuration'),
    drain: fc.boolean(),
    narrowed: fc.constantFrom('none', 'cidr', 'self', 'load balancer'),
  });
  return fc
    .record({
      names: fc.shuffledSubarray(['default', 'spot', 'arm', 'gpu', 'batch'], { minLength: 2, maxLength: 4 }),
      pools: fc.array(pool, { minLength: 4, maxLength: 4 }),
      httpPools: fc.integer({ min: 1, max: 4 }),
    })
    .map(({ names, pools, httpPools }) => {
      const raw = rawExample('apps-eu1');
      const base = raw.spec.pools[0];
      raw.spec.pools = names.map((name, i) => poolOf(name, pools[i], base.machineImage));
      raw.spec.securityGroupRules = [
        ...(raw.spec.securityGroupRules as Json[]).filter((r) => !r.pools),
        ...names.flatMap((name, i) => narrowedRule(name, i, pools[i].narrowed)),
      ];
      raw.spec.listeners = (raw.spec.listeners as Json[]).map(({ pools: _, ...l }) =>
        l.name === 'ingress-http' ? { ...l, pools: names.slice(0, Math.min(httpPools, names.length)) } : l,
      );
      return raw;
    });
}

type PoolChoice = {
  minSize: number;
  desiredCapacity?: number;
  update: string;
  launch: string;
  drain: boolean;
};

function poolOf(name: string, c: PoolChoice, machineImage: string): Json {
  const legacy = c.launch === 'launch configuration';
  // A launch configuration takes no instance refresh: it rolls with signals instead.
  const update = legacy && c.update === 'instance refresh' ? 'signals' : c.update;
  return {
    name,
    instanceTypes: c.launch === 'template' || legacy ? ['m6i.large'] : ['m6i.large', 'm6a.large'],
    machineImage,
    minSize: c.minSize,
    maxSize: 4,
    ...(c.desiredCapacity === undefined ? {} : { desiredCapacity: Math.max(c.desiredCapacity, c.minSize) }),
    rollingUpdate:
      update === 'instance refresh'
        ? { strategy: 'instanceRefresh' }
        : { strategy: 'rolling', waitOnResourceSignals: update === 'signals' },
    drain: { enabled: c.drain },
    ...(legacy ? { legacyLaunchConfiguration: true } : {}),
    ...(c.launch === 'capacity'
      ? { capacity: { onDemandBaseCapacity: 0, onDemandPercentageAboveBaseCapacity: 0 } }
      : {}),
    labels: { 'node.kubernetes.io/pool': name },
  };
}

function narrowedRule(name: string, i: number, narrowed: string): Json[] {
  const source =
    narrowed === 'cidr'
      ? { cidr: '10.30.0.0/16' }
      : narrowed === 'self'
        ? { self: true }
        : narrowed === 'load balancer'
          ? { loadBalancer: true }
          : undefined;
  if (!source) return [];
  // A port of its own (validation refuses two rules of the same protocol, ports and source, whatever pools they name).
  const port = (narrowed === 'load balancer' ? 30844 : 7000) + i;
  return [{ description: `${narrowed} to pool ${name}`, protocol: 'tcp', port, source, pools: [name] }];
}
