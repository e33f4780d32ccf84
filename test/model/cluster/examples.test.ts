import * as path from 'node:path';
import { loadClusterFile } from '../../../lib/platform/files/load-clusters';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { EXAMPLE_NAMES, EXAMPLES_DIR, rawExample, REPO, TEMPLATES } from '../../helpers/clusters';

describe('the example cluster objects', () => {
  test('there are the five documented examples', () => {
    // GIVEN the clusters/ directory
    // WHEN its objects are listed
    // THEN they are the three single-pool examples the tests mutate, the node-pools example (docs/node-pools.md) and
    // the EKS example, an AL2023 pool and a Bottlerocket pool (docs/node-configs.md)
    expect(EXAMPLE_NAMES).toEqual(['apps-eu1', 'edge-ap1', 'eks-us2', 'prod-eu1', 'staging-us1']);
  });

  test.each(EXAMPLE_NAMES)('%s loads from its file with no problem', (name) => {
    // GIVEN the example file
    const file = path.join(EXAMPLES_DIR, `${name}.yaml`);

    // WHEN it is loaded and validated
    const result = loadClusterFile(file, { templates: TEMPLATES, relativeTo: REPO });

    // THEN there is no problem and the cluster is named after the file
    expect(result.problems).toEqual([]);
    expect(result.cluster?.metadata.name).toBe(name);
  });
});

describe('defaults are applied', () => {
  const validate = (raw: unknown, name: string) =>
    validateCluster(raw, { file: `clusters/${name}.yaml`, templates: TEMPLATES });

  test('a listener without healthCheck gets the TCP defaults; an HTTP one keeps what it gave', () => {
    // GIVEN edge-ap1 (no health checks) and prod-eu1 (HTTP health checks without interval or thresholds)
    const edge = rawExample('edge-ap1');
    const prod = rawExample('prod-eu1');

    // WHEN they are validated
    const e = validate(edge, 'edge-ap1').cluster!;
    const p = validate(prod, 'prod-eu1').cluster!;

    // THEN the missing fields have their defaults and given fields are kept
    expect(e.spec.listeners[0].healthCheck).toEqual({
      protocol: 'TCP',
      intervalSeconds: 10,
      healthyThreshold: 3,
      unhealthyThreshold: 3,
    });
    expect(e.spec.listeners[0].protocol).toBe('TCP');
    expect(p.spec.listeners[0].healthCheck).toEqual({
      protocol: 'HTTP',
      port: 30254,
      path: '/healthz',
      intervalSeconds: 10,
      healthyThreshold: 3,
      unhealthyThreshold: 3,
    });
    expect(p.spec.listeners[0].protocol).toBe('TCP');
  });

  test('a pool without rollingUpdate and rootVolume gets their defaults', () => {
    // GIVEN staging-us1 without rollingUpdate (so minInstancesInService may default to 0)
    const raw = rawExample('staging-us1');
    delete raw.spec.pool.rollingUpdate;

    // WHEN it is validated
    const c = validate(raw, 'staging-us1').cluster!;

    // THEN rolling update, root volume and launch-configuration defaults are filled in
    expect(c.spec.pool!.rollingUpdate).toEqual({
      strategy: 'rolling',
      maxBatchSize: 1,
      minInstancesInService: 0,
      pauseTime: 'PT10M',
      waitOnResourceSignals: true,
      minSuccessfulInstancesPercent: 100,
    });
    expect(c.spec.pool!.drain).toEqual({ enabled: true, heartbeatTimeoutSeconds: 300 });
    expect(c.spec.rollout).toEqual({
      rollbackAlarms: [],
      monitoringTimeMinutes: 0,
      hold: false,
      maxConcurrentPools: 1,
      maintenanceWindows: [],
    });
    expect(c.spec.pool!.rootVolume).toEqual({ sizeGiB: 50, type: 'gp3', deviceName: '/dev/xvda' });
    expect(c.spec.pool!.legacyLaunchConfiguration).toBe(false);
    expect(c.spec.pool!.desiredCapacity).toBe(2);
  });

  test('a partial rollingUpdate keeps its fields and gets the rest', () => {
    // GIVEN prod-eu1, whose rollingUpdate gives batch size, min in service and pause time only
    const raw = rawExample('prod-eu1');

    // WHEN it is validated
    const c = validate(raw, 'prod-eu1').cluster!;

    // THEN waitOnResourceSignals defaults to true (rolls are gated by the nodes' signals), desiredCapacity stays unset, rootVolume fills in deviceName
    expect(c.spec.pool!.rollingUpdate).toEqual({
      strategy: 'rolling',
      maxBatchSize: 2,
      minInstancesInService: 3,
      pauseTime: 'PT10M',
      waitOnResourceSignals: true,
      minSuccessfulInstancesPercent: 100,
    });
    expect(c.spec.pool!.desiredCapacity).toBeUndefined();
    expect(c.spec.pool!.rootVolume).toEqual({ sizeGiB: 100, type: 'gp3', deviceName: '/dev/xvda' });
  });

  test('lists, load balancer scheme and cloud-config values get their defaults', () => {
    // GIVEN staging-us1 (no listeners, no nodeLabels) and prod-eu1 without a loadBalancer scheme
    const staging = rawExample('staging-us1');
    const prod = rawExample('prod-eu1');
    delete prod.spec.loadBalancer!.scheme;

    // WHEN they are validated
    const s = validate(staging, 'staging-us1').cluster!;
    const p = validate(prod, 'prod-eu1').cluster!;

    // THEN
    expect(s.spec.listeners).toEqual([]);
    expect(s.spec.loadBalancer).toBeUndefined();
    expect(s.spec.cloudConfig.values.nodeLabels).toEqual({});
    expect(s.spec.cloudConfig.values.nodeTaints).toEqual([
      { key: 'example.com/staging', value: '', effect: 'PreferNoSchedule' },
    ]);
    expect(s.spec.cloudConfig.values.maxPods).toBe(58);
    expect(p.spec.cloudConfig.values.maxPods).toBe(110);
    expect(p.spec.cloudConfig.values.registryMirrors).toEqual([]);
    expect(p.spec.loadBalancer).toEqual({ scheme: 'internal', allowedCidrs: ['10.0.0.0/8'] });
  });

  test('validation does not change the raw object', () => {
    // GIVEN the raw staging-us1 object
    const raw = rawExample('staging-us1');
    const before = JSON.stringify(raw);

    // WHEN it is validated
    validate(raw, 'staging-us1');

    // THEN the input is untouched (defaults live only in the result)
    expect(JSON.stringify(raw)).toBe(before);
  });
});
