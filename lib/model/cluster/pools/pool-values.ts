import { CORE_VALUES, templateValueProblems, TemplateValues } from '../values/template-values';
import { Found, obj } from '../rules/loose';

/**
 * A pool's cloud-config values (spec.pools[i].cloudConfig.values) are merged over the cluster's for that pool's node
 * config (lib/model/cloudconfig/render.ts poolView), with the pool's template or the cluster's. The merged values must
 * pass what the cluster's pass: the typed values every template takes (the schema types the ones a pool may set,
 * cloud-config-schema.ts POOL_OWN_VALUES, at the pool's path) and the template's own declaration (template-values.ts), here. A problem is reported at the pool's path when the pool causes it: a value the pool
 * sets, or anything under a template of the pool's own; what the pool inherits unchanged the cluster's check reports.
 */

export interface PoolValuesInput {
  /** The raw spec.pools[i].cloudConfig. */
  readonly cloudConfig: unknown;
  /** `spec.pools[i]`. */
  readonly at: string;
  /** The raw spec.cloudConfig. */
  readonly cluster: unknown;
  /** The pool's template (its own, else the cluster's) when it exists. */
  readonly template?: string;
  /** That template's declaration. */
  readonly decl?: TemplateValues;
}

/** The template problems of one pool's merged values, at the pool's paths. */
export function poolValueProblems(input: PoolValuesInput): Found[] {
  const own = obj(obj(input.cloudConfig).values);
  if (input.template === undefined || input.decl === undefined) return [];
  const clusterCc = obj(input.cluster);
  const inherited =
    obj(input.cloudConfig).template === undefined || obj(input.cloudConfig).template === clusterCc.template;
  // Under a template of its own, the pool inherits only the cluster's values that template takes: a value of the
  // cluster's template alone (Flatcar's awsCliImage under an AL2023 pool) is not the pool's, neither unknown to it nor
  // checked against it. What the pool sets itself is checked in full.
  const takes = new Set([...CORE_VALUES, ...input.decl.values.map((d) => d.name)]);
  const fromCluster = Object.entries(obj(clusterCc.values)).filter(([k]) => inherited || takes.has(k));
  const merged = { ...Object.fromEntries(fromCluster), ...own };
  const base = `${input.at}.cloudConfig`;
  const found = templateValueProblems(merged, input.template, input.decl, base).filter((p) => {
    if (!inherited) return true;
    // Under the cluster's template, only what the pool changes is the pool's problem.
    const key = Object.keys(own).find(
      (k) => p.path === `${base}.values.${k}` || p.path === `${base}.values[${JSON.stringify(k)}]`,
    );
    return key !== undefined;
  });
  return found;
}

/** The pool's values with its template's declared defaults for what neither it nor the cluster sets. */
export function withPoolValueDefaults(
  own: Record<string, unknown>,
  clusterValues: Record<string, unknown>,
  decl: TemplateValues,
): Record<string, unknown> {
  const out = { ...own };
  for (const d of decl.values)
    if (out[d.name] === undefined && clusterValues[d.name] === undefined && d.default !== undefined)
      out[d.name] = d.default;
  return out;
}
