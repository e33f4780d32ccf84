import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { FilePolicySource, validatePolicy } from '../../../lib/engines/rollout/policy-source';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { listTemplates } from '../../../lib/model/cloudconfig/templates';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';

const GOOD = `apiVersion: worker-stacks.io/v1alpha1
kind: WorkerRolloutPolicy
metadata:
  name: fleet
spec:
  # canaries first
  waves:
    - name: canary
      selector: { matchLabels: { ring: canary } }
      maxConcurrent: 1
      soak: 1h
    - name: early
      selector:
        matchExpressions:
          - { key: ring, operator: In, values: [early] }
      maxConcurrent: "10%"
      soak: 30m
  maxConcurrentRolls: 20
`;

describe('FilePolicySource', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-policies-'));
    fs.mkdirSync(path.join(dir, 'clusters', 'rollout-policies'), { recursive: true });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const source = () => new FilePolicySource({ clustersDir: path.join(dir, 'clusters'), relativeTo: dir });
  const write = (name: string, text: string) =>
    fs.writeFileSync(path.join(dir, 'clusters', 'rollout-policies', name), text);

  test('a good policy loads with its defaults', async () => {
    // GIVEN
    write('fleet.yaml', GOOD);
    // WHEN
    const { policies, problems } = await source().load();
    // THEN
    expect(problems).toEqual([]);
    expect(policies[0].source).toBe('clusters/rollout-policies/fleet.yaml');
    expect(policies[0].policy.spec).toMatchObject({
      haltOnFailure: true,
      paused: false,
      maxConcurrentRolls: 20,
      remainder: { name: 'remainder', maxConcurrent: '25%', soak: '0s' },
    });
  });

  test('no directory: no policy, no problem', async () => {
    fs.rmSync(path.join(dir, 'clusters', 'rollout-policies'), { recursive: true });
    expect(await source().load()).toEqual({ policies: [], problems: [] });
  });

  test('every problem of every file at once, with file and field path', async () => {
    // GIVEN
    write(
      'fleet.yaml',
      GOOD.replace('soak: 1h', 'soak: 1 hour')
        .replace('maxConcurrent: "10%"', 'maxConcurrent: "110%"')
        .replace('operator: In, values: [early]', 'operator: Exists, values: [early]'),
    );
    write('other.yaml', 'kind: [unclosed');
    write('third.yaml', GOOD.replace('name: fleet', 'name: wrong').replace('name: early', 'name: canary'));
    // WHEN
    const { policies, problems } = await source().load();
    // THEN
    expect(policies).toEqual([]);
    expect(problems.map((p) => `${p.file}: ${p.path}: ${p.message}`)).toEqual([
      'clusters/rollout-policies/fleet.yaml: spec.waves[0].soak: "1 hour" is not a duration (such as 0s, 30m, 2h, 1h30m)',
      'clusters/rollout-policies/fleet.yaml: spec.waves[1].maxConcurrent: "110%" is not a count (a whole number 1-10000) or a percentage ("1%"-"100%")',
      'clusters/rollout-policies/fleet.yaml: spec.waves[1].selector.matchExpressions[0].values: operator Exists takes no values',
      expect.stringMatching(/^clusters\/rollout-policies\/other\.yaml: : YAML syntax error at line 1/),
      'clusters/rollout-policies/third.yaml: metadata.name: "wrong" must match the file name (third)',
      'clusters/rollout-policies/third.yaml: spec.waves[1].name: "canary" is already the name of waves[0]; wave names must be unique',
    ]);
  });

  test('pause and resume edit only spec.paused, keeping comments', async () => {
    // GIVEN
    write('fleet.yaml', GOOD);
    // WHEN
    await source().setPaused('fleet', true);
    const paused = fs.readFileSync(path.join(dir, 'clusters', 'rollout-policies', 'fleet.yaml'), 'utf8');
    await source().setPaused('fleet', false);
    const resumed = fs.readFileSync(path.join(dir, 'clusters', 'rollout-policies', 'fleet.yaml'), 'utf8');
    // THEN
    expect(parse(paused).spec.paused).toBe(true);
    expect(paused).toContain('# canaries first');
    expect(parse(resumed).spec.paused).toBeUndefined();
    await expect(source().setPaused('nope', true)).rejects.toThrow('no rollout policy nope');
  });
});

test('watch: a policy edit (a resume) is reported, so that a daemon looks at its held clusters at once', async () => {
  // GIVEN
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-policies-watch-'));
  try {
    fs.mkdirSync(path.join(dir, 'rollout-policies'));
    fs.writeFileSync(path.join(dir, 'rollout-policies', 'fleet.yaml'), GOOD);
    const source = new FilePolicySource({ clustersDir: dir });
    const changed = new Promise<void>((resolve) => {
      const stop = source.watch(() => {
        stop();
        resolve();
      });
    });
    // WHEN
    await source.setPaused('fleet', true);
    // THEN
    await changed;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

describe('cluster labels and spec.rollout', () => {
  const example = () =>
    parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'clusters', 'staging-us1.yaml'), 'utf8'));
  const templates = listTemplates(defaultTemplates());

  test('labels must be Kubernetes labels; windows must be valid, every problem at once', () => {
    // GIVEN
    const raw = example();
    raw.metadata.labels = { ring: 'canary', 'bad key!': 'x', tier: 'not valid value' };
    raw.spec.rollout = {
      hold: 'yes',
      maintenanceWindows: [{ schedule: '0 2 * *', duration: '4 hours', timeZone: 'Berlin' }],
    };
    // WHEN
    const r = validateCluster(raw, { file: 'clusters/staging-us1.yaml', templates });
    // THEN
    expect(r.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      expect.stringMatching(/^metadata\.labels\.tier: "not valid value" is not a label value/),
      expect.stringMatching(/^metadata\.labels\["bad key!"\]: "bad key!" is not a label key/),
      expect.stringMatching(/^spec\.rollout\.hold: "yes" is a string, expected true or false/),
      expect.stringMatching(/^spec\.rollout\.maintenanceWindows\[0\]\.duration: "4 hours" is not a duration/),
      expect.stringMatching(
        /^spec\.rollout\.maintenanceWindows\[0\]\.schedule: "0 2 \* \*" is not a 5-field cron schedule/,
      ),
      expect.stringMatching(/^spec\.rollout\.maintenanceWindows\[0\]\.timeZone: "Berlin" is not an IANA time zone/),
    ]);
  });

  test('a valid object gets the rollout defaults', () => {
    const r = validateCluster(example(), { file: 'clusters/staging-us1.yaml', templates });
    expect(r.cluster?.spec.rollout).toEqual({
      hold: false,
      maintenanceWindows: [],
      rollbackAlarms: [],
      monitoringTimeMinutes: 0,
      maxConcurrentPools: 1,
    });
  });

  test('validatePolicy refuses another kind', () => {
    const r = validatePolicy({ ...parse(GOOD), kind: 'WorkerCluster' }, 'clusters/rollout-policies/fleet.yaml');
    expect(r.problems.map((p) => p.path)).toContain('kind');
  });
});
