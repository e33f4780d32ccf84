import { UsageError } from '../../../lib/core/errors';
import { LabelSelector } from '../../../lib/platform/kube/label-selector';

describe('a label selector, parsed once as the API server reads it', () => {
  test.each([
    // written, normal form
    ['tier=canary', 'tier=canary'],
    ['  tier == canary ', 'tier=canary'],
    ['region=eu,tier=canary', 'region=eu,tier=canary'],
    ['tier=canary,region=eu', 'region=eu,tier=canary'],
    ['tier in (b, a, b)', 'tier in (a,b)'],
    ['tier in (a)', 'tier=a'],
    ['tier notin (x,y),!legacy,ring', '!legacy,ring,tier notin (x,y)'],
    ['example.com/tier!=canary', 'example.com/tier!=canary'],
    ['', ''],
  ])('%j has the normal form %j', (written, normal) => {
    expect(LabelSelector.parse(written).toString()).toBe(normal);
  });

  test.each([['tier=canary,'], ['tier in (a'], ['=canary'], ['tier=can ary'], ['Tier Name=x'], ['-tier=x']])(
    '%j is refused, naming the term',
    (bad) => {
      expect(() => LabelSelector.parse(bad)).toThrow(UsageError);
    },
  );

  test.each([
    // selector, labels, matches
    ['tier=canary', { tier: 'canary' }, true],
    ['tier=canary', { tier: 'stable' }, false],
    ['tier=canary', {}, false],
    ['tier!=canary', {}, true],
    ['tier!=canary', { tier: 'canary' }, false],
    ['tier in (a,b)', { tier: 'b' }, true],
    ['tier notin (a,b)', { tier: 'c' }, true],
    ['tier notin (a,b)', {}, true],
    ['tier', { tier: '' }, true],
    ['!tier', { tier: 'x' }, false],
    ['region=eu,tier=canary', { region: 'eu', tier: 'canary' }, true],
    ['region=eu,tier=canary', { region: 'us', tier: 'canary' }, false],
    ['', { anything: 'x' }, true],
  ])('%j matches %j: %s', (sel, labels, expected) => {
    expect(LabelSelector.parse(sel).matches(labels as Record<string, string>)).toBe(expected);
  });

  test.each([
    // a, b, could one object match both?
    ['tier=canary', 'tier!=canary', false],
    ['tier=canary', 'tier=stable', false],
    ['tier=canary', 'region=eu', true],
    ['tier=canary', '', true],
    ['tier in (a,b)', 'tier notin (a,b)', false],
    ['tier in (a,b)', 'tier notin (a)', true],
    ['tier in (a,b)', 'tier in (b,c)', true],
    ['tier in (a)', 'tier in (b)', false],
    ['tier', '!tier', false],
    ['!tier', 'tier!=canary', true],
    ['!tier', 'tier=canary', false],
    ['tier=a,ring=1', 'tier=a,ring=2', false],
    ['tier=a,ring=1', 'tier=a,zone=2', true],
  ])('%j and %j overlap: %s (either order)', (a, b, expected) => {
    const [x, y] = [LabelSelector.parse(a), LabelSelector.parse(b)];
    expect([x.overlaps(y), y.overlaps(x)]).toEqual([expected, expected]);
  });
});
