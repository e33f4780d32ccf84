import { App, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import {
  DEFAULT_TLS_POLICY,
  listenerConstructId,
  ListenerProps,
  WorkerListeners,
} from '../../../lib/engines/constructs/worker-listeners';
import { Json } from '../../helpers/json';

const LISTENERS: ListenerProps[] = [
  {
    name: 'https',
    protocol: 'TLS',
    port: 443,
    nodePort: 30443,
    certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc',
  },
  { name: 'dns', protocol: 'TCP_UDP', port: 53, nodePort: 30053 },
  { name: 'stun', protocol: 'UDP', port: 3478, nodePort: 31478, healthCheck: { port: 31479 } },
  {
    name: 'web',
    port: 80,
    nodePort: 30080,
    healthCheck: {
      protocol: 'HTTP',
      path: '/healthz',
      port: 10256,
      intervalSeconds: 30,
      healthyThreshold: 2,
      unhealthyThreshold: 5,
    },
  },
  { name: 'api', protocol: 'TCP', port: 6443, nodePort: 30643, healthCheck: { protocol: 'HTTPS' } },
];

function base(pqTls: boolean): { app: App; stack: Stack; vpc: ec2.IVpc; asg: autoscaling.AutoScalingGroup } {
  const app = new App({ context: { [cxapi.ELB_USE_POST_QUANTUM_TLS_POLICY]: pqTls } });
  const stack = new Stack(app, 'S', { env: { account: '123456789012', region: 'eu-west-1' } });
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', {
    vpcId: 'vpc-12345678',
    availabilityZones: ['eu-west-1a'],
    privateSubnetIds: ['subnet-12345678'],
  });
  const asg = new autoscaling.AutoScalingGroup(stack, 'Group', {
    vpc,
    instanceType: new ec2.InstanceType('m6i.large'),
    machineImage: ec2.MachineImage.genericLinux({ 'eu-west-1': 'ami-12345678' }),
  });
  return { app, stack, vpc, asg };
}

/**
 * What aws-cdk-lib's own NetworkListener builds for the same items, with the construct's id scheme: the listener under
 * the port (Port<port>), the target group under the name (<name>/<name>Group), TLS with DEFAULT_TLS_POLICY unless the
 * post-quantum flag picks the policy.
 */
function withL2(listeners: ListenerProps[], pqTls: boolean): Json {
  const { app, stack, vpc, asg } = base(pqTls);
  const scope = new Construct(stack, 'Listeners');
  const securityGroup = new ec2.SecurityGroup(scope, 'SecurityGroup', {
    vpc,
    allowAllOutbound: false,
    description: 'Worker load balancer',
  });
  const lb = new elbv2.NetworkLoadBalancer(scope, 'LoadBalancer', {
    vpc,
    vpcSubnets: { subnets: vpc.privateSubnets },
    crossZoneEnabled: true,
    securityGroups: [securityGroup],
  });
  for (const l of [...listeners].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const protocol = l.protocol ?? 'TCP';
    const hc = l.healthCheck ?? {};
    const listener = lb.addListener(listenerConstructId(l.port), {
      port: l.port,
      protocol: elbv2.Protocol[protocol],
      certificates: l.certificateArn ? [elbv2.ListenerCertificate.fromArn(l.certificateArn)] : undefined,
      // eslint-disable-next-line @typescript-eslint/no-unsafe-enum-assignment -- the cluster object names the policy by its value, which is what the enum holds
      sslPolicy: protocol === 'TLS' && !pqTls ? ((l.sslPolicy ?? DEFAULT_TLS_POLICY) as elbv2.SslPolicy) : undefined,
    });
    const group = new elbv2.NetworkTargetGroup(new Construct(lb, l.name), `${l.name}Group`, {
      vpc,
      port: l.nodePort,
      protocol: protocol === 'TLS' ? elbv2.Protocol.TCP : elbv2.Protocol[protocol],
      targets: [asg],
      deregistrationDelay: Duration.seconds(30),
      healthCheck: {
        protocol: elbv2.Protocol[hc.protocol ?? 'TCP'],
        port: String(hc.port ?? l.nodePort),
        path: hc.protocol && hc.protocol !== 'TCP' ? (hc.path ?? '/') : undefined,
        interval: Duration.seconds(hc.intervalSeconds ?? 10),
        healthyThresholdCount: hc.healthyThreshold ?? 3,
        unhealthyThresholdCount: hc.unhealthyThreshold ?? 3,
      },
    });
    listener.addTargetGroups(l.name, group);
  }
  return app.synth().getStackByName('S').template;
}

function withConstruct(
  listeners: ListenerProps[],
  pqTls: boolean,
  before?: (asg: autoscaling.AutoScalingGroup, stack: Stack) => void,
  allowedCidrs: string[] = ['10.0.0.0/8'],
): Json {
  const { app, stack, vpc, asg } = base(pqTls);
  before?.(asg, stack);
  new WorkerListeners(stack, 'Listeners', { vpc, subnets: vpc.privateSubnets, allowedCidrs, listeners, target: asg });
  return app.synth().getStackByName('S').template;
}

const ofTypes = (t: Json, ...types: string[]) =>
  Object.fromEntries(Object.entries<Json>(t.Resources).filter(([, r]) => types.includes(r.Type)));
const groupArns = (t: Json) =>
  Object.values<Json>(t.Resources).find((r) => r.Type === 'AWS::AutoScaling::AutoScalingGroup').Properties
    .TargetGroupARNs;

const SETS: Array<[string, ListenerProps[]]> = [
  ...LISTENERS.map((l): [string, ListenerProps[]] => [l.name, [l]]),
  ['all of them', LISTENERS],
];
const CASES = [false, true].flatMap((pq) =>
  SETS.map(([name, ls]): [string, boolean, ListenerProps[]] => [name, pq, ls]),
);

test.each(CASES)(
  "listeners and target groups (%s, post-quantum TLS flag %s) are exactly what aws-cdk-lib's NetworkListener builds, same logical ids",
  (_name, pqTls, listeners) => {
    // GIVEN / WHEN
    const expected = withL2(listeners, pqTls);
    const actual = withConstruct(listeners, pqTls);
    // THEN
    const types = ['AWS::ElasticLoadBalancingV2::Listener', 'AWS::ElasticLoadBalancingV2::TargetGroup'];
    expect(ofTypes(actual, 'AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual(
      ofTypes(expected, 'AWS::ElasticLoadBalancingV2::LoadBalancer'),
    );
    expect(Object.keys(ofTypes(actual, ...types))).toHaveLength(2 * listeners.length);
    expect(ofTypes(actual, ...types)).toEqual(ofTypes(expected, ...types));
    expect(groupArns(actual)).toEqual(groupArns(expected));
    // Resource order in the template too (the construct order): a reorder would show up in `cdk diff` as noise.
    expect(Object.keys(actual.Resources).filter((k) => types.includes(actual.Resources[k].Type))).toEqual(
      Object.keys(expected.Resources).filter((k) => types.includes(expected.Resources[k].Type)),
    );
  },
);

test('a target group attached to the Auto Scaling group before the listeners is kept', () => {
  // GIVEN / WHEN another construct attached its own target group first
  const t = withConstruct(LISTENERS.slice(0, 1), false, (asg, stack) =>
    asg.attachToNetworkTargetGroup(
      elbv2.NetworkTargetGroup.fromTargetGroupAttributes(stack, 'Other', {
        targetGroupArn: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/other/0123456789abcdef',
      }),
    ),
  );
  // THEN both are on the group
  expect(groupArns(t)).toEqual([
    'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/other/0123456789abcdef',
    { Ref: expect.stringMatching(/^ListenersLoadBalancerhttps/) },
  ]);
});

test('with the post-quantum TLS flag on, TLS listeners get the policy NetworkListener would give them; others none', () => {
  // GIVEN / WHEN
  const t = withConstruct(LISTENERS, true);
  // THEN
  const listeners = Object.values(ofTypes(t, 'AWS::ElasticLoadBalancingV2::Listener'));
  expect(
    listeners.filter((l) => l.Properties.SslPolicy).map((l) => [l.Properties.Protocol, l.Properties.SslPolicy]),
  ).toEqual([['TLS', elbv2.SslPolicy.TLS13_12_PQ]]);
});

const listenerProps = (t: Json) =>
  Object.values<Json>(ofTypes(t, 'AWS::ElasticLoadBalancingV2::Listener')).map((l) => l.Properties);

describe('TLS security policy', () => {
  test("a TLS listener without a policy gets TLS 1.2/1.3 only (ELBSecurityPolicy-TLS13-1-2-2021-06), never CloudFormation's default", () => {
    // GIVEN / WHEN
    const t = withConstruct(LISTENERS, false);
    // THEN
    expect(listenerProps(t).map((p) => [p.Protocol, p.SslPolicy])).toEqual(
      expect.arrayContaining([
        ['TLS', 'ELBSecurityPolicy-TLS13-1-2-2021-06'],
        ['TCP', undefined],
        ['UDP', undefined],
        ['TCP_UDP', undefined],
      ]),
    );
  });

  test('a given policy is used as given, under either flag', () => {
    for (const pq of [false, true]) {
      // GIVEN / WHEN
      const t = withConstruct([{ ...LISTENERS[0], sslPolicy: 'ELBSecurityPolicy-TLS13-1-3-2021-06' }], pq);
      // THEN
      expect(listenerProps(t).map((p) => p.SslPolicy)).toEqual(['ELBSecurityPolicy-TLS13-1-3-2021-06']);
    }
  });
});

describe('health checks never probe a UDP port over TCP unless told', () => {
  test('a UDP listener without a health-check port is refused, naming the listener and the fix', () => {
    // GIVEN
    const udp: ListenerProps = { name: 'voice', protocol: 'UDP', port: 5060, nodePort: 31060 };
    // WHEN / THEN
    expect(() => withConstruct([udp], false)).toThrow(
      /listener voice: a UDP listener needs an explicit health check port/,
    );
    expect(() => withConstruct([{ ...udp, healthCheck: { protocol: 'TCP' } }], false)).toThrow(
      /needs an explicit health check port/,
    );
  });

  test('a UDP listener probes the health-check port it names; TCP_UDP may probe its own node port over TCP', () => {
    // GIVEN / WHEN
    const t = withConstruct(
      [
        {
          name: 'voice',
          protocol: 'UDP',
          port: 5060,
          nodePort: 31060,
          healthCheck: { protocol: 'HTTP', port: 31061, path: '/ready' },
        },
        LISTENERS[1],
      ],
      false,
    );
    // THEN
    Template.fromJSON(t).hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Protocol: 'UDP',
      Port: 31060,
      HealthCheckProtocol: 'HTTP',
      HealthCheckPort: '31061',
      HealthCheckPath: '/ready',
    });
    Template.fromJSON(t).hasResourceProperties('AWS::ElasticLoadBalancingV2::TargetGroup', {
      Protocol: 'TCP_UDP',
      Port: 30053,
      HealthCheckProtocol: 'TCP',
      HealthCheckPort: '30053',
    });
  });
});

describe('IPv6 clients', () => {
  test('an IPv6 CIDR makes the load balancer dual-stack and gets its own IPv6 client rules', () => {
    // GIVEN / WHEN
    const t = Template.fromJSON(withConstruct([LISTENERS[1]], false, undefined, ['10.0.0.0/8', '2001:db8::/32']));
    // THEN
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { IpAddressType: 'dualstack' });
    for (const proto of ['tcp', 'udp']) {
      t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: proto,
        FromPort: 53,
        ToPort: 53,
        CidrIpv6: '2001:db8::/32',
        CidrIp: Match.absent(),
      });
      t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
        IpProtocol: proto,
        FromPort: 53,
        ToPort: 53,
        CidrIp: '10.0.0.0/8',
        CidrIpv6: Match.absent(),
      });
    }
  });

  test('IPv4 clients only: the load balancer stays IPv4', () => {
    // GIVEN / WHEN
    const t = Template.fromJSON(withConstruct([LISTENERS[1]], false));
    // THEN
    t.hasResourceProperties('AWS::ElasticLoadBalancingV2::LoadBalancer', { IpAddressType: Match.absent() });
  });
});

describe('listener ids come from the port', () => {
  const idOfPort = (t: Json, port: number) =>
    Object.keys(t.Resources).filter(
      (k) => t.Resources[k].Type === 'AWS::ElasticLoadBalancingV2::Listener' && t.Resources[k].Properties.Port === port,
    );

  test('renaming a listener keeps the listener on its port (same logical id) and gives it the renamed target group', () => {
    // GIVEN
    const before = withConstruct([LISTENERS[1]], false);
    // WHEN
    const after = withConstruct([{ ...LISTENERS[1], name: 'dns-renamed' }], false);
    // THEN
    expect(idOfPort(after, 53)).toEqual(idOfPort(before, 53));
    expect(after.Resources[idOfPort(after, 53)[0]].Properties.DefaultActions[0].TargetGroupArn.Ref).toMatch(
      /dnsrenamed/,
    );
  });
});
