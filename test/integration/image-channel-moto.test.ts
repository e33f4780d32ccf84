import { statusRows } from '../../lib/adapters/stores/status-rows';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { getCondition } from '../../lib/model/cluster/schema/status';
import { workerStackName } from '../../lib/core/naming';
import { AWS_FLAGS, cli, motoCluster, startWorld, stateFile, stopWorld, World, writeCluster } from './harness';
import { DEFAULT_TEMPLATES_DIR } from '../../lib/platform/files/template-directory';

// Issue 36 through the CLI, against moto's SSM and EC2: a pool names an image channel instead of an AMI id; the
// channel's SSM parameter moves to a new image; the daemon's pass reads it once, pins the literal AMI id, and the roll
// goes out as a roll of the stack (the launch template's ImageId); an image of an owner the channel does not trust
// is never pinned. moto refuses parameters under /aws/, so the channel reads an organisation's own path (the public
// paths' shapes are tested on the fake source: test/engines/channels/channel-pins.test.ts).

const NAME = 'on-channel';
const PARAM = '/org/images/x86_64/recommended';
let world: World;
let amis: { first: string; second: string; own: string };

beforeAll(async () => {
  // The wrapper: an image EC2 does not know fails the stack, as Auto Scaling does when it launches from it.
  world = await startWorld({});
  amis = world.moto.python(`
amazon = [i for i in ec2.describe_images(Owners=['amazon'])['Images'] if i['Architecture'] == 'x86_64']
inst = ec2.run_instances(ImageId=amazon[0]['ImageId'], MinCount=1, MaxCount=1)['Instances'][0]['InstanceId']
own = ec2.create_image(InstanceId=inst, Name='own-unreviewed-1')['ImageId']
boto3.client('ssm', **_kw).put_parameter(Name='${PARAM}', Value=amazon[0]['ImageId'], Type='String')
out = dict(first=amazon[0]['ImageId'], second=amazon[1]['ImageId'], own=own)
`);
  fs.mkdirSync(path.join(world.dir, 'image-channels'));
  fs.writeFileSync(
    path.join(world.dir, 'image-channels', 'org-x86.yaml'),
    `apiVersion: worker-stacks.io/v1alpha1\nkind: WorkerImageChannel\nmetadata: { name: org-x86 }\nspec:\n  source: { ssmParameter: ${PARAM} }\n  architecture: x86_64\n  owners: [amazon]\n`,
  );
  writeCluster(world, onChannel());
}, 180_000);
afterAll(() => stopWorld(world));

/** The cluster on the channel; `hold` stages a roll without starting it (spec.rollout.hold). */
function onChannel(hold = false) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw object as the harness builds it
  return motoCluster(world, NAME, (raw: any) => {
    delete raw.spec.pool.machineImage;
    raw.spec.pool.imageChannel = 'org-x86';
    // moto's instances never signal: the roll is the launch template's new version, not a wait for nodes.
    raw.spec.pool.rollingUpdate = { waitOnResourceSignals: false };
    if (hold) raw.spec.rollout = { hold: true };
  });
}

function setParameter(value: string): void {
  world.moto.python(
    `boto3.client('ssm', **_kw).put_parameter(Name='${PARAM}', Value=args, Type='String', Overwrite=True)\nout = None`,
    value,
  );
}

/** The ImageId of the newest version of the stack's launch template. */
function liveImage(): string {
  return world.moto.python<string>(
    `
res = cfn.describe_stack_resources(StackName=args)['StackResources']
lt = [r['PhysicalResourceId'] for r in res if r.get('ResourceType') == 'AWS::EC2::LaunchTemplate'][0]
key = dict(LaunchTemplateId=lt) if lt.startswith('lt-') else dict(LaunchTemplateName=lt)
vs = ec2.describe_launch_template_versions(**key)['LaunchTemplateVersions']
out = max(vs, key=lambda v: v['VersionNumber'])['LaunchTemplateData']['ImageId']
`,
    workerStackName(NAME),
  );
}

const reconcileOnce = () => cli(['reconcile', '--once', '--clusters', world.dir, ...AWS_FLAGS]);

test('a channel through its life: refused before a read, pinned, rolled to a new release, an untrusted image never pinned, a failed release halted and rolled back, a cluster held at an older release', async () => {
  // GIVEN the channel never read
  // WHEN the objects are validated
  const r = await cli(['validate', '--clusters', world.dir]);
  // THEN the pool is refused, naming channels refresh
  expect(r.code).toBe(1);
  expect(r.err).toMatch(
    /on-channel\.yaml: spec\.pool\.imageChannel: WorkerImageChannel org-x86 has no release for eu-west-1 yet.*channels refresh \(rule image-channel\)/,
  );
  // GIVEN the channel read once by `channels refresh`
  const refreshed = await cli(['channels', 'refresh', '--clusters', world.dir]);
  expect(refreshed.code).toBe(0);
  expect(refreshed.out).toMatch(new RegExp(`recorded .* \\(eu-west-1\\)`));
  expect((await cli(['validate', '--clusters', world.dir])).code).toBe(0);

  // WHEN the daemon's pass deploys the cluster
  const first = await reconcileOnce();
  // THEN the launch template runs the pinned image
  expect(first.code).toBe(0);
  expect(liveImage()).toBe(amis.first);

  // WHEN the parameter moves to a new image, and a pass runs (its refresh reads the channel)
  setParameter(amis.second);
  const second = await reconcileOnce();
  // THEN the new release is recorded and rolled out: a new launch template version on the new image, Ready
  expect(second.code).toBe(0);
  expect(second.logs).toMatch(/image channel release recorded/);
  expect(liveImage()).toBe(amis.second);
  expect(getCondition(stateFile(world, NAME).status, 'Ready')?.status).toBe('True');
  // and `worker-stacks status` derives the pool as the daemon does (pinned), so it shows the cluster in sync
  const row = (await statusRows(world.dir, DEFAULT_TEMPLATES_DIR)).find((r) => r.cluster === NAME);
  expect({ inSync: row?.inSync, desired: row?.desiredChecksum }).toEqual({ inSync: true, desired: expect.any(String) });

  // WHEN the parameter names an image of an owner the channel does not trust
  setParameter(amis.own);
  const untrusted = await reconcileOnce();
  // THEN nothing rolls: the pin stays on the last good release and `channels status` says why
  expect(untrusted.code).toBe(0);
  expect(liveImage()).toBe(amis.second);
  const shown = await cli(['channels', 'status', '--clusters', world.dir]);
  expect(shown.out).toMatch(new RegExp(`owned by 123456789012, which the channel does not trust`));
  expect(shown.out).toMatch(new RegExp(`on-channel pool default \\(eu-west-1\\): \\S+ ${amis.second}  runs it`));

  // GIVEN the cluster Ready on the second release, and a third one published whose image is gone by the time the roll
  // launches from it (deregistered after the channel recorded it: its nodes never come up)
  const third = world.moto.python<string>(`
amazon = [i for i in ec2.describe_images(Owners=['amazon'])['Images'] if i['Architecture'] == 'x86_64']
out = amazon[2]['ImageId']
`);
  setParameter(third);
  expect((await cli(['channels', 'refresh', '--clusters', world.dir])).code).toBe(0);
  world.moto.python(`ec2.deregister_image(ImageId=args)\nout = None`, third);

  // WHEN the cluster is held (spec.rollout.hold) and a pass runs
  writeCluster(world, onChannel(true));
  expect((await reconcileOnce()).code).toBe(0);
  // THEN the pool waits for the new release, and `channels status` says for what
  const waiting = await cli(['channels', 'status', '--clusters', world.dir]);
  expect(waiting.out).toMatch(
    new RegExp(`on-channel pool default \\(eu-west-1\\): \\S+ ${third}  waits \\(image\\): Held`),
  );
  // and `rollout status` shows the channel's waves: the cluster runs the second release and waits for the third
  const waves = await cli(['rollout', 'status', '--clusters', world.dir]);
  expect(waves.out).toMatch(
    /channel org-x86: newest release (\S+)\n {2}no policy: 1 wait for \1\n {4}on-channel: runs \S+, waits for \1: .*Held/,
  );
  writeCluster(world, onChannel());

  // WHEN the daemon's pass rolls to it, and the roll fails
  const failed = await reconcileOnce();
  // THEN the stack is back on the second release's image
  expect(failed.code).not.toBe(0);
  expect(liveImage()).toBe(amis.second);

  // WHEN the next pass reads the failure
  const next = await reconcileOnce();
  // THEN the release is halted (the channel's status says by whom), and the pool is pinned to the second release again
  expect(next.logs).toMatch(/image channel release halted/);
  const status = await cli(['channels', 'status', '--clusters', world.dir]);
  expect(status.out).toMatch(/HALTED .*the roll of on-channel to it failed/);
  expect(status.out).toMatch(new RegExp(`on-channel pool default \\(eu-west-1\\): \\S+ ${amis.second}`));
  expect(liveImage()).toBe(amis.second);
  // and the cluster, whose desired image is its live one again, is Ready on it with nothing pending
  const after = stateFile(world, NAME).status;
  expect({ ready: getCondition(after, 'Ready')?.status, pendingRoll: after.pendingRoll }).toEqual({
    ready: 'True',
    pendingRoll: undefined,
  });

  // WHEN an operator holds the cluster at the first release (spec.holds, by name) and a pass runs
  const recorded = JSON.parse(
    fs.readFileSync(path.join(world.dir, 'image-channels', '.status', 'org-x86.json'), 'utf8'),
  ) as { releases: { release: string }[] };
  fs.appendFileSync(
    path.join(world.dir, 'image-channels', 'org-x86.yaml'),
    `  holds:\n    - release: ${JSON.stringify(recorded.releases[0].release)}\n      clusters: [${NAME}]\n`,
  );
  expect((await reconcileOnce()).code).toBe(0);
  // THEN its stack is rolled back to the first release's image, and rollout status says what holds it
  expect(liveImage()).toBe(amis.first);
  expect((await cli(['rollout', 'status', '--clusters', world.dir])).out).toMatch(
    /on-channel: runs \S+ \(held by spec\.holds\[0\]\)/,
  );
});
