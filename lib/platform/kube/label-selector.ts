import { UsageError } from '../../core/errors';

/**
 * Kubernetes label selectors as `-l` and the API server read them (k8s.io/apimachinery/pkg/labels): equality terms
 * (`k=v`, `k==v`, `k!=v`), set terms (`k in (a,b)`, `k notin (a,b)`), existence (`k`, `!k`), joined by commas (an
 * AND). Parsed once, so that a shard's store matches exactly what its list and watch select, a shard's Lease is
 * named from one normal form, and two shards can be proven disjoint before either starts.
 */
export type SelectorOp = 'in' | 'notin' | 'exists' | '!';

export interface Requirement {
  readonly key: string;
  readonly op: SelectorOp;
  /** Sorted, distinct; empty for exists and !. `k=v` is `k in (v)`, `k!=v` is `k notin (v)`. */
  readonly values: readonly string[];
}

export class LabelSelector {
  private constructor(
    /** Sorted by key, then operator: the normal form. */
    public readonly requirements: readonly Requirement[],
  ) {}

  /** Parses `-l`; a bad term is a UsageError naming it. The empty string selects everything. */
  public static parse(text: string | undefined): LabelSelector {
    const reqs = splitTerms(text ?? '').map(parseTerm);
    return new LabelSelector(
      reqs.sort(
        (a, b) =>
          a.key.localeCompare(b.key) ||
          a.op.localeCompare(b.op) ||
          a.values.join(',').localeCompare(b.values.join(',')),
      ),
    );
  }

  public get empty(): boolean {
    return this.requirements.length === 0;
  }

  /** The normal form: the same selector however it was written (order, spaces, `==`) gives the same string. */
  public toString(): string {
    return this.requirements.map(show).join(',');
  }

  /** Does an object with these labels match? (`!=` and `notin` match an object without the key, as in Kubernetes.) */
  public matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    const l = labels ?? {};
    return this.requirements.every((r) => {
      const has = Object.prototype.hasOwnProperty.call(l, r.key);
      switch (r.op) {
        case 'in':
          return has && r.values.includes(l[r.key]);
        case 'notin':
          return !has || !r.values.includes(l[r.key]);
        case 'exists':
          return has;
        case '!':
          return !has;
      }
    });
  }

  /**
   * Could one object match both selectors? Decided per key, exactly: the requirements of both on a key are
   * satisfiable together unless one says absent and another needs a value, or the allowed values (the
   * intersection of every `in`) are all excluded (by `notin`). Keys no selector names are free.
   */
  public overlaps(other: LabelSelector): boolean {
    const byKey = new Map<string, Requirement[]>();
    for (const r of [...this.requirements, ...other.requirements]) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    for (const reqs of byKey.values()) {
      const absent = reqs.some((r) => r.op === '!');
      const present = reqs.some((r) => r.op === 'exists' || r.op === 'in');
      if (absent && present) return false;
      const ins = reqs.filter((r) => r.op === 'in');
      if (ins.length === 0) continue;
      const excluded = new Set(reqs.filter((r) => r.op === 'notin').flatMap((r) => r.values));
      const allowed = ins.map((r) => r.values).reduce((a, b) => a.filter((v) => b.includes(v)));
      if (!allowed.some((v) => !excluded.has(v))) return false;
    }
    return true;
  }
}

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkKey(key: string, term: string): string {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (!NAME.test(name) || (prefix !== undefined && (!PREFIX.test(prefix) || prefix.length > 253))) {
    throw new UsageError(
      `-l ${JSON.stringify(term)}: ${JSON.stringify(key)} is not a label key ([prefix/]name, name of at most 63 letters, digits, -, _, .)`,
    );
  }
  return key;
}

function checkValue(value: string, term: string): string {
  if (value !== '' && !NAME.test(value))
    throw new UsageError(
      `-l ${JSON.stringify(term)}: ${JSON.stringify(value)} is not a label value (at most 63 letters, digits, -, _, ., starting and ending alphanumeric)`,
    );
  return value;
}

/** Commas separate terms, except inside the parentheses of a set. */
function splitTerms(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  const terms = out.map((t) => t.trim());
  if (terms.length === 1 && terms[0] === '') return [];
  const blank = terms.findIndex((t) => t === '');
  if (blank >= 0) throw new UsageError(`-l ${JSON.stringify(text)}: term ${blank + 1} is empty`);
  return terms;
}

function parseTerm(term: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
  if (set) {
    const values = [...new Set(set[3].split(',').map((v) => checkValue(v.trim(), term)))].sort();
    return { key: checkKey(set[1], term), op: set[2] as 'in' | 'notin', values };
  }
  const eq = /^([^!=\s]+)\s*(==|=|!=)\s*([^=!\s]*)$/.exec(term);
  if (eq) return { key: checkKey(eq[1], term), op: eq[2] === '!=' ? 'notin' : 'in', values: [checkValue(eq[3], term)] };
  if (term.startsWith('!')) return { key: checkKey(term.slice(1).trim(), term), op: '!', values: [] };
  if (/^\S+$/.test(term)) return { key: checkKey(term, term), op: 'exists', values: [] };
  throw new UsageError(
    `-l ${JSON.stringify(term)}: not a label selector term (key=value, key!=value, key in (a,b), key notin (a,b), key, !key)`,
  );
}

function show(r: Requirement): string {
  switch (r.op) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
      return r.values.length === 1 ? `${r.key}=${r.values[0]}` : `${r.key} in (${r.values.join(',')})`;
    case 'notin':
      return r.values.length === 1 ? `${r.key}!=${r.values[0]}` : `${r.key} notin (${r.values.join(',')})`;
  }
}
