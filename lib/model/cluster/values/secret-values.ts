import { formatPath } from '../rules/format-path';
import { arr, Loose, obj } from '../rules/loose';

/**
 * The secrets a cluster's template values name. A value is a string the node config is rendered from; whichever
 * template declares it (bootstrapTokenSecretArn for every template, or a template's own value: a registry
 * credential, say) and wherever it is set (spec.cloudConfig.values or a pool's spec.pools[i].cloudConfig.values), a
 * Secrets Manager ARN in it is a secret the cluster's nodes would read with their role. So every one is found here,
 * by what it is rather than by the value's name, and checked as the cluster's own (references.ts): a template that
 * gains a secret value needs no change in lib/ to have it checked, and a pool cannot name what its cluster may not.
 */

/** One Secrets Manager ARN a value names, at the value's field path (an item of a list or map at its own). */
export interface SecretReference {
  readonly path: string;
  readonly arn: string;
}

// An ARN anywhere in the string (a value may carry one inside a flag or a URL): up to a character no ARN holds.
const SECRET_ARN = /arn:[a-z-]+:secretsmanager:[^\s"'`,;]*/g;

function walk(v: unknown, at: (string | number)[], out: SecretReference[]): void {
  if (typeof v === 'string') {
    for (const m of v.matchAll(SECRET_ARN)) out.push({ path: formatPath(at), arn: m[0] });
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => walk(x, [...at, i], out));
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) walk(x, [...at, k], out);
  }
}

/** Every secret the values of the cluster and of each of its pools name, in the object's order. */
export function secretReferences(spec: Loose): SecretReference[] {
  const out: SecretReference[] = [];
  walk(obj(obj(spec.cloudConfig).values), ['spec', 'cloudConfig', 'values'], out);
  arr(spec.pools).forEach((p, i) =>
    walk(obj(obj(obj(p).cloudConfig).values), ['spec', 'pools', i, 'cloudConfig', 'values'], out),
  );
  return out;
}
