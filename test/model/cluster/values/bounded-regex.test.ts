import fc from 'fast-check';
import { boundedPattern, MAX_VALUE_LENGTH, PatternError } from '../../../../lib/model/cluster/values/bounded-regex';

/**
 * The linear-time matcher of values.yaml patterns (issue 21) says what JavaScript's RegExp says of a whole-value match,
 * for every pattern of the syntax it takes, and refuses what it does not take.
 */

/** Patterns of the accepted syntax over a small alphabet, so that random values hit and miss them. */
const pattern: fc.Arbitrary<string> = fc.letrec<{ re: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom('a', 'b', '.', '[ab]', '[^a]', '[a-c]', '\\d', '\\w', '\\.', '\\-'),
    tie('re').map((r) => `(${r})`),
    tie('re').map((r) => `(?:${r})`),
  ),
  re: fc.oneof(
    { depthSize: 'small' },
    tie('atom'),
    fc.tuple(tie('atom'), fc.constantFrom('?', '*', '+', '{2}', '{0,2}', '{1,}')).map(([a, q]) => a + q),
    fc.tuple(tie('re'), tie('re')).map(([x, y]) => x + y),
    fc.tuple(tie('re'), tie('re')).map(([x, y]) => `${x}|${y}`),
  ),
})).re;

test('property: a pattern matches exactly what RegExp matches as a whole value', () => {
  fc.assert(
    fc.property(
      pattern,
      fc.string({ unit: fc.constantFrom('a', 'b', 'c', '1', '.', '-', '_', ' ', '\n', '\r', '\u2028'), maxLength: 8 }),
      (p, value) => {
        expect(boundedPattern(p).test(value)).toBe(new RegExp(`^(?:${p})$`).test(value));
      },
    ),
    { numRuns: 2000, seed: 20260521 },
  );
});

test.each([
  ['(a+)+', 'a'.repeat(4000) + 'b', false],
  ['(a|aa)*c', 'a'.repeat(4000), false],
  ['(.*)*x', 'y'.repeat(4000), false],
  ['^[a-z0-9.-]{1,63}$', 'node-1.example', true],
])('%s against a long value: answered (linearly), %s', (p, value, expected) => {
  expect(boundedPattern(p).test(value)).toBe(expected);
});

test('a value over the length cap never matches', () => {
  expect(boundedPattern('.*').test('a'.repeat(MAX_VALUE_LENGTH + 1))).toBe(false);
});

test.each([
  ['(a)\\1', /the escape \\1/],
  ['(?=a)', /a group other than/],
  ['(?<n>a)', /a group other than/],
  ['a*?', /lazy or possessive/],
  ['a{101}', /repeat count above 100/],
  ['a{3,2}', /repeat count above 100 or reversed/],
  ['[b-a]', /reversed or unfinished range/],
  ['(a', /unclosed \(/],
  ['a)', /unmatched \)/],
  ['*a', /nothing to repeat/],
  ['a^b', /\^ inside the pattern/],
  ['x'.repeat(513), /at most 512 allowed/],
  ['((a{100}){100})', /too large/],
])('%s is refused: %s', (p, message) => {
  expect(() => boundedPattern(p)).toThrow(PatternError);
  expect(() => boundedPattern(p)).toThrow(message);
});
