import { Found, Loose, obj } from './loose';
import { found, RuleId } from './rule-registry';

/**
 * The items of `items` whose key (`key`; undefined: not compared) an earlier item has: each a problem of the named
 * rule `rule` at the later item, naming the first (`spec.listeners[3].port duplicates spec.listeners[1].port`).
 */
export function duplicates(
  rule: RuleId,
  items: unknown[],
  key: (x: Loose) => unknown,
  at: (i: number) => string,
  what: string,
): Found[] {
  return duplicatesBy(rule, items, (raw) => key(obj(raw)), at, what);
}

/** The same, `key` read of each item as it is (a string, an object that may not be one). */
export function duplicatesBy(
  rule: RuleId,
  items: unknown[],
  key: (x: unknown) => unknown,
  at: (i: number) => string,
  what: string,
): Found[] {
  const first = new Map<string, number>();
  const out: Found[] = [];
  items.forEach((raw, i) => {
    const k = key(raw);
    if (k === undefined) return;
    const id = JSON.stringify(k);
    const j = first.get(id);
    if (j === undefined) first.set(id, i);
    else out.push(found(rule, at(i), `duplicates ${at(j)} (${what} must be unique)`));
  });
  return out;
}
