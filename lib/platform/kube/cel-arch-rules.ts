import { ARM64_FAMILY, INSTANCE_FAMILY } from '../../model/cluster/pools/instance-architecture';
import { fmt, quoted } from '../../model/cluster/schema/openapi';
import { bind, bound, firstBad, PlacedValidation, v } from './cel-build';

// The CEL twins of the architecture rules (instance-architecture.ts; rules one-architecture and pool-architecture):
// spec.pool's instance types, and each of spec.pools'.

/** An instance type the rule knows the architecture of, whether it is arm64, and its architecture's name. */
const known = (t: string) => `(!${t}.startsWith('mac') && ${t}.matches(${quoted(INSTANCE_FAMILY.source)}))`;
const arm = (t: string) => `${t}.matches(${quoted(ARM64_FAMILY.source)})`;
const archOf = (t: string) => `(${arm(t)} ? 'arm64' : 'x86_64')`;

/** cross-field.ts architectureOf: the instance types of the pool (those the rule knows) are of one architecture. */
export function archRule(): PlacedValidation {
  const first = `self.filter(t, ${known('t')})[0]`;
  const other = `self.filter(t, ${known('t')} && ${arm('t')} != ${arm(first)})[0]`;
  return v(
    'spec.pool.instanceTypes',
    `!self.exists(t, ${known('t')}) || self.all(t, !${known('t')} || ${arm('t')} == ${arm(first)})`,
    {
      expr: fmt(
        'spec.pool.instanceTypes[%d] %s is %s, %s is %s: one machine image boots one architecture (give instance types of one architecture; another architecture needs its own pool and AMI)',
        `self.indexOf(${other})`,
        other,
        archOf(other),
        first,
        archOf(first),
      ),
    },
  );
}

/** instance-architecture.ts: the instance types of each pool (those the rule knows) are of one architecture. */
export function archMix(): PlacedValidation {
  const ok = (p: string) =>
    `!${p}.instanceTypes.exists(t, ${known('t')}) || ${bind('f', `${p}.instanceTypes.filter(t, ${known('t')})[0]`, `${p}.instanceTypes.all(t, !${known('t')} || ${arm('t')} == ${arm('f')})`)}`;
  const message = bound(
    'i',
    firstBad('self', 'p', ok('p')),
    bound(
      'ts',
      'self[i].instanceTypes',
      bound(
        'f',
        `ts.filter(t, ${known('t')})[0]`,
        bound(
          'o',
          `ts.filter(t, ${known('t')} && ${arm('t')} != ${arm('f')})[0]`,
          fmt(
            'spec.pools[%d].instanceTypes[%d] %s is %s, %s is %s: one machine image boots one architecture (give instance types of one architecture; another architecture needs its own pool and AMI)',
            'i',
            'ts.indexOf(o)',
            'o',
            archOf('o'),
            'f',
            archOf('f'),
          ),
        ),
      ),
    ),
  );
  return v('spec.pools', `self.all(p, ${ok('p')})`, { expr: message });
}

/** A pool's architecture (its machine image's) is one every instance type the rule knows runs. */
export function archGiven(): PlacedValidation {
  const ok = (p: string) =>
    `!has(${p}.architecture) || ${p}.instanceTypes.all(t, !${known('t')} || ${archOf('t')} == ${p}.architecture)`;
  const message = bound(
    'i',
    firstBad('self', 'p', ok('p')),
    bound(
      'a',
      'self[i].architecture',
      bound(
        'o',
        `self[i].instanceTypes.filter(t, ${known('t')} && ${archOf('t')} != a)[0]`,
        fmt(
          "spec.pools[%d].instanceTypes[%d] %s is %s, not the pool's architecture %s (its machine image's): give instance types that run %s",
          'i',
          'self[i].instanceTypes.indexOf(o)',
          'o',
          archOf('o'),
          'a',
          'a',
        ),
      ),
    ),
  );
  return v('spec.pools', `self.all(p, ${ok('p')})`, { expr: message });
}
