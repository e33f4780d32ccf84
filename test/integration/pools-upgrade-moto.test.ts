import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { listTemplates } from '../../lib/model/cloudconfig/templates';
import { DEFAULT_TEMPLATES_DIR, defaultTemplates } from '../../lib/platform/files/template-directory';
import { poolStackName, workerStackName } from '../../lib/core/naming';
import { synthesizeStack } from '../../lib/engines/synthesis/synthesize';
import { tempDir, validated } from '../helpers/clusters';
import { checkoutRelease } from '../helpers/old-release';
import { Json } from '../helpers/json';
import { requireTool } from '../helpers/tools';
import { motoCluster, startWorld, stopWorld, World } from './harness';

/**
 * Issue 23 item 6, on moto: a live stack made by the release before node pools keeps every physical resource when the
 * new code synthesizes the unchanged single-pool object, and when the object moves to spec.pools (its pool as default,
 * plus a pool of its own stack). The "before" template is synthesized by the code of the commit before this work
 * (BEFORE_POOLS, checked out of git into a scratch directory), not taken from test/engines/reconciler/golden: the golden
 * file holds only hashes, and only of the examples, whose networks and accounts are not moto's.
 */
const BEFORE_POOLS = 'd825050';
const NAME = 'upgrade-1';

let world: World;
let oldDir: string;
beforeAll(async () => {
  oldDir = checkoutRelease(BEFORE_POOLS, 'the commit before node pools');
  world = await startWorld({ inProgressSeconds: 0 });
}, 180_000);
afterAll(async () => {
  await stopWorld(world);
  if (oldDir) fs.rmSync(oldDir, { recursive: true, force: true });
});

/** The template the release before pools deploys for `raw` (validated and synthesized by that release's own code). */
function synthesizeBefore(raw: Json): string {
  const script = `
require('ts-node/register/transpile-only');
const dir = process.env.OLD_DIR;
const { validateCluster } = require(dir + '/lib/model/cluster/validate');
const { listTemplates } = require(dir + '/lib/model/cloudconfig/templates');
const { synthesizeStack } = require(dir + '/lib/engines/synthesis/synthesize');
const templatesDir = dir + '/cloudconfig';
const v = validateCluster(JSON.parse(process.env.RAW), { file: 'clusters/' + JSON.parse(process.env.RAW).metadata.name + '.yaml', templates: listTemplates(templatesDir), templatesDir });
if (!v.cluster) throw new Error(JSON.stringify(v.problems));
const s = synthesizeStack(v.cluster, { templatesDir, workDir: process.env.WORK, fingerprint: 'b'.repeat(64), nag: false });
process.stdout.write(s.templateBody);
`;
  const r = spawnSync(process.execPath, ['-e', script], {
    cwd: oldDir,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...process.env,
      OLD_DIR: oldDir,
      RAW: JSON.stringify(raw),
      WORK: tempDir('before-work'),
      TS_NODE_PROJECT: path.join(oldDir, 'tsconfig.json'),
    },
  });
  if (r.status !== 0) throw new Error(`the code of ${BEFORE_POOLS} did not synthesize: ${r.stderr}`);
  return r.stdout;
}

/** The template (and stack name) the new code synthesizes for `raw`. */
function synthesizeNow(raw: Json, stackName?: string): string {
  const cluster = validated(raw, `clusters/${NAME}.yaml`);
  void listTemplates(defaultTemplates());
  return synthesizeStack(cluster, {
    templatesDir: DEFAULT_TEMPLATES_DIR,
    workDir: tempDir('now-work'),
    fingerprint: 'a'.repeat(64),
    nag: false,
    stackName,
  }).templateBody;
}

/**
 * Creates or updates a stack from a template body through a change set, as the reconciler and `cdk deploy` do, and waits
 * until it settles; returns its status.
 */
function deploy(stackName: string, body: string, create: boolean): string {
  return world.moto.python<string>(
    `
import time
kw = dict(StackName=args['name'], TemplateBody=args['body'], Capabilities=['CAPABILITY_IAM', 'CAPABILITY_NAMED_IAM'])
cs = cfn.create_change_set(ChangeSetName='upgrade', ChangeSetType='CREATE' if args['create'] else 'UPDATE', **kw)['Id']
for _ in range(120):
    d = cfn.describe_change_set(ChangeSetName=cs)
    if d['Status'] in ('CREATE_COMPLETE', 'FAILED'):
        break
    time.sleep(0.25)
assert d['Status'] == 'CREATE_COMPLETE', d.get('StatusReason')
cfn.execute_change_set(ChangeSetName=cs)
for _ in range(240):
    s = cfn.describe_stacks(StackName=args['name'])['Stacks'][0]['StackStatus']
    if not s.endswith('_IN_PROGRESS'):
        break
    time.sleep(0.25)
cfn.delete_change_set(ChangeSetName=cs)
out = s
`,
    { name: stackName, body, create },
  );
}

/**
 * The properties CloudFormation sets only when it creates a resource (a change replaces the resource), by type, from
 * the resource provider schemas cfn-lint ships (the pinned cfn-lint of .ci/install-tools).
 */
function createOnlyProperties(types: readonly string[]): Record<string, string[]> {
  const r = spawnSync(
    requireTool('python3'),
    [
      '-c',
      `
import json, os, sys, cfnlint
d = os.path.join(os.path.dirname(cfnlint.__file__), 'data', 'schemas')
index = json.load(open(os.path.join(d, 'providers', 'eu-west-1.json')))
out = {}
for t in json.loads(sys.argv[1]):
    schema = json.load(open(os.path.join(d, 'resources', index[t] + '.json')))
    out[t] = [p.split('/')[2] for p in schema.get('createOnlyProperties', [])]
print(json.dumps(out))
`,
      JSON.stringify(types),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0)
    throw new Error(`cfn-lint's schemas could not be read (install it with bash .ci/install-tools): ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, string[]>;
}

/** Logical id -> physical id of every resource of a stack. */
function physicalIds(stackName: string): Record<string, string> {
  return world.moto.python<Record<string, string>>(
    `
res = cfn.describe_stack_resources(StackName=args)['StackResources']
# moto leaves the logical id (and type) out of the resources it only stores (the lifecycle hook, for one): those are
# named by their physical id, so a replacement still shows as one missing and one new entry
out = {r.get('LogicalResourceId') or f"?{r.get('PhysicalResourceId')}": r.get('PhysicalResourceId') for r in res}
`,
    stackName,
  );
}

test('a stack of the release before pools keeps every physical resource: unchanged object, then moved to spec.pools with a second pool', () => {
  // GIVEN a single-pool object deployed with the template of the release before pools
  const raw = motoCluster(world, NAME);
  const before = synthesizeBefore(raw);
  const shared = workerStackName(NAME);
  expect(deploy(shared, before, true)).toBe('CREATE_COMPLETE');
  const idsBefore = physicalIds(shared);
  const types = Object.values<Json>(JSON.parse(before).Resources).map((r) => r.Type as string);
  expect(types).toEqual(
    expect.arrayContaining([
      'AWS::AutoScaling::AutoScalingGroup',
      'AWS::EC2::LaunchTemplate',
      'AWS::EC2::SecurityGroup',
    ]),
  );

  // WHEN the new code synthesizes (a) the unchanged object
  const unchanged = synthesizeNow(raw);
  // THEN it is the same template, byte for byte: nothing to update, nothing replaced
  expect(unchanged).toBe(before);

  // WHEN (b) the object moves to spec.pools (its pool as default, and a pool spot in its own stack), and the shared
  // stack is updated, then the pool's stack created
  const moved = motoCluster(world, NAME, (r) => {
    r.spec.pools = [
      { name: 'default', ...r.spec.pool },
      {
        ...r.spec.pool,
        name: 'spot',
        labels: { 'node.kubernetes.io/pool': 'spot' },
        capacity: { onDemandPercentageAboveBaseCapacity: 0 },
      },
    ];
    delete r.spec.pool;
  });
  const sharedNow = synthesizeNow(moved);
  expect(sharedNow).not.toBe(before);
  expect(deploy(shared, sharedNow, false)).toBe('UPDATE_COMPLETE');
  const pool = poolStackName(NAME, 'spot');
  expect(deploy(pool, synthesizeNow(moved, pool), true)).toBe('CREATE_COMPLETE');

  // THEN no resource of the old stack is replaced by CloudFormation: each is still there, of the same type, and no
  // property CloudFormation can only set at creation (the type's createOnlyProperties) changed; what changed is updated
  // in place (the group's tags, the drain rule's pattern and the handler policy's document)
  const oldResources = JSON.parse(before).Resources as Record<string, Json>;
  const newResources = JSON.parse(sharedNow).Resources as Record<string, Json>;
  const createOnly = createOnlyProperties([...new Set(types)]);
  const inPlace: string[] = [];
  const replacing: string[] = [];
  for (const [id, r] of Object.entries(oldResources)) {
    const now = newResources[id];
    if (now?.Type !== r.Type) {
      replacing.push(`${id}: gone or another type`);
      continue;
    }
    const keys = new Set([...Object.keys(r.Properties ?? {}), ...Object.keys(now.Properties ?? {})]);
    const changed = [...keys].filter((k) => JSON.stringify(r.Properties?.[k]) !== JSON.stringify(now.Properties?.[k]));
    for (const k of changed) (createOnly[r.Type as string].includes(k) ? replacing : inPlace).push(`${id}.${k}`);
  }
  expect(replacing).toEqual([]);
  expect(inPlace.sort()).toEqual([
    'DrainHandlerPolicyD897D235.PolicyDocument',
    'DrainTerminationRule9E06FBEF.EventPattern',
    'PoolGroupASG2416841C.Tags',
  ]);
  // and on moto, every resource whose properties did not change keeps its physical id (moto itself recreates a resource
  // on any property change, which CloudFormation does only for the createOnlyProperties checked above)
  const idsAfter = physicalIds(shared);
  const touched = new Set(inPlace.map((x) => x.split('.')[0]));
  const moved2 = Object.keys(idsBefore).filter((id) => !touched.has(id) && idsAfter[id] !== idsBefore[id]);
  expect(moved2).toEqual([]);
  const poolIds = physicalIds(pool);
  expect(Object.keys(poolIds)).toEqual(expect.arrayContaining(['PoolGroupASG2416841C', 'PoolLaunchTemplate4F481BED']));
  expect(poolIds.PoolGroupASG2416841C).not.toBe(idsAfter.PoolGroupASG2416841C);
}, 300_000);
