import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { BoundedPattern, boundedPattern, MAX_VALUE_LENGTH, PatternError } from './bounded-regex';
import { Found } from '../rules/loose';
import { found } from '../rules/rule-registry';
import { CloudConfigValuesSchema } from '../schema/cloud-config-schema';

/**
 * Typed values per config template. Each template directory may hold a `values.yaml` next to its `template.yaml`
 * that declares the values the template takes (name, type, required or default, rules). The values that
 * worker-stacks itself reads (the API endpoint, the CA, the bootstrap-token secret ...) are typed in
 * lib/model/cluster/schema/cloud-config-schema.ts for every template; any other key of spec.cloudConfig.values must be declared by the
 * chosen template, and is checked against that declaration. So a template gains a kubelet setting by declaring
 * it here and using it; nothing in lib/ changes.
 */

/** Values every template gets, typed by the schema. */
export const CORE_VALUES: readonly string[] = Object.keys(CloudConfigValuesSchema.shape);
/** Values worker-stacks derives from the core ones for templates (lib/model/cloudconfig/render.ts). */
export const DERIVED_VALUES: readonly string[] = ['nodeLabelsFlag', 'nodeTaintsFlag', 'nodeTaintsByKey'];

export const VALUES_FILE = 'values.yaml';

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const ValueDeclarationSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z][A-Za-z0-9]*$/, 'a value name is lowerCamelCase (letters and digits)'),
    type: z.enum(['string', 'integer', 'boolean', 'list', 'map']),
    description: z.string().min(1),
    required: z.boolean().default(false),
    default: z.union([scalar, z.array(scalar), z.record(z.string(), scalar)]).optional(),
    /** string: a regular expression the whole value matches (list: each item; map: each value, and each key unless keyPattern). */
    pattern: z.string().optional(),
    /** map: a regular expression each key matches instead of `pattern` (keys and values often differ: `amd64` → a hash). */
    keyPattern: z.string().optional(),
    /** string or integer: the only values allowed. */
    enum: z.array(scalar).min(1).optional(),
    /** integer: inclusive bounds. */
    min: z.number().int().optional(),
    max: z.number().int().optional(),
    /**
     * string: it may hold newlines (no other control character), for a template that writes it only through the json
     * helper into YAML, where a newline cannot end anything (eks-al2023's containerdConfig, TOML of many lines).
     */
    multiline: z.boolean().default(false),
    /**
     * map: a value may also be a list of scalars or a map of scalars (one level, no deeper), for a template that
     * writes it only through the json helper into YAML (eks-al2023's kubeletConfig: evictionHard, allowedUnsafeSysctls).
     * Nested keys and strings match `pattern`. What each nested field must be is the rendered config's check (the
     * strict NodeConfig rules), which knows the kubelet's types.
     */
    nested: z.boolean().default(false),
  })
  .refine((v) => !(v.required && v.default !== undefined), {
    message: 'a value is either required or has a default, not both',
  })
  .refine((v) => v.keyPattern === undefined || v.type === 'map', {
    message: 'keyPattern is for a map value only',
    path: ['keyPattern'],
  })
  .refine((v) => !v.multiline || v.type === 'string', {
    message: 'multiline is for a string value only',
    path: ['multiline'],
  })
  .refine((v) => !v.nested || v.type === 'map', {
    message: 'nested is for a map value only',
    path: ['nested'],
  });

const DeclarationFileSchema = z.strictObject({ values: z.array(ValueDeclarationSchema).default([]) });

export type ValueDeclaration = z.output<typeof ValueDeclarationSchema>;

export interface TemplateValues {
  /** The declaration file, as shown in messages (`cloudconfig/<name>/values.yaml`), or undefined when there is none. */
  readonly file?: string;
  readonly values: readonly ValueDeclaration[];
  /** What is wrong with the declaration file itself (each `file: field: rule`); empty when it is usable. */
  readonly problems: readonly string[];
}

/**
 * One template's declaration from the text of its values.yaml (`shown` names that file in problems). Never throws: a
 * bad declaration comes back as problems. Reading the file is lib/model/cloudconfig/template-declarations.ts's.
 */
export function declarationFrom(text: string, shown: string): TemplateValues {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    return { file: shown, values: [], problems: [`${shown}: YAML error: ${(e as Error).message.split('\n')[0]}`] };
  }
  const parsed = DeclarationFileSchema.safeParse(raw ?? {});
  if (!parsed.success)
    return {
      file: shown,
      values: [],
      problems: parsed.error.issues.map((i) => `${shown}: ${i.path.join('.') || '(file)'}: ${i.message}`),
    };
  const problems: string[] = [];
  const seen = new Set<string>();
  parsed.data.values.forEach((v, i) => {
    const at = `${shown}: values.${i}`;
    if (seen.has(v.name)) problems.push(`${at}.name: ${v.name} is declared twice`);
    seen.add(v.name);
    if (DERIVED_VALUES.includes(v.name))
      problems.push(`${at}.name: ${v.name} is derived by worker-stacks, not taken from the cluster object`);
    // A core value is typed by the schema for every template; a declaration may describe it, never retype it. It may
    // say the template requires it (kubernetesVersion: the templates that install a kubelet; an EKS one does not).
    if (
      CORE_VALUES.includes(v.name) &&
      (v.default !== undefined ||
        v.multiline ||
        v.nested ||
        v.pattern ||
        v.keyPattern ||
        v.enum ||
        v.min !== undefined ||
        v.max !== undefined)
    ) {
      problems.push(
        `${at}: ${v.name} is typed by worker-stacks (docs/reference.md); give only name, type, description and required`,
      );
    }
    for (const field of ['pattern', 'keyPattern'] as const) {
      const source = v[field];
      if (source === undefined) continue;
      try {
        compiled(source);
      } catch (e) {
        if (!(e instanceof PatternError)) throw e;
        problems.push(
          `${at}.${field}: not a pattern worker-stacks matches (lib/model/cluster/values/bounded-regex.ts: linear time, the syntax RE2 and JavaScript share): ${e.message}`,
        );
      }
    }
    // Every string a template takes reaches a file on the node (a root shell script, TOML, YAML, a systemd unit):
    // the template says which strings it takes, so that no value can break out of the context it is written into.
    if (
      !CORE_VALUES.includes(v.name) &&
      v.pattern === undefined &&
      (v.type === 'list' || v.type === 'map' || (v.type === 'string' && v.enum === undefined))
    ) {
      problems.push(
        `${at}: ${v.name} is a ${v.type}${v.type === 'string' ? '' : ' of strings'} without a pattern${v.type === 'string' ? ' or enum' : ''}; declare the characters it may hold (e.g. pattern: "[a-z0-9.-]{1,63}"), so that no value can inject into the file it is rendered into`,
      );
    }
    if (v.default !== undefined) {
      const p = valueProblem(v, v.default);
      if (p) problems.push(`${at}.default: ${p}`);
    }
  });
  return { file: shown, values: parsed.data.values, problems };
}

const typeOfValue = (v: unknown) =>
  Array.isArray(v) ? 'a list' : v === null ? 'empty (null)' : typeof v === 'object' ? 'a map' : `a ${typeof v}`;

/** What is wrong with one value under its declaration, in words, or undefined. */
export function valueProblem(d: ValueDeclaration, v: unknown): string | undefined {
  const shown = typeof v === 'object' && v !== null ? '' : `${JSON.stringify(v)} `;
  switch (d.type) {
    case 'string':
      if (typeof v !== 'string')
        return `${shown}is ${typeOfValue(v)}, expected a string${typeof v === 'number' ? ' (quote it in YAML)' : ''}`;
      return stringProblem(d, v) ?? enumProblem(d, v);
    case 'integer':
      if (typeof v !== 'number' || !Number.isInteger(v))
        return `${shown}is ${typeof v === 'number' ? 'not a whole number' : typeOfValue(v)}, expected a whole number${typeof v === 'string' ? ' (remove the quotes)' : ''}`;
      if ((d.min !== undefined && v < d.min) || (d.max !== undefined && v > d.max))
        return `${v} is outside ${d.min ?? '…'}-${d.max ?? '…'}`;
      break;
    case 'boolean':
      if (typeof v !== 'boolean') return `${shown}is ${typeOfValue(v)}, expected true or false`;
      break;
    case 'list':
      if (!Array.isArray(v) || v.some((x) => typeof x === 'object' && x !== null))
        return `is ${typeOfValue(v)}, expected a list of strings, numbers or booleans`;
      for (const [i, x] of v.entries()) {
        const p = typeof x === 'string' ? stringProblem(d, x) : undefined;
        if (p) return `item ${i}: ${p}`;
      }
      break;
    case 'map':
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        return `is ${typeOfValue(v)}, expected a map of ${d.nested ? 'scalars, lists or maps' : 'strings, numbers or booleans'}`;
      for (const [k, x] of Object.entries(v)) {
        const p = stringProblem(d, k, d.keyPattern ?? d.pattern) ?? itemProblem(d, x);
        if (p) return `${JSON.stringify(k)}: ${p}`;
      }
      break;
  }
  return enumProblem(d, v);
}

const isScalar = (x: unknown) => typeof x !== 'object' || x === null;
const scalarProblem = (d: ValueDeclaration, x: unknown) => (typeof x === 'string' ? stringProblem(d, x) : undefined);

/**
 * One value of a map: a scalar; under `nested`, also a list of scalars or a map of scalars whose keys match `pattern`.
 * Deeper is refused: the json helper would write it, but no declared value needs it, and each level is one more shape
 * the template's readers must expect.
 */
function itemProblem(d: ValueDeclaration, x: unknown): string | undefined {
  if (isScalar(x)) return scalarProblem(d, x);
  if (!d.nested) return `is ${typeOfValue(x)}, expected a string, number or boolean`;
  const deeper = `is ${typeOfValue(x)} holding a map or list, expected strings, numbers or booleans in it (one level of nesting, no deeper)`;
  if (Array.isArray(x)) {
    if (!x.every(isScalar)) return deeper;
    for (const [i, y] of x.entries()) {
      const p = scalarProblem(d, y);
      if (p) return `item ${i}: ${p}`;
    }
    return undefined;
  }
  const entries = Object.entries(x as Record<string, unknown>);
  if (!entries.every(([, y]) => isScalar(y))) return deeper;
  for (const [k, y] of entries) {
    const p = stringProblem(d, k) ?? scalarProblem(d, y);
    if (p) return `${JSON.stringify(k)}: ${p}`;
  }
  return undefined;
}

function enumProblem(d: ValueDeclaration, v: unknown): string | undefined {
  return d.enum && !d.enum.some((e) => e === v)
    ? `${JSON.stringify(v)} is not allowed (expected one of ${d.enum.map((e) => JSON.stringify(e)).join(', ')})`
    : undefined;
}

const patterns = new Map<string, BoundedPattern>();
function compiled(source: string): BoundedPattern {
  let p = patterns.get(source);
  if (!p) patterns.set(source, (p = boundedPattern(source)));
  return p;
}

/**
 * One string of a template value (a string value, an item of a list, a key or value of a map): at most
 * MAX_VALUE_LENGTH characters, no control character (a newline ends a shell command, a TOML string, a systemd
 * directive), and the declared pattern, matched in linear time. A pattern that does not compile was reported on the
 * declaration, which stops every value of the template.
 */
function stringProblem(d: ValueDeclaration, v: string, pattern: string | undefined = d.pattern): string | undefined {
  if (v.length > MAX_VALUE_LENGTH) return `has ${v.length} characters, at most ${MAX_VALUE_LENGTH} allowed`;
  // eslint-disable-next-line no-control-regex -- the point: control characters are refused (a newline only in a multiline one)
  if ((d.multiline ? /[\x00-\x09\x0b-\x1f\x7f-\x9f]/ : /[\x00-\x1f\x7f-\x9f]/).test(v))
    return `${JSON.stringify(v)} has a control character (${d.multiline ? 'a tab, carriage return, escape ...' : 'a newline, tab, escape ...'}), which no template value may hold`;
  if (pattern === undefined) return undefined;
  let p: BoundedPattern;
  try {
    p = compiled(pattern);
  } catch {
    return undefined;
  }
  return p.test(v) ? undefined : `${JSON.stringify(v)} does not match ${pattern}`;
}

/**
 * How the cluster's template is used, when spec.pools name templates of their own (issue 32 item 8: a value is
 * required only by the template that uses it).
 */
export interface TemplateUse {
  /** False when no pool renders this template (every pool names another): its required values are not required. @default true */
  readonly rendered?: boolean;
  /** The declarations of the pools' own templates: a cluster value one of them takes is theirs to inherit, not unknown. @default none */
  readonly otherTemplates?: readonly TemplateValues[];
}

/**
 * The problems of spec.cloudConfig.values under the chosen template's declaration: keys that are neither core
 * nor declared, declared values of the wrong type or out of their rules, required ones that are missing. `at` is the
 * cloudConfig the values are reported under (`spec.pools[1].cloudConfig` for a pool's, merged over the cluster's).
 */
export function templateValueProblems(
  rawValues: unknown,
  template: string,
  decl: TemplateValues,
  at = 'spec.cloudConfig',
  use: TemplateUse = {},
): Found[] {
  const base = `${at}.values`;
  if (decl.problems.length)
    return [
      found(
        'template-declaration',
        `${at}.template`,
        `template ${template} has a bad value declaration: ${decl.problems.join('; ')}`,
      ),
    ];
  const values =
    rawValues && typeof rawValues === 'object' && !Array.isArray(rawValues)
      ? (rawValues as Record<string, unknown>)
      : {};
  const declared = new Map(decl.values.map((d) => [d.name, d]));
  const out: Found[] = [];
  const key = (k: string) => (/^[A-Za-z_$][\w$]*$/.test(k) ? `${base}.${k}` : `${base}[${JSON.stringify(k)}]`);
  for (const k of Object.keys(values).sort()) {
    if (CORE_VALUES.includes(k)) continue; // the schema checks these
    const d = declared.get(k);
    if (!d && use.otherTemplates?.some((t) => t.values.some((x) => x.name === k))) continue; // a pool's template's
    if (!d) {
      const takes = decl.values.filter((x) => !CORE_VALUES.includes(x.name)).map((x) => x.name);
      out.push(
        found(
          'template-value-known',
          key(k),
          `unknown value: template ${template} does not declare it (${takes.length ? `it also takes ${takes.join(', ')}` : 'it takes only the values every template takes'}; see docs/reference.md)`,
        ),
      );
      continue;
    }
    const p = valueProblem(d, values[k]);
    if (p) out.push(found('template-value', key(k), p));
  }
  for (const d of decl.values) {
    if (use.rendered !== false && d.required && values[d.name] === undefined) {
      out.push(
        found(
          'template-value-required',
          key(d.name),
          `required field is missing (template ${template} needs it: ${d.description})`,
        ),
      );
    }
  }
  return out;
}

/** The declared defaults of the values the object leaves out, added to the (already valid) values. */
export function withValueDefaults<T extends Record<string, unknown>>(values: T, decl: TemplateValues): T {
  const out: Record<string, unknown> = { ...values };
  for (const d of decl.values) if (out[d.name] === undefined && d.default !== undefined) out[d.name] = d.default;
  return out as T;
}
