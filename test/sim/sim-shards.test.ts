import { LabelSelector } from '../../lib/platform/kube/label-selector';
import { SimShards, withTier } from './sim-shards';

/** The simulator's shard model and its invariant: it holds for what lib/platform/kube/shards.ts decides, and catches an overlap. */

const objects = (...tiers: (string | undefined)[]) =>
  tiers.map((tier, i) => ({ name: `sim-${i}`, labels: tier ? { tier } : undefined }));

test.each<[string, 'one' | 'split', (string | undefined)[], string[], string[]]>([
  ['one shard owns everything, labelled or not', 'one', ['canary', 'general', undefined], [], []],
  [
    'split: canary and general owned once each; the overlapping third shard refused',
    'split',
    ['canary', 'general'],
    ['tier in (canary,general)'],
    [],
  ],
  [
    'split: an object without a tier is unowned, and reported so',
    'split',
    ['canary', undefined],
    ['tier in (canary,general)'],
    [],
  ],
])('%s', (_what, config, tiers, refused, violations) => {
  // GIVEN the shards a world starts  WHEN the invariant looks at objects with these tiers
  const shards = new SimShards(config);

  // THEN the overlapping candidate was refused, and the invariant holds
  expect(shards.refused).toEqual(refused);
  expect(shards.check(objects(...tiers))).toEqual(violations);
});

test('the invariant breaks when an overlapping shard runs (a guard that let it start)', () => {
  // GIVEN split shards, and a third shard that overlaps them running anyway
  const shards = new SimShards('split');
  const scope = { selector: LabelSelector.parse('tier in (canary,general)') };
  shards.running.push({ lease: 'worker-stacks-overlap', scope });

  // WHEN the invariant looks at a canary object  THEN it says the shards overlap and the object has two owners
  const found = shards.check(objects('canary'));
  expect(found.some((v) => v.includes('overlap'))).toBe(true);
  expect(found.some((v) => v.includes('owned by 2 shards'))).toBe(true);
});

test('withTier sets, replaces and removes the tier label, keeping the others', () => {
  expect(withTier(undefined, 'canary')).toEqual({ tier: 'canary' });
  expect(withTier({ tier: 'canary', wave: 'canary' }, 'general')).toEqual({ tier: 'general', wave: 'canary' });
  expect(withTier({ tier: 'canary' }, 'none')).toBeUndefined();
});
