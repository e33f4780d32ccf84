import { z } from 'zod';
import { CelRule, openApiRuleOf } from '../../model/cluster/schema/openapi';

/**
 * zod schema → a Kubernetes structural OpenAPI v3 schema (what a CRD's openAPIV3Schema must be). zod's JSON
 * Schema is the starting point; what the API server does not take is rewritten, and every field rule registered
 * in lib/model/cluster/schema/openapi.ts (integer bounds, patterns, CEL) is added where the field is:
 * - `additionalProperties: false` goes (the API server prunes unknown fields; `kubectl apply` warns or, with
 *   --validate=strict, refuses them); `additionalProperties: {}` beside properties (a catchall) becomes
 *   `x-kubernetes-preserve-unknown-fields`;
 * - no `default`: the reconciler applies zod's defaults to both stores alike, so the API server stores what the user
 *   wrote (as the file does), and a new release's default reaches objects stored before it;
 * - `const` becomes a one-value `enum`; `propertyNames` (a record's key rule) becomes CEL over the map's keys;
 * - a union of strings takes the one rule set registered for the union.
 */

/** A generated document (a CRD, a schema) as callers get it: the CLI prints it, the tests read it at any depth. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an emitted Kubernetes document read at any depth by its readers; the generator itself edits SchemaNode
export type Json = Record<string, any>;

/** A node of an openAPIV3Schema while the generator edits it: the keywords it reads are typed, the rest pass through. */
export interface SchemaNode {
  [keyword: string]: unknown;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: boolean | SchemaNode;
  required?: unknown[];
  'x-kubernetes-validations'?: unknown[];
}

/** A CEL rule as a CRD carries it (x-kubernetes-validations). */
export interface Validation {
  readonly rule: string;
  readonly message?: string;
  readonly messageExpression?: string;
  /** JSONPath-like path of the field the error is reported on, relative to where the rule is. */
  readonly fieldPath?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** Keywords a structural schema may hold (apiextensions JSONSchemaProps, less the ones we never emit). */
const KEPT = new Set([
  'type',
  'format',
  'description',
  'enum',
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'properties',
  'items',
  'additionalProperties',
  'nullable',
  'x-kubernetes-validations',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-int-or-string',
]);

/** Replaces the key variable `self` of a rule by `expr` (rules are written over `self`; no message literal holds the word). */
function rebind(rule: string, expr: string): string {
  return rule.replace(/\bself\b/g, expr);
}

/** A rule on each key of a map, as one rule on the map that names the first offending key. */
export function keyValidation(r: CelRule): Validation {
  const offender = `self.filter(k, !(${rebind(r.rule, 'k')}))[0]`;
  return { rule: `self.all(k, ${rebind(r.rule, 'k')})`, messageExpression: rebind(r.messageExpression, offender) };
}

function applyRule(zodSchema: z.core.$ZodType, js: SchemaNode): void {
  const rule = openApiRuleOf(zodSchema);
  if (rule?.intOrString) {
    // A count or a percentage: no type (the API server takes an integer or a string), each checked by its own keywords.
    delete js.anyOf;
    delete js.type;
    js['x-kubernetes-int-or-string'] = true;
  }
  if (rule) {
    if (js.anyOf) {
      // A union of strings (an IPv4 or IPv6 CIDR): the union's own rules replace its branches'.
      delete js.anyOf;
      js.type = 'string';
    }
    if (rule.type) js.type = rule.type;
    for (const k of ['minimum', 'maximum', 'pattern', 'minLength', 'maxLength'] as const)
      if (rule[k] !== undefined) js[k] = rule[k];
    if (rule.cel?.length)
      js['x-kubernetes-validations'] = rule.cel.map((c) => ({ rule: c.rule, messageExpression: c.messageExpression }));
  }
  const def = (zodSchema as z.core.$ZodType & { _zod: { def: { type: string; keyType?: z.core.$ZodType } } })._zod.def;
  if (def.type === 'record' && def.keyType) {
    const keyRule = openApiRuleOf(def.keyType);
    if (keyRule?.cel?.length)
      js['x-kubernetes-validations'] = [...(js['x-kubernetes-validations'] ?? []), ...keyRule.cel.map(keyValidation)];
  }
}

function clean(js: SchemaNode, at: string): SchemaNode {
  if (js.const !== undefined) {
    js.enum = [js.const];
    delete js.const;
  }
  if (js.properties) {
    const extra = js.additionalProperties;
    if (extra !== undefined && extra !== false && !(typeof extra === 'object' && Object.keys(extra).length > 0))
      js['x-kubernetes-preserve-unknown-fields'] = true;
    delete js.additionalProperties;
    for (const [k, v] of Object.entries(js.properties)) js.properties[k] = clean(v, `${at}.${k}`);
  } else if (js.additionalProperties && typeof js.additionalProperties === 'object') {
    js.additionalProperties = clean(js.additionalProperties, `${at}[*]`);
  } else if (js.type === 'object' && js.additionalProperties === undefined) {
    js['x-kubernetes-preserve-unknown-fields'] = true;
  }
  if (js.items) js.items = clean(js.items, `${at}[]`);
  if (js.required && js.required.length === 0) delete js.required;
  const kept: SchemaNode = Object.fromEntries(Object.entries(js).filter(([k]) => KEPT.has(k)));
  if (kept.type === undefined && !kept['x-kubernetes-preserve-unknown-fields'] && !kept['x-kubernetes-int-or-string'])
    throw new Error(
      `structural schema: ${at || '<root>'} has no type (zod emitted a shape the CRD generator does not convert)`,
    );
  return kept;
}

/** The structural schema of a zod schema. `io: 'input'` for what users write (defaults optional), 'output' for status. */
export function structuralSchema(schema: z.ZodType, io: 'input' | 'output'): SchemaNode {
  // Our schemas have no boolean subschemas (`true`/`false` in place of a schema), so every node is an object.
  const js = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    override: (ctx) => applyRule(ctx.zodSchema, ctx.jsonSchema as SchemaNode),
  }) as SchemaNode;
  delete js.$schema;
  return clean(js, '');
}
