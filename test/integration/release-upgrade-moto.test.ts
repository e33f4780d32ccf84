import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { workerStackName } from '../../lib/core/naming';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { POLICY_DIR } from '../../lib/engines/rollout/policy-source';
import { Json } from '../helpers/json';
import { checkoutRelease, oldCli } from '../helpers/old-release';
import { AWS_FLAGS, cli, motoCluster, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';

/**
 * Issue 33 item 7, the upgrade as it happened, on moto: a fleet deployed by release 8909f17's own reconciler (its CLI,
 * run from its code checked out of git), then the reconciler of this code with a rollout policy whose first wave is
 * the canary, soaking an hour. The objects, their templates directory and so their node configs are the same on both
 * sides; only the code differs, and this code writes every launch template differently (the security groups on a
 * NetworkInterfaces entry, not SecurityGroupIds) and every launch configuration with AssociatePublicIpAddress. Before
 * the roll key (702c83f) that updated all three stacks in one pass, replacing every node outside the waves; now the
 * canary rolls and the others wait for its wave, their stacks untouched, each saying why.
 *
 * The cause names the release and the properties (`release 0.1.0 → 0.1.0 (code …): launch template:
 * NetworkInterfaces, SecurityGroupIds`): the object's generation was applied Ready by the old code, so only the code
 * changed, even though this code reads the object with defaults 8909f17 did not have (its inputs differ).
 */

const OLD_RELEASE = '8909f17';
const CANARY = 'canary-1';
const MAIN = 'main-2';
const LEGACY = 'legacy-3';
const ALL = [CANARY, MAIN, LEGACY];

let world: World;
let oldDir: string;
let templates: string;
beforeAll(async () => {
  oldDir = checkoutRelease(OLD_RELEASE, 'the release before the roll key');
  // The operator's templates directory, kept across the upgrade: the old release's own cloudconfig/ (whose values
  // and scripts this code renders byte for byte as that release did), so that no node config changes.
  templates = path.join(oldDir, 'cloudconfig');
  world = await startWorld({ inProgressSeconds: 1 });
}, 180_000);
afterAll(async () => {
  await stopWorld(world);
  if (oldDir) fs.rmSync(oldDir, { recursive: true, force: true });
});

/** A moto cluster both releases take: labelled for its ring; `legacy` builds a launch configuration. */
function cluster(name: string, ring: string, legacy = false): Json {
  return motoCluster(world, name, (raw) => {
    raw.metadata.labels = { ring };
    // a value the old release's templates do not declare (the example gained it after 8909f17)
    delete raw.spec.cloudConfig.values.kubeletSha256;
    if (legacy) raw.spec.pool.legacyLaunchConfiguration = true;
  });
}

function writePolicy(): void {
  fs.mkdirSync(path.join(world.dir, POLICY_DIR), { recursive: true });
  fs.writeFileSync(
    path.join(world.dir, POLICY_DIR, 'fleet.yaml'),
    stringify({
      apiVersion: 'worker-stacks.io/v1alpha1',
      kind: 'WorkerRolloutPolicy',
      metadata: { name: 'fleet' },
      spec: {
        waves: [{ name: 'canary', selector: { matchLabels: { ring: 'canary' } }, maxConcurrent: 1, soak: '1h' }],
      },
    }),
  );
}

/** What replaces a stack's nodes, as EC2, Auto Scaling and CloudFormation hold it. */
interface Nodes {
  /**
   * The launch template (its id, its versions, and whether its latest version puts the security groups on a network
   * interface or names them as SecurityGroupIds), or the launch configuration (its name, its public IP setting).
   */
  readonly launch: Json;
  /** The stack's change sets (name:execution status) and how many events it has. */
  readonly changeSets: string[];
  readonly events: number;
  readonly status: string;
}

function nodesOf(name: string): Nodes {
  return world.moto.python<Nodes>(
    `
asg = boto3.client('autoscaling', **_kw)
res = cfn.describe_stack_resources(StackName=args)['StackResources']
lt = [r['PhysicalResourceId'] for r in res if r.get('ResourceType') == 'AWS::EC2::LaunchTemplate']
lc = [r['PhysicalResourceId'] for r in res if r.get('ResourceType') == 'AWS::AutoScaling::LaunchConfiguration']
assert len(lt) + len(lc) == 1, f'expected one launch template or configuration in {args}: {lt} {lc}'
if lt:
    key = dict(LaunchTemplateId=lt[0]) if lt[0].startswith('lt-') else dict(LaunchTemplateName=lt[0])
    vs = sorted(ec2.describe_launch_template_versions(**key)['LaunchTemplateVersions'], key=lambda v: v['VersionNumber'])
    data = vs[-1]['LaunchTemplateData']
    launch = dict(template=lt[0], versions=[v['VersionNumber'] for v in vs],
                  securityGroups='NetworkInterfaces' if 'NetworkInterfaces' in data else 'SecurityGroupIds' if 'SecurityGroupIds' in data else None)
else:
    c = asg.describe_launch_configurations(LaunchConfigurationNames=lc)['LaunchConfigurations'][0]
    launch = dict(configuration=lc[0], associatePublicIpAddress=c.get('AssociatePublicIpAddress'))
# moto lists every stack's change sets whatever StackName says: this stack's are those naming it
sets = sorted(f"{c['ChangeSetName']}:{c['ExecutionStatus']}" for c in cfn.list_change_sets(StackName=args)['Summaries'] if c.get('StackName') == args)
events = len(cfn.describe_stack_events(StackName=args)['StackEvents'])
status = cfn.describe_stacks(StackName=args)['Stacks'][0]['StackStatus']
out = dict(launch=launch, changeSets=sets, events=events, status=status)
`,
    workerStackName(name),
  );
}

const RECONCILE = (): string[] => [
  'reconcile',
  '--once',
  '--clusters',
  world.dir,
  '--templates',
  templates,
  '--no-nag',
];
/** A replacement's cause as this code says it: the release, then the properties. */
const cause = (properties: string): RegExp => new RegExp(`^release [^:]*: launch template: ${properties}$`);

test('an upgrade from 8909f17 that writes every launch template anew rolls the canary and holds the others for its wave, each saying why', async () => {
  // GIVEN three clusters deployed by release 8909f17's own reconciler (its CLI): a canary and another on a launch
  // template, one on a launch configuration; and a rollout policy whose first wave is the canary, soaking an hour
  writeCluster(world, cluster(CANARY, 'canary'));
  writeCluster(world, cluster(MAIN, 'main'));
  writeCluster(world, cluster(LEGACY, 'main', true));
  writePolicy();
  const old = oldCli(oldDir, [...RECONCILE(), '--synth-threads', '0', ...AWS_FLAGS]);
  if (old.code !== 0) throw new Error(`release ${OLD_RELEASE} did not deploy: ${old.out}\n${old.err.slice(-4000)}`);
  expect(old.out.trim().split('\n').sort()).toEqual(ALL.map((n) => `${n}\tapplied`).sort());
  const before = Object.fromEntries(ALL.map((n) => [n, nodesOf(n)]));
  const oldChecksums = Object.fromEntries(
    ALL.map((n) => [n, stateFile(world, n).status.cloudConfigChecksum as string]),
  );
  for (const n of [CANARY, MAIN])
    expect(before[n].launch).toMatchObject({ versions: [1], securityGroups: 'SecurityGroupIds' });
  expect(before[LEGACY].launch).toEqual({ configuration: expect.any(String), associatePublicIpAddress: null });
  for (const n of ALL) expect(before[n].changeSets).toHaveLength(1); // its create

  // WHEN this code's reconciler runs, the objects, their templates directory and so their node configs unchanged
  const run = await cli([...RECONCILE(), ...AWS_FLAGS]);

  // THEN the canary's stack is updated: a new launch template version, the security groups on the interface; its log
  // says why it rolls the nodes (the launch template's properties: its config is unchanged) and so does its status
  expect(run.code).toBe(0);
  const outcomes: Record<string, { result?: string; message?: string } | undefined> = Object.fromEntries(
    run.out
      .trim()
      .split('\n')
      .map((l) => l.split('\t'))
      .map(([name, result, message]) => [name, { result, message }]),
  );
  // (before the roll key, all three were applied at once: nothing held the others)
  expect(Object.fromEntries(ALL.map((n) => [n, outcomes[n]?.result]))).toEqual({
    [CANARY]: 'applied',
    [MAIN]: 'held',
    [LEGACY]: 'held',
  });
  expect(outcomes[CANARY]).toEqual({ result: 'applied', message: undefined });
  const after = Object.fromEntries(ALL.map((n) => [n, nodesOf(n)]));
  expect(after[CANARY].launch).toEqual({
    ...before[CANARY].launch,
    versions: [1, 2],
    securityGroups: 'NetworkInterfaces',
  });
  expect(after[CANARY].status).toBe('UPDATE_COMPLETE');
  expect(after[CANARY].changeSets.length).toBeGreaterThan(before[CANARY].changeSets.length);
  const logs = run.logs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { cluster?: string; msg?: string });
  const rolling = logs.filter((l) => l.cluster === CANARY && l.msg?.startsWith('rolling the nodes'));
  expect(rolling.length).toBeGreaterThan(0);
  for (const l of rolling)
    expect(l.msg).toMatch(
      /^rolling the nodes \(release [^:]*: launch template: NetworkInterfaces, SecurityGroupIds\); the node config \w+ is unchanged/,
    );
  const canary = stateFile(world, CANARY).status;
  expect(canary.lastConfigChange).toMatch(cause('NetworkInterfaces, SecurityGroupIds'));
  expect(canary.cloudConfigChecksum).toBe(oldChecksums[CANARY]);
  expect(canary.rollKey).toBe(canary.desiredRollKey);
  expect(canary.pendingRoll).toBeUndefined();
  expect(getCondition(canary, 'Ready')).toMatchObject({ status: 'True' });

  // and the other two wait for the canary's wave and its soak (Progressing False, WaitingForWave): their stacks not
  // updated (no change set made, no event, the same launch template version, the same launch configuration), each
  // naming what would replace its nodes: the launch template's interface, the launch configuration's public IP
  const why: Record<string, string> = {
    [MAIN]: 'NetworkInterfaces, SecurityGroupIds',
    [LEGACY]: 'AssociatePublicIpAddress',
  };
  for (const n of [MAIN, LEGACY]) {
    expect(outcomes[n]?.result).toBe('held');
    // (while the canary rolls, or once it has settled and soaks: the held ones may be looked at again meanwhile)
    expect(outcomes[n]?.message).toMatch(
      /^wave remainder \(2 of 2\) waits for wave canary(: canary-1 has not settled on the new config yet| to soak 1h: canary-1 settled less than 1h ago;)/,
    );
    expect(after[n]).toEqual(before[n]);
    const s = stateFile(world, n).status;
    expect(getCondition(s, 'Progressing')).toMatchObject({ status: 'False', reason: 'WaitingForWave' });
    expect(getCondition(s, 'Ready')).toMatchObject({ status: 'False', reason: 'WaitingForWave' });
    expect(s.rollout).toMatchObject({ policy: 'fleet', wave: 'remainder' });
    expect(s.pendingRoll).toMatch(cause(why[n]));
    expect(getCondition(s, 'Progressing')?.message).toContain(`(replaces nodes: ${s.pendingRoll}; `);
    expect(s.rollKey).toMatch(/^rk2:/);
    expect(s.desiredRollKey).toMatch(/^rk2:/);
    expect(s.desiredRollKey).not.toBe(s.rollKey);
    // (the config is the one 8909f17 made live: nothing but the code makes this roll)
    expect([s.cloudConfigChecksum, s.desiredChecksum]).toEqual([oldChecksums[n], oldChecksums[n]]);
  }
  // (No cluster of 8909f17 keeps its template under this code, so none shows an upgrade that replaces nothing: every
  // launch template moves its security groups onto an interface, every launch configuration gains
  // AssociatePublicIpAddress, as the held clusters' causes say.)
}, 300_000);
