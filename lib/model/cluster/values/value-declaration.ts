import { z } from 'zod';
import { BoundedPattern, boundedPattern, MAX_VALUE_LENGTH } from './bounded-regex';

/** One value a template declares in its values.yaml (template-values.ts reads the file), and what a value must be under it. */

const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const ValueDeclarationSchema = z
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

export type ValueDeclaration = z.output<typeof ValueDeclarationSchema>;

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
export function compiled(source: string): BoundedPattern {
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
