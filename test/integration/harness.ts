import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  CloudFormationClient,
  DescribeStacksCommand,
  ListChangeSetsCommand,
  DescribeStackEventsCommand,
} from '@aws-sdk/client-cloudformation';
import { ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateSubnetCommand, CreateVpcCommand, DescribeImagesCommand, EC2Client } from '@aws-sdk/client-ec2';
import { stringify } from 'yaml';
import { runCli } from '../../lib/adapters/cli/program';
import { configBucketName } from '../../lib/core/naming';
import { rawExample, tempDir } from '../helpers/clusters';
import { Json } from '../helpers/json';
import { Moto, MOTO_ACCOUNT, MOTO_REGION, MotoWrapper, startMoto } from '../helpers/moto';

/** A moto server with a VPC, two subnets, an AMI, the bootstrap stack (the config bucket) and an empty clusters directory. */
export interface World {
  readonly moto: Moto;
  readonly dir: string;
  readonly net: { vpcId: string; subnetIds: string[]; azs: string[]; ami: string };
  readonly bucket: string;
  readonly cfn: CloudFormationClient;
  readonly s3: S3Client;
}

/** Flags every AWS command gets against moto. */
export const AWS_FLAGS = ['--s3-force-path-style', '--poll-seconds', '1'];

/**
 * Starts moto (or, with `wrapper`, the project's wrapper of it) for this test file, or takes the jest worker's shared one,
 * reset (test/helpers/moto.ts), and points the SDK at it (process.env is per test file under jest).
 * TMPDIR and the synthesis work dir are per file too, so that parallel files keep their scratch apart.
 */
export async function startWorld(wrapper?: MotoWrapper): Promise<World> {
  const moto = await startMoto(30_000, {}, wrapper);
  Object.assign(process.env, moto.env, {
    TMPDIR: tempDir('tmp'),
    WORKER_STACKS_WORK_DIR: tempDir('work'),
    // A failed update is retried after ~1 s, not 24-36 s of idle wall time (lib/adapters/cli/wiring.ts's test seam; the
    // daemons these tests spawn inherit it). Attempts, stalls and their order are as they are in production.
    WORKER_STACKS_RETRY_BASE_MS: '1000',
  });
  const dir = tempDir('clusters');
  const net = await network();
  const world = {
    moto,
    dir,
    net,
    bucket: configBucketName(MOTO_ACCOUNT, MOTO_REGION),
    cfn: new CloudFormationClient({ region: MOTO_REGION }),
    s3: new S3Client({ region: MOTO_REGION, forcePathStyle: true }),
  };
  const boot = await cli(['bootstrap', '--region', MOTO_REGION, '--clusters', dir, ...AWS_FLAGS]);
  if (boot.code !== 0) throw new Error(`bootstrap failed: ${boot.err}${boot.logs}`);
  return world;
}

/**
 * A VPC with two subnets and one of moto's Amazon AMIs, made with the SDK in this process (a boto3 snippet started a
 * Python process for it: ~0.5 s of CPU in every file that starts a world).
 */
async function network(): Promise<World['net']> {
  const ec2 = new EC2Client({ region: MOTO_REGION });
  try {
    const vpcId = (await ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }))).Vpc!.VpcId!;
    const azs = ['eu-west-1a', 'eu-west-1b'];
    const subnetIds: string[] = [];
    for (const [i, az] of azs.entries()) {
      const subnet = await ec2.send(
        new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: `10.0.${i}.0/24`, AvailabilityZone: az }),
      );
      subnetIds.push(subnet.Subnet!.SubnetId!);
    }
    const ami = (await ec2.send(new DescribeImagesCommand({ Owners: ['amazon'] }))).Images![0].ImageId!;
    return { vpcId, subnetIds, azs, ami };
  } finally {
    ec2.destroy();
  }
}

export async function stopWorld(world: World | undefined): Promise<void> {
  world?.cfn.destroy();
  world?.s3.destroy();
  await world?.moto.stop();
}

/** staging-us1 moved into moto's account and region, on the world's network, named `name`. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests reshape the raw object freely
export function motoCluster(world: World, name: string, mutate: (raw: any) => void = () => undefined): any {
  const raw = rawExample('staging-us1');
  raw.metadata.name = name;
  Object.assign(raw.spec, { account: MOTO_ACCOUNT, region: MOTO_REGION });
  raw.spec.network = { vpcId: world.net.vpcId, availabilityZones: world.net.azs, subnetIds: world.net.subnetIds };
  raw.spec.pool.machineImage = world.net.ami;
  raw.spec.cloudConfig.values.bootstrapTokenSecretArn = `arn:aws:secretsmanager:${MOTO_REGION}:${MOTO_ACCOUNT}:secret:worker-stacks/${name}/kubelet-bootstrap-XyZ123`;
  mutate(raw);
  return raw;
}

/**
 * The moto example moved to spec.pools (issue 23): `default` as spec.pool was, and a spot pool (its own stack) with a
 * label of its own and every node above the base on spot.
 */
export function pooledMotoCluster(
  world: World,
  name: string,
  spotLabel = 'spot',
  mutate: (raw: Json) => void = () => undefined,
): Json {
  return motoCluster(world, name, (raw: Json) => {
    const pool = raw.spec.pool;
    delete raw.spec.pool;
    raw.spec.pools = [
      { name: 'default', ...pool },
      {
        name: 'spot',
        ...pool,
        labels: { 'example.com/capacity': spotLabel },
        capacity: { onDemandPercentageAboveBaseCapacity: 0 },
      },
    ];
    mutate(raw);
  });
}

export function writeCluster(world: World, raw: { metadata: { name: string } }): string {
  const file = path.join(world.dir, `${raw.metadata.name}.yaml`);
  fs.writeFileSync(file, stringify(raw));
  return file;
}

export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
  /** The JSON log lines (pino writes them to stderr). */
  readonly logs: string;
}

/**
 * `worker-stacks <args>` in-process, with its output and its log captured. A `reconcile` that names no
 * `--synth-threads` synthesizes in this thread (`--synth-threads 0`): each call would otherwise start threads that load
 * aws-cdk-lib and the sources again (~2 s of CPU per thread, per call), where this thread has them loaded once per file.
 * A thread's stacks are byte for byte this thread's (test/engines/synthesis/synth-pool.test.ts), and the daemons these
 * tests spawn as processes (two-quick-edits-moto, the playground) synthesize in their default threads.
 */
export async function cli(args: readonly string[]): Promise<CliRun> {
  if (args[0] === 'reconcile' && !args.includes('--synth-threads')) args = [...args, '--synth-threads', '0'];
  let out = '';
  let err = '';
  let logs = '';
  const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    logs += String(chunk);
    return true;
  });
  try {
    const code = await runCli(args, { out: (t) => (out += t), err: (t) => (err += t) });
    return { code, out, err, logs };
  } finally {
    spy.mockRestore();
  }
}

/** The state file the file store keeps beside the objects (resourceVersion, generation, status). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- read as stored
export function stateFile(world: World, name: string): any {
  return JSON.parse(fs.readFileSync(path.join(world.dir, '.status', `${name}.json`), 'utf8'));
}

/** Every version of every object in the config bucket: what an upload would change. */
export async function bucketVersions(world: World): Promise<string[]> {
  const r = await world.s3.send(new ListObjectVersionsCommand({ Bucket: world.bucket }));
  return (r.Versions ?? []).map((v) => `${v.Key}@${v.VersionId}`).sort();
}

/** The stack, or undefined when CloudFormation says it does not exist. */
export async function stackOf(world: World, stackName: string) {
  try {
    return (await world.cfn.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
  } catch (e) {
    if (/does not exist/.test((e as Error).message)) return undefined;
    throw e;
  }
}

/** What a deploy leaves behind on a stack: its change sets and its events. */
export async function stackActivity(
  world: World,
  stackName: string,
): Promise<{ changeSets: string[]; events: number; status?: string }> {
  const sets = await world.cfn.send(new ListChangeSetsCommand({ StackName: stackName }));
  const events = await world.cfn.send(new DescribeStackEventsCommand({ StackName: stackName }));
  const stack = await stackOf(world, stackName);
  return {
    changeSets: (sets.Summaries ?? []).map((s) => `${s.ChangeSetName}:${s.ExecutionStatus}`).sort(),
    events: events.StackEvents?.length ?? 0,
    status: stack?.StackStatus,
  };
}

/** User data of every version of the stack's launch template, decoded, oldest first. */
export function launchTemplateUserData(world: World, stackName: string): { version: number; userData: string }[] {
  return world.moto.python(
    `
res = cfn.describe_stack_resources(StackName=args)['StackResources']
# moto leaves ResourceType out for some resource types it only stores (the lifecycle hook, for one)
lt = [r['PhysicalResourceId'] for r in res if r.get('ResourceType') == 'AWS::EC2::LaunchTemplate']
assert len(lt) == 1, f'expected one launch template in {args}, found {lt}'
key = dict(LaunchTemplateId=lt[0]) if lt[0].startswith('lt-') else dict(LaunchTemplateName=lt[0])
vs = ec2.describe_launch_template_versions(**key)['LaunchTemplateVersions']
out = sorted([dict(version=v['VersionNumber'], userData=base64.b64decode(v['LaunchTemplateData'].get('UserData', '')).decode()) for v in vs], key=lambda v: v['version'])
`,
    stackName,
  );
}
