import { Json } from '../../helpers/json';

/*
 * What a resource claims by name, read from the synthesized templates of one cluster: its physical name, or the name it
 * takes on another resource (an inline policy's name on its role, a rule's ports and source on its security group, a
 * listener's port on its load balancer), or the one slot it fills on another (a queue's only policy). Two resources with
 * the same claim are one thing to AWS: the last stack to write it wins, and deleting either stack removes it under the
 * other. References are followed through Fn::ImportValue to the resource the shared stack exports, so a pool stack's
 * claim on the shared role is the shared stack's role, as the shared stack's own claims are.
 */

/** A claim and the resource (`<stack>/<logical id>`) that makes it. */
export interface Claim {
  readonly claim: string;
  readonly owner: string;
}

type Templates = ReadonlyMap<string, Json>;
type Resolve = (value: unknown) => string;

/** Physical names that are unique in an account and region (their type, the property). */
const PHYSICAL_NAMES: Readonly<Record<string, string>> = {
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::InstanceProfile': 'InstanceProfileName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::AutoScaling::AutoScalingGroup': 'AutoScalingGroupName',
  'AWS::AutoScaling::LaunchConfiguration': 'LaunchConfigurationName',
  'AWS::EC2::LaunchTemplate': 'LaunchTemplateName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::Events::Rule': 'Name',
  'AWS::ElasticLoadBalancingV2::LoadBalancer': 'Name',
  'AWS::ElasticLoadBalancingV2::TargetGroup': 'Name',
  'AWS::S3::Bucket': 'BucketName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::SSM::Parameter': 'Name',
};

/** Resources of which a target takes one only (a second replaces the first): their type, the property naming the targets. */
const ONE_PER_TARGET: Readonly<Record<string, string>> = {
  'AWS::SQS::QueuePolicy': 'Queues',
  'AWS::SNS::TopicPolicy': 'Topics',
  'AWS::S3::BucketPolicy': 'Bucket',
};

/** Every claim of every resource of one cluster's stacks (`templates`: the cluster's templates by stack name). */
export function claimsOf(templates: Templates): Claim[] {
  const out: Claim[] = [];
  for (const [stack, template] of templates) {
    const resolve: Resolve = (value) => resolveIn(templates, stack, value);
    for (const [id, resource] of Object.entries((template.Resources ?? {}) as Record<string, Json>)) {
      for (const claim of resourceClaims(resource.Type as string, resource.Properties ?? {}, resolve))
        out.push({ claim, owner: `${stack}/${id}` });
    }
  }
  return out;
}

/** The claims made by resources of more than one stack: `claim` and the owners, sorted; empty when every claim is one stack's. */
export function sharedClaims(claims: readonly Claim[]): { claim: string; owners: string[] }[] {
  const byClaim = new Map<string, string[]>();
  for (const c of claims) byClaim.set(c.claim, [...(byClaim.get(c.claim) ?? []), c.owner]);
  const stackOf = (owner: string) => owner.slice(0, owner.lastIndexOf('/'));
  return [...byClaim]
    .filter(([, owners]) => new Set(owners.map(stackOf)).size > 1)
    .map(([claim, owners]) => ({ claim, owners: [...owners].sort() }))
    .sort((a, b) => (a.claim < b.claim ? -1 : 1));
}

function resourceClaims(type: string, p: Json, resolve: Resolve): string[] {
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);
  switch (type) {
    case 'AWS::IAM::Policy':
      return [
        ...list(p.Roles).map((r) => `inline policy ${resolve(p.PolicyName)} of role ${resolve(r)}`),
        ...list(p.Users).map((u) => `inline policy ${resolve(p.PolicyName)} of user ${resolve(u)}`),
        ...list(p.Groups).map((g) => `inline policy ${resolve(p.PolicyName)} of group ${resolve(g)}`),
      ];
    case 'AWS::IAM::RolePolicy':
      return [`inline policy ${resolve(p.PolicyName)} of role ${resolve(p.RoleName)}`];
    case 'AWS::EC2::SecurityGroupIngress':
    case 'AWS::EC2::SecurityGroupEgress': {
      // A rule is its group, protocol, ports and peer: EC2 keeps one of each, whatever the descriptions say.
      const peer = [
        p.CidrIp,
        p.CidrIpv6,
        p.SourceSecurityGroupId,
        p.SourceSecurityGroupName,
        p.SourcePrefixListId,
        p.DestinationSecurityGroupId,
        p.DestinationPrefixListId,
      ].find((v) => v !== undefined);
      const direction = type.endsWith('Ingress') ? 'ingress' : 'egress';
      return [
        `${direction} ${resolve(p.IpProtocol)} ${resolve(p.FromPort)}-${resolve(p.ToPort)} ${resolve(peer)} on ${resolve(p.GroupId ?? p.GroupName)}`,
      ];
    }
    case 'AWS::EC2::SecurityGroup':
      return p.GroupName === undefined ? [] : [`security group ${resolve(p.GroupName)} in ${resolve(p.VpcId)}`];
    case 'AWS::AutoScaling::LifecycleHook':
      return p.LifecycleHookName === undefined
        ? []
        : [`lifecycle hook ${resolve(p.LifecycleHookName)} of group ${resolve(p.AutoScalingGroupName)}`];
    case 'AWS::ElasticLoadBalancingV2::Listener':
      return [`listener ${resolve(p.Port)} of load balancer ${resolve(p.LoadBalancerArn)}`];
    case 'AWS::ElasticLoadBalancingV2::ListenerRule':
      return [`listener rule ${resolve(p.Priority)} of listener ${resolve(p.ListenerArn)}`];
  }
  const named = PHYSICAL_NAMES[type];
  if (named && p[named] !== undefined) return [`${type} named ${resolve(p[named])}`];
  const target = ONE_PER_TARGET[type];
  if (target) return list(p[target]).map((t) => `${type} of ${resolve(t)}`);
  return [];
}

/** Pseudo parameters that are the same in every stack of a cluster (its stacks share an account and region). */
const SAME_IN_EVERY_STACK = new Set(['AWS::AccountId', 'AWS::Region', 'AWS::Partition', 'AWS::URLSuffix']);

/**
 * A value as the same string in every stack that names the same thing: a resource as `<stack>/<logical id>` (Ref and
 * Fn::GetAtt alike), an import as what its exporter exports, a pseudo parameter as the stack's own.
 */
function resolveIn(templates: Templates, stack: string, value: unknown): string {
  const again = (v: unknown) => resolveIn(templates, stack, v);
  if (value === null || typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return `[${value.map(again).join(',')}]`;
  const v = value as Json;
  if (typeof v.Ref === 'string') return SAME_IN_EVERY_STACK.has(v.Ref) ? v.Ref : `${stack}/${v.Ref}`;
  if (Array.isArray(v['Fn::GetAtt'])) return `${stack}/${v['Fn::GetAtt'][0]}`;
  if (v['Fn::ImportValue'] !== undefined) {
    const name = again(v['Fn::ImportValue']);
    for (const [exporter, template] of templates) {
      for (const output of Object.values((template.Outputs ?? {}) as Record<string, Json>)) {
        if (output.Export && resolveIn(templates, exporter, output.Export.Name) === name)
          return resolveIn(templates, exporter, output.Value);
      }
    }
    return `import ${name}`;
  }
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${k}:${again(v[k])}`)
    .join(',')}}`;
}
