import Ajv2020 from 'ajv/dist/2020';
import schema from '../../../lib/engines/review/review.schema.json';
import { groupSettings } from '../../../lib/engines/review/verdict';
import { describeRollout, specRollout } from '../../../lib/engines/review/rollout-words';
import { example, variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';

/**
 * How a cluster rolls, read back from its synthesized template (what review reports) and from the object (what
 * status reports): both say the same, for each strategy, and review's JSON shape follows its schema.
 */

const ajv = new Ajv2020({ allErrors: true, strict: true });
ajv.addSchema(schema);
const validRollingUpdate = ajv.getSchema(`${schema.$id}#/$defs/cluster/properties/rollingUpdate`)!;

const refresh = variant('prod-eu1', (r) => {
  const ru = r.spec.pool.rollingUpdate;
  delete ru.maxBatchSize;
  delete ru.minInstancesInService;
  ru.strategy = 'instanceRefresh';
  ru.instanceRefresh = {
    maxHealthyPercentage: 150,
    checkpoints: [25, 100],
    bakeTimeSeconds: 600,
    alarms: ['nodes-not-ready'],
  };
  r.spec.pool.drain = { enabled: false };
  r.spec.pool.desiredCapacity = 6;
});

test.each([
  ['prod-eu1 (rolling, signals, drained)', example('prod-eu1')],
  ['staging-us1 (desired capacity set)', example('staging-us1')],
  ['edge-ap1 (launch configuration)', example('edge-ap1')],
  ['an instance refresh without drain', refresh],
  [
    'a rolling update without signals',
    variant('prod-eu1', (r) =>
      Object.assign(r.spec.pool.rollingUpdate, { waitOnResourceSignals: false, pauseTime: 'PT1M' }),
    ),
  ],
])('%s: the template says what the object says', (_what, cluster) => {
  // WHEN
  const fromTemplate = groupSettings(synthCluster(cluster).json).rollingUpdate!;
  const fromObject = specRollout(cluster.spec);
  // THEN
  expect(describeRollout(fromTemplate)).toBe(describeRollout(fromObject));
  expect(validRollingUpdate(fromTemplate)).toBe(true);
});

test('an instance refresh is read back whole', () => {
  expect(groupSettings(synthCluster(refresh).json).rollingUpdate).toEqual({
    strategy: 'instanceRefresh',
    nodes: 6,
    maxBatchSize: null,
    minInstancesInService: null,
    pauseTime: 'PT10M',
    waitOnResourceSignals: false,
    minSuccessfulInstancesPercent: 100,
    instanceRefresh: {
      minHealthyPercentage: 100,
      maxHealthyPercentage: 150,
      checkpoints: [25, 100],
      bakeTimeSeconds: 600,
      alarms: ['nodes-not-ready'],
    },
    drained: false,
  });
  expect(describeRollout(groupSettings(synthCluster(refresh).json).rollingUpdate!)).toBe(
    '6 nodes by instance refresh (100-150% healthy, checkpoints at 25/100%, bake 600 s, gated by 1 alarm), not drained (no termination lifecycle hook)',
  );
});

test('the schema refuses a rolling update without its new fields', () => {
  expect(
    validRollingUpdate({ maxBatchSize: 1, minInstancesInService: 0, pauseTime: 'PT5M', waitOnResourceSignals: false }),
  ).toBe(false);
});
