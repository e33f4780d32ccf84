/**
 * Patterns from a template's values.yaml, matched in linear time. A template directory may be hostile, and a JavaScript
 * RegExp backtracks: `(a+)+$` against thirty `a`s and a `b` hangs validate. So a declared pattern is never given to
 * RegExp: it is compiled here into a Thompson NFA and matched by simulating all its states at once, which takes at most
 * (value length) × (states) steps whatever the pattern; the pattern, its states and the value are capped, so one match
 * is bounded by MAX_VALUE_LENGTH × MAX_STATES steps.
 *
 * The syntax is the part that RE2 (Go, the API server) and JavaScript read alike: literals; `.`; escapes \d \D \w \W \s
 * \S (ASCII: \s is space, tab and the line-break characters) and an escaped punctuation character; classes `[a-z0-9_]`, `[^...]`; groups `(...)`, `(?:...)`; `|`; the greedy
 * quantifiers `?`, `*`, `+`, `{n}`, `{n,}`, `{n,m}` (n, m at most 100). A pattern always matches the whole value; a
 * leading `^` and trailing `$` are allowed and mean that anyway. Anything else (back-references, lookaround, lazy
 * quantifiers, flags) is refused with where it is.
 */

export const MAX_PATTERN_LENGTH = 512;
export const MAX_STATES = 2000;
/** Longest string value a template value may have: what a node setting needs, with room. */
export const MAX_VALUE_LENGTH = 4096;
const MAX_REPEAT = 100;

type CharTest = (c: string) => boolean;
type Node =
  | { kind: 'char'; test: CharTest }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number | undefined };

export class PatternError extends Error {}

const DIGIT: CharTest = (c) => c >= '0' && c <= '9';
const WORD: CharTest = (c) => /^[A-Za-z0-9_]$/.test(c);
const SPACE: CharTest = (c) => /^[ \t\n\r\f\v]$/.test(c);
const not =
  (t: CharTest): CharTest =>
  (c) =>
    !t(c);

function parse(src: string): Node {
  let i = 0;
  const fail = (what: string): never => {
    throw new PatternError(`${what} at character ${i + 1} of the pattern`);
  };
  const escape = (inClass: boolean): CharTest => {
    const c = src.at(i++);
    if (c === undefined) return fail('a trailing backslash');
    if (c === 'd') return DIGIT;
    if (c === 'D') return not(DIGIT);
    if (c === 'w') return WORD;
    if (c === 'W') return not(WORD);
    if (c === 's') return SPACE;
    if (c === 'S') return not(SPACE);
    if (/^[\\^$.|?*+()[\]{}\-/]$/.test(c)) return (x) => x === c;
    return fail(
      `the escape \\${c} (${inClass ? 'in a class, ' : ''}only \\d \\D \\w \\W \\s \\S and escaped punctuation)`,
    );
  };
  const klass = (): CharTest => {
    i++; // [
    const negate = src[i] === '^';
    if (negate) i++;
    const parts: CharTest[] = [];
    let first = true;
    while (src[i] !== ']' || first) {
      first = false;
      if (i >= src.length) return fail('an unclosed [');
      let lo: string | CharTest;
      if (src[i] === '\\') {
        i++;
        lo = escape(true);
      } else if (src[i] === '[') return fail('a nested [ (character class syntax RE2 and JavaScript read differently)');
      else lo = src[i++];
      if (typeof lo === 'string' && src[i] === '-' && src[i + 1] !== ']' && i + 1 < src.length) {
        i++;
        const hi = src[i] === '\\' ? (i++, src.at(i++)) : src.at(i++);
        if (hi === undefined || hi < lo) return fail('a reversed or unfinished range');
        const from = lo;
        parts.push((c) => c >= from && c <= hi);
      } else if (typeof lo === 'string') {
        const ch = lo;
        parts.push((c) => c === ch);
      } else parts.push(lo);
    }
    i++; // ]
    const any: CharTest = (c) => parts.some((p) => p(c));
    return negate ? not(any) : any;
  };
  const atom = (): Node => {
    const c = src[i];
    if (c === '(') {
      i++;
      if (src[i] === '?') {
        if (src[i + 1] !== ':') return fail('a group other than (...) or (?:...)');
        i += 2;
      }
      const inner = alternation();
      if (src[i] !== ')') return fail('an unclosed (');
      i++;
      return inner;
    }
    if (c === '[') return { kind: 'char', test: klass() };
    if (c === '\\') {
      i++;
      return { kind: 'char', test: escape(false) };
    }
    if (c === '.') {
      i++;
      return { kind: 'char', test: (x) => x !== '\n' && x !== '\r' && x !== '\u2028' && x !== '\u2029' }; // as JavaScript's `.`
    }
    if (c === '^' || c === '$')
      return fail(`${c} inside the pattern (only a leading ^ and a trailing $, which every pattern means anyway)`);
    if (c === '*' || c === '+' || c === '?' || c === '{') return fail(`a quantifier ${c} with nothing to repeat`);
    if (c === ')' || c === ']' || c === '}') return fail(`an unmatched ${c}`);
    i++;
    return { kind: 'char', test: (x) => x === c };
  };
  const quantified = (): Node => {
    let node = atom();
    for (;;) {
      const c = src[i];
      let min: number;
      let max: number | undefined;
      if (c === '*') [min, max] = [0, undefined];
      else if (c === '+') [min, max] = [1, undefined];
      else if (c === '?') [min, max] = [0, 1];
      else if (c === '{') {
        const m = /^\{(\d{1,6})(,(\d{0,6}))?\}/.exec(src.slice(i, i + 16));
        if (!m) return fail('a { that is not {n}, {n,} or {n,m}');
        min = Number(m[1]);
        max = m.at(2) === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
        if (min > MAX_REPEAT || (max !== undefined && (max > MAX_REPEAT || max < min)))
          return fail(`a repeat count above ${MAX_REPEAT} or reversed`);
        i += m[0].length - 1;
      } else return node;
      i++;
      if (src[i] === '?' || src[i] === '+') return fail('a lazy or possessive quantifier');
      node = { kind: 'repeat', node, min, max };
    }
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (i < src.length && src[i] !== '|' && src[i] !== ')') items.push(quantified());
    return { kind: 'seq', items };
  };
  const alternation = (): Node => {
    const options = [sequence()];
    while (src[i] === '|') {
      i++;
      options.push(sequence());
    }
    return options.length === 1 ? options[0] : { kind: 'alt', options };
  };
  const body = src.replace(/^\^/, '').replace(/(?<!\\)\$$/, '');
  src = body;
  const node = alternation();
  if (i < src.length) return fail(`an unmatched ${src[i]}`);
  return node;
}

/** NFA state: a character test with one next state, or a split into epsilon edges. */
type State = { test?: CharTest; next: number[] };

function compile(node: Node): { states: State[]; start: number; accept: number } {
  const states: State[] = [];
  const add = (s: State) => {
    if (states.length >= MAX_STATES)
      throw new PatternError(`the pattern is too large (over ${MAX_STATES} states once its repeats are expanded)`);
    states.push(s);
    return states.length - 1;
  };
  // Builds `node` so that it ends in state `out`; returns its entry state.
  const build = (n: Node, out: number): number => {
    switch (n.kind) {
      case 'char':
        return add({ test: n.test, next: [out] });
      case 'seq':
        return n.items.reduceRight((next, item) => build(item, next), out);
      case 'alt':
        return add({ next: n.options.map((o) => build(o, out)) });
      case 'repeat': {
        let entry = out;
        if (n.max === undefined) {
          // x* : a split that either enters x (which loops back to the split) or leaves.
          const loop = add({ next: [] });
          states[loop].next = [build(n.node, loop), out];
          entry = loop;
        } else {
          for (let k = 0; k < n.max - n.min; k++) entry = add({ next: [build(n.node, entry), out] });
        }
        for (let k = 0; k < n.min; k++) entry = build(n.node, entry);
        return entry;
      }
    }
  };
  const accept = add({ next: [] });
  const start = build(node, accept);
  return { states, start, accept };
}

export interface BoundedPattern {
  readonly source: string;
  /** True when the whole value matches. */
  test(value: string): boolean;
}

/** Compiles a declared pattern, or throws PatternError saying what is not allowed and where. */
export function boundedPattern(source: string): BoundedPattern {
  if (source.length > MAX_PATTERN_LENGTH)
    throw new PatternError(`the pattern has ${source.length} characters, at most ${MAX_PATTERN_LENGTH} allowed`);
  const { states, start, accept } = compile(parse(source));
  const closure = (set: Set<number>, s: number) => {
    if (set.has(s)) return;
    set.add(s);
    if (!states[s].test) for (const n of states[s].next) closure(set, n);
  };
  return {
    source,
    test(value: string): boolean {
      if (value.length > MAX_VALUE_LENGTH) return false;
      let current = new Set<number>();
      closure(current, start);
      for (const c of value) {
        const next = new Set<number>();
        for (const s of current) if (states[s].test?.(c)) closure(next, states[s].next[0]);
        if (next.size === 0) return false;
        current = next;
      }
      return current.has(accept);
    },
  };
}
