import { CLUSTER_TAG, configBucketName, poolStackName, workerStackName } from '../../lib/core/naming';
import { poolsVariant, synthAll } from '../engines/stacks/pool-helpers';
import { example } from '../helpers/clusters';
import { synthCluster } from '../helpers/synth';
import { ACCOUNT, bootstrapPolicies, CLUSTER, decide, PolicyDocument, REGION } from './iam-eval';
import { Json } from '../helpers/json';

/**
 * What a worker node can read, proven with @cloud-copilot/iam-simulate: the node role's own policy (from the
 * synthesized worker template) capped by the account's node boundary (from the bootstrap template). A node reads
 * its own cluster's config objects and secrets under worker-stacks/<cluster>/, signals its own stack, and only with
 * an EC2 instance's credentials: whatever secret a cluster object names, and whoever a role's trust admits.
 */
const STACK_ID = `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/WorkerStack-${CLUSTER}/0a1b2c3d-0000-0000-0000-000000000000`;
const NODE_ROLE = `arn:aws:iam::${ACCOUNT}:role/worker-stacks/WorkerStack-${CLUSTER}-PoolRole689224AE-AbC123`;
const FOREIGN_SECRET = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:team-db/password-Zz9Yy8`;

/** Fn::Join, the partition and the stack id as CloudFormation resolves them in prod-eu1's stack. */
function resolve(v: Json): Json {
  if (Array.isArray(v)) return v.map(resolve);
  if (v && typeof v === 'object') {
    if (v.Ref === 'AWS::Partition') return 'aws';
    if (v.Ref === 'AWS::StackId') return STACK_ID;
    if ('Fn::Join' in v) return (resolve(v['Fn::Join'][1]) as string[]).join(v['Fn::Join'][0]);
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
  }
  return v;
}

/** The node role's inline policy of a cluster's worker stack, resolved. */
function nodePolicy(json: Json): PolicyDocument {
  const policies = Object.values<Json>(json.Resources).filter(
    (r) => r.Type === 'AWS::IAM::Policy' && JSON.stringify(r.Properties.Roles).includes('PoolRole'),
  );
  return { Version: '2012-10-17', Statement: policies.flatMap((p) => resolve(p.Properties.PolicyDocument).Statement) };
}

const onInstance = {
  [`aws:PrincipalTag/${CLUSTER_TAG}`]: CLUSTER,
  'aws:EC2InstanceSourceVPC': 'vpc-0a1b2c3d4e5f60718',
};
// The role's session without EC2 instance credentials: someone a trust policy admits, assuming it.
const elsewhere = { [`aws:PrincipalTag/${CLUSTER_TAG}`]: CLUSTER };

let boundary: PolicyDocument;
let node: PolicyDocument;
let nodeNamingForeign: PolicyDocument;
beforeAll(() => {
  boundary = bootstrapPolicies().boundary;
  const cluster = example(CLUSTER);
  node = nodePolicy(synthCluster(cluster).json);
  // An object that names another team's secret. Validation refuses it (test/model/cluster/aws-strings.test.ts); IAM must
  // deny it all the same, so the validated object is changed after validation, as a bypass of it would.
  const foreign = example(CLUSTER);
  foreign.spec.cloudConfig.values.bootstrapTokenSecretArn = FOREIGN_SECRET;
  nodeNamingForeign = nodePolicy(synthCluster(foreign).json);
});

const bucket = `arn:aws:s3:::${configBucketName(ACCOUNT, REGION)}`;
/** A role policy that would let the node signal any stack: what is left is the boundary's doing. */
const ANY_STACK: PolicyDocument = {
  Version: '2012-10-17',
  Statement: [{ Effect: 'Allow', Action: 'cloudformation:SignalResource', Resource: '*' }],
};
/** The example's bootstrap secret (its template, flatcar-worker, requires one). */
const ownSecret = (): string => example(CLUSTER).spec.cloudConfig.values.bootstrapTokenSecretArn!;

test.each([
  [
    'its own bootstrap secret, on the instance',
    () => node,
    'secretsmanager:GetSecretValue',
    ownSecret,
    onInstance,
    'Allowed',
  ],
  [
    'its own secret, as a principal that assumed the role (not EC2 instance credentials)',
    () => node,
    'secretsmanager:GetSecretValue',
    ownSecret,
    elsewhere,
    'ImplicitlyDenied',
  ],
  [
    "another team's secret its object names",
    () => nodeNamingForeign,
    'secretsmanager:GetSecretValue',
    () => FOREIGN_SECRET,
    onInstance,
    'ExplicitlyDenied',
  ],
  [
    "another cluster's secret",
    () => nodeNamingForeign,
    'secretsmanager:GetSecretValue',
    () => `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:worker-stacks/staging-us1/kubelet-bootstrap-XyZ123`,
    onInstance,
    'ExplicitlyDenied',
  ],
  [
    'a secret of a cluster whose name extends its own',
    () => node,
    'secretsmanager:GetSecretValue',
    () => `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:worker-stacks/${CLUSTER}-x/token-AbCdEf`,
    onInstance,
    'ExplicitlyDenied',
  ],
  [
    'its own config object',
    () => node,
    's3:GetObject',
    () => `${bucket}/clusters/${CLUSTER}/0123abcd.ign`,
    onInstance,
    'Allowed',
  ],
  [
    "another cluster's config object",
    () => node,
    's3:GetObject',
    () => `${bucket}/clusters/staging-us1/0123abcd.ign`,
    onInstance,
    'ImplicitlyDenied',
  ],
  [
    'its config object, as a principal that assumed the role',
    () => node,
    's3:GetObject',
    () => `${bucket}/clusters/${CLUSTER}/0123abcd.ign`,
    elsewhere,
    'ImplicitlyDenied',
  ],
  [
    'its readiness signal to its own stack',
    () => node,
    'cloudformation:SignalResource',
    () => STACK_ID,
    onInstance,
    'Allowed',
  ],
  [
    "a signal to another cluster's stack",
    () => node,
    'cloudformation:SignalResource',
    () => `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/WorkerStack-staging-us1/1`,
    onInstance,
    'ImplicitlyDenied',
  ],
  // The boundary alone (under a role policy that would allow every stack): the cap a node's role can never exceed.
  [
    'a signal to a pool stack of its own cluster, under a role policy allowing every stack',
    () => ANY_STACK,
    'cloudformation:SignalResource',
    () => `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${poolStackName(CLUSTER, 'spot')}/1`,
    onInstance,
    'Allowed',
  ],
  [
    'a signal to the stack of a cluster named <own>-pool-spot, under a role policy allowing every stack',
    () => ANY_STACK,
    'cloudformation:SignalResource',
    () => `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${workerStackName(`${CLUSTER}-pool-spot`)}/1`,
    onInstance,
    'ImplicitlyDenied',
  ],
])('a node asks for %s', async (_, policy, action, resource, context, expected) => {
  // GIVEN the node role's policy and the account's node boundary
  // WHEN the node (or someone holding its role) asks
  const d = await decide([policy()], { principal: NODE_ROLE, action, resource: resource(), context }, boundary);
  // THEN
  expect(d).toBe(expected);
});

test('the boundary alone grants nothing: a role with an admin policy under it still reads only its cluster', async () => {
  const admin: PolicyDocument = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] };
  expect(
    await decide(
      [admin],
      { principal: NODE_ROLE, action: 'secretsmanager:GetSecretValue', resource: FOREIGN_SECRET, context: onInstance },
      boundary,
    ),
  ).toBe('ImplicitlyDenied');
  expect(
    await decide(
      [admin],
      {
        principal: NODE_ROLE,
        action: 'ec2:TerminateInstances',
        resource: `arn:aws:ec2:${REGION}:${ACCOUNT}:instance/i-0123`,
        context: onInstance,
      },
      boundary,
    ),
  ).toBe('ImplicitlyDenied');
  expect(
    await decide(
      [admin],
      { principal: NODE_ROLE, action: 'secretsmanager:GetSecretValue', resource: ownSecret(), context: onInstance },
      boundary,
    ),
  ).toBe('Allowed');
});

test("the node role itself denies every secret outside its cluster's prefix, even one its object names", async () => {
  // GIVEN the role of an object that names another team's secret, without any boundary
  // WHEN / THEN the named secret is denied by the role's own OnlyOwnSecrets statement; its own prefix is not
  expect(
    await decide([nodeNamingForeign], {
      principal: NODE_ROLE,
      action: 'secretsmanager:GetSecretValue',
      resource: FOREIGN_SECRET,
      context: onInstance,
    }),
  ).toBe('ExplicitlyDenied');
  expect(
    await decide([node], {
      principal: NODE_ROLE,
      action: 'secretsmanager:GetSecretValue',
      resource: ownSecret(),
      context: onInstance,
    }),
  ).toBe('Allowed');
});

describe('a node of a pool in its own stack (issue 23)', () => {
  const POOLS = 'pools-eu1';
  const stackId = (name: string) =>
    `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${name}/0a1b2c3d-0000-0000-0000-000000000001`;
  const SPOT_ID = stackId(poolStackName(POOLS, 'spot'));
  /** The shared role's policies in a spec.pools cluster: the shared stack's own, and the spot stack's signal policy. */
  function poolNodePolicy(): PolicyDocument {
    const all = synthAll(poolsVariant());
    const shared = nodePolicy(JSON.parse(all.get(workerStackName(POOLS)) ?? '{}'));
    const spot = JSON.parse(all.get(poolStackName(POOLS, 'spot')) ?? '{}');
    const signal = Object.values<Json>(spot.Resources).filter((r) => r.Type === 'AWS::IAM::Policy');
    const statements = signal.flatMap((p) =>
      (p.Properties.PolicyDocument.Statement as Json[]).map((st) => ({
        ...st,
        Resource: JSON.stringify(st.Resource) === '{"Ref":"AWS::StackId"}' ? SPOT_ID : st.Resource,
      })),
    );
    return { Version: '2012-10-17', Statement: [...shared.Statement, ...statements] };
  }
  const onPoolInstance = { ...onInstance, [`aws:PrincipalTag/${CLUSTER_TAG}`]: POOLS };

  test.each([
    ['its readiness signal to its own pool stack', SPOT_ID, 'Allowed'],
    ["a signal to another cluster's pool stack", stackId(poolStackName('staging-us1', 'spot')), 'ImplicitlyDenied'],
    [
      "a signal to a pool stack its role's policies do not name",
      stackId(poolStackName(POOLS, 'gpu')),
      'ImplicitlyDenied',
    ],
  ])('a pool node asks for %s', async (_, resource, expected) => {
    // GIVEN the shared role's policies (the pool stack attaches its signal policy to it) and the node boundary
    const policy = poolNodePolicy();
    // WHEN the node signals
    const d = await decide(
      [policy],
      {
        principal: `arn:aws:iam::${ACCOUNT}:role/worker-stacks/WorkerStack-${POOLS}-PoolRole689224AE-AbC123`,
        action: 'cloudformation:SignalResource',
        resource,
        context: onPoolInstance,
      },
      boundary,
    );
    // THEN
    expect(d).toBe(expected);
  });
});
