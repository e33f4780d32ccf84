import { z } from 'zod';

/**
 * What a field rule looks like to the Kubernetes API server. The rules in rules.ts are zod refinements, which
 * JSON Schema cannot see; each one registers here what the CRD's structural schema says instead (integer bounds,
 * a pattern, a length, CEL), so the API server refuses what `validate` refuses, from the same definitions.
 * `lib/platform/kube/crd.ts` reads this registry; nothing else does.
 */

/** One CEL rule on the field's value (`self`). */
export interface CelRule {
  /** CEL over `self`, true when the value is fine. */
  readonly rule: string;
  /** A CEL string expression naming the value, as the file store's message does. */
  readonly messageExpression: string;
}

export interface OpenApiRule {
  /** `integer` for whole numbers. @default the JSON Schema type zod emits */
  readonly type?: 'integer';
  readonly minimum?: number;
  readonly maximum?: number;
  /** A regular expression both JavaScript and Go's RE2 read the same way. */
  readonly pattern?: string;
  readonly minLength?: number;
  /** Also bounds the CEL cost estimate of every rule that reads the string. */
  readonly maxLength?: number;
  readonly cel?: readonly CelRule[];
  /**
   * A count or a string (`3` or `"10%"`): `x-kubernetes-int-or-string`, the one union a structural schema has; the
   * API server then checks `minimum`/`maximum` on integers and `pattern`/`maxLength` on strings.
   */
  readonly intOrString?: true;
}

export const openApiRules = z.registry<OpenApiRule>();

/** The rule registered for a schema or the schema it was cloned from (`.meta()` and `.describe()` clone). */
export function openApiRuleOf(schema: z.core.$ZodType): OpenApiRule | undefined {
  for (let s: z.core.$ZodType | undefined = schema; s; s = s._zod.parent) {
    const rule = openApiRules.get(s);
    if (rule) return rule;
  }
  return undefined;
}

/** A CEL string literal (CEL reads JSON's escapes). */
export function quoted(text: string): string {
  return JSON.stringify(text);
}

export function cel(rule: string, messageExpression: string): CelRule {
  return { rule, messageExpression };
}

/**
 * A CEL message built with `format`: `fmt('%d is greater than maxSize %d', 'self.minSize', 'self.maxSize')`.
 * Not `string(n) + '...'`: the API server's cost estimator takes `string()` of a number for a string as long as
 * a request, and refuses the CRD; `format` it prices by its arguments.
 */
export function fmt(template: string, ...args: string[]): string {
  return args.length ? `${quoted(template)}.format([${args.join(', ')}])` : quoted(template);
}
