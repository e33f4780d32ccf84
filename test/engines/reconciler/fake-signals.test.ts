import { signalFailure } from '../../fakes/fake-signals';
import { example, variant } from '../../helpers/clusters';
import { synthCluster } from '../../helpers/synth';
import { Json } from '../../helpers/json';

/**
 * The fake CloudFormation's model of node signals, checked on real templates: which operations wait on the nodes,
 * how long, and what CloudFormation's event says when they do not come up.
 */

const base = synthCluster(example('prod-eu1')).text; // minSize 3, maxBatchSize 2, pauseTime PT10M
const rolled = synthCluster(variant('prod-eu1', (r) => (r.spec.cloudConfig.values.maxPods = 99))).text;
const retagged = synthCluster(variant('prod-eu1', (r) => (r.spec.tags = { ...r.spec.tags, extra: 'x' }))).text;
const noSignals = (raw: Json) =>
  Object.assign(raw.spec.pool.rollingUpdate, { waitOnResourceSignals: false, pauseTime: 'PT2M' });
const unsignalledBase = synthCluster(variant('prod-eu1', noSignals)).text;
const unsignalledRolled = synthCluster(
  variant('prod-eu1', (r) => (noSignals(r), (r.spec.cloudConfig.values.maxPods = 99))),
).text;

test.each([
  {
    what: 'create, silent nodes: the creation policy times out',
    kind: 'create' as const,
    before: undefined,
    after: base,
    health: 'silent' as const,
    afterMs: 600_000,
    reason: 'Failed to receive 3 resource signal(s) within the specified duration',
  },
  {
    what: 'create, failing nodes',
    kind: 'create' as const,
    before: undefined,
    after: base,
    health: 'failing' as const,
    afterMs: 540_000,
    reason: 'Received 3 FAILURE signal(s) out of 3. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement',
  },
  {
    what: 'update that rolls, silent nodes: the first batch times out',
    kind: 'update' as const,
    before: base,
    after: rolled,
    health: 'silent' as const,
    afterMs: 600_000,
    reason: 'Received 0 SUCCESS signal(s) out of 2. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement',
  },
])('$what', ({ kind, before, after, health, afterMs, reason }) => {
  expect(signalFailure(kind, before, after, health)).toEqual({
    afterMs,
    resource: { logicalId: 'PoolGroupASG2416841C', resourceType: 'AWS::AutoScaling::AutoScalingGroup', reason },
  });
});

test.each([
  { what: 'healthy nodes', kind: 'update' as const, before: base, after: rolled, health: 'healthy' as const },
  {
    what: 'an update that rolls no node',
    kind: 'update' as const,
    before: base,
    after: retagged,
    health: 'silent' as const,
  },
  {
    what: 'a roll that does not wait on signals',
    kind: 'update' as const,
    before: unsignalledBase,
    after: unsignalledRolled,
    health: 'silent' as const,
  },
])('nothing waits on the nodes: $what', ({ kind, before, after, health }) => {
  expect(signalFailure(kind, before, after, health)).toBeUndefined();
});
