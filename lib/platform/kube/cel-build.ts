import { withRuleId } from '../../core/errors';
import { fmt, quoted } from '../../model/cluster/schema/openapi';
import { RuleId } from '../../model/cluster/rules/rule-registry';
import { Validation } from './structural';

/**
 * Building blocks of the CRDs' CEL rules (cel-rules.ts, policy-crd.ts): a rule placed at a schema node, a let for
 * CEL, and uniqueness over a list. What keeps a rule cheap in the API server is in docs/kubernetes-operations.md
 * "Admission cost of the CRD's rules": read each field once.
 */

export interface PlacedValidation extends Validation {
  /** Schema path: `spec.pool`, `spec.listeners[]` (each item), '' for the object itself. */
  readonly at: string;
}

/** A rule placed at `at`, with a fixed message (`text`) or a CEL one (`expr`). */
export const v = (
  at: string,
  rule: string,
  message: { text: string } | { expr: string },
  fieldPath?: string,
  reason?: Validation['reason'],
): PlacedValidation => ({
  at,
  rule,
  ...('text' in message ? { message: message.text } : { messageExpression: message.expr }),
  ...(fieldPath ? { fieldPath } : {}),
  ...(reason ? { reason } : {}),
});

/**
 * `placed` as the CEL twin of the named rule `rule` (lib/model/cluster/rules/rule-registry.ts): its message ends with
 * `(rule <id>)`, as validate's does, so that the API server and validate name the same rule.
 */
export function named(rule: RuleId, placed: PlacedValidation): PlacedValidation {
  const suffix = ` (rule ${rule})`;
  if (placed.messageExpression === undefined) return { ...placed, message: withRuleId(placed.message ?? '', rule) };
  // Into the template of each format() (fmt): the API server's cost estimate takes a formatted string as unbounded,
  // and refuses the CRD when anything is appended to one. A message without format() is literals and bounded fields.
  const formats = /("(?:[^"\\]|\\.)*)"\.format\(/g;
  const messageExpression = formats.test(placed.messageExpression)
    ? placed.messageExpression.replace(formats, (_m, open: string) => `${open}${suffix}".format(`)
    : `(${placed.messageExpression}) + ${quoted(suffix)}`;
  return { ...placed, messageExpression };
}

/**
 * CEL has no `let` in the API server's environment (cel.bind is not in it), and an expression read inside a loop is
 * evaluated again on every turn. A comprehension over a one-item list binds `name` to `value` once: a list a rule
 * derives (the items' keys, say) is derived once instead of once per item. `bind` is for a rule (a bool), `bound` for
 * a message (any value).
 */
export const bind = (name: string, value: string, body: string) => `[${value}].all(${name}, ${body})`;
export const bound = (name: string, value: string, body: string) => `[${value}].map(${name}, ${body})[0]`;

/**
 * Every item of the list at `at` is distinct: two items are the same when their `key`s (one scalar per item: a
 * string or an integer) are equal; `why` is the file store's parenthesis. The message names the later item and the
 * first, as `validate` does: `spec.listeners[3].port duplicates spec.listeners[1].port (listener ports must be unique)`.
 * The keys are derived once (`bind`), then compared as plain values: comparing the items field by field inside the
 * n² loop read each field n times per item, most of edge-ap1's admission cost (bench/RESULTS.md "Admission cost").
 */
export function unique(
  at: string,
  key: ((a: string) => string) | 'scalar',
  item: string,
  why: string,
): PlacedValidation {
  const keys = key === 'scalar' ? 'self' : `self.map(a, ${key('a')})`;
  const rule = (ks: string) => `${ks}.all(k, ${ks}.exists_one(j, j == k))`;
  // The keys that have a twin: with one pair (the usual mistake) the first and the last are that pair.
  const twins = 'ks.filter(k, !ks.exists_one(j, j == k))';
  const message = bound(
    't',
    twins,
    fmt(
      `${item.replace('#', '%d')} duplicates ${item.replace('#', '%d')} (${why})`,
      'ks.lastIndexOf(t[size(t) - 1])',
      'ks.indexOf(t[0])',
    ),
  );
  return v(
    at,
    key === 'scalar' ? rule('self') : bind('ks', keys, rule('ks')),
    { expr: bound('ks', keys, message) },
    // Not FieldValueDuplicate: the API server prints that reason without the message.
  );
}
/** `spec.listeners[#].port`: the item path, # for its index. */
export const indexed = (path: string, suffix = '') => `${path}[#]${suffix}`;

/** The index of the first item of `list` for which `ok` (over `x`) is false: CEL's indexOf on a list of booleans. */
export const firstBad = (list: string, x: string, ok: string) => `${list}.map(${x}, ${ok}).indexOf(false)`;
