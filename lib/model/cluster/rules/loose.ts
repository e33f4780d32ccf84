/**
 * Reading a raw object before (or without) its schema: the rules over several fields report while other fields have
 * type errors, so every problem comes out in one round. Each accessor gives an empty or undefined value for anything
 * of another shape instead of throwing.
 */

/** A raw object's fields. */
export type Loose = Record<string, unknown>;
/**
 * One problem a rule found: the field path and the rule's message; `rule` is the id of a named rule
 * (rule-registry.ts), which the message then ends with as `(rule <id>)`.
 */
export type Found = { path: string; message: string; rule?: string };

export const obj = (v: unknown): Loose => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Loose) : {});
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
