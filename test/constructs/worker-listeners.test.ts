import { App, Duration, Stack } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { ListenerProps, WorkerListeners } from '../../lib/constructs/worker-listeners';

const LISTENERS: ListenerProps[] = [
  { name: 'https', protocol: 'TLS', port: 443, nodePort: 30443, certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' },
  { name: 'dns', protocol: 'TCP_UDP', port: 53, nodePort: 30053 },
  { name: 'stun', protocol: 'UDP', port: 3478, nodePort: 31478 },
  { name: 'web', port: 80, nodePort: 30080, healthCheck: { protocol: 'HTTP', path: '/healthz', port: 10256, intervalSeconds: 30, healthyThreshold: 2, unhealthyThreshold: 5 } },
  { name: 'api', protocol: 'TCP', port: 6443, nodePort: 30643, healthCheck: { protocol: 'HTTPS' } },
];

function base(pqTls: boolean): { app: App; stack: Stack; vpc: ec2.IVpc; asg: autoscaling.AutoScalingGroup } {
  const app = new App({ context: { [cxapi.ELB_USE_POST_QUANTUM_TLS_POLICY]: pqTls } });
  const stack = new Stack(app, 'S', { env: { account: '123456789012', region: 'eu-west-1' } });
  const vpc = ec2.Vpc.fromVpcAttributes(stack, 'Vpc', { vpcId: 'vpc-12345678', availabilityZones: ['eu-west-1a'], privateSubnetIds: ['subnet-12345678'] });
  const asg = new autoscaling.AutoScalingGroup(stack, 'Group', {
    vpc,
    instanceType: new ec2.InstanceType('m6i.large'),
    machineImage: ec2.MachineImage.genericLinux({ 'eu-west-1': 'ami-12345678' }),
  });
  return { app, stack, vpc, asg };
}

/** What the construct built before it used L1 resources: aws-cdk-lib's own NetworkListener.addTargets. */
function withL2(listeners: ListenerProps[], pqTls: boolean): Record<string, any> {
  const { app, stack, vpc, asg } = base(pqTls);
  const scope = new Construct(stack, 'Listeners');
  const securityGroup = new ec2.SecurityGroup(scope, 'SecurityGroup', { vpc, allowAllOutbound: false, description: 'Worker load balancer' });
  const lb = new elbv2.NetworkLoadBalancer(scope, 'LoadBalancer', { vpc, vpcSubnets: { subnets: vpc.privateSubnets }, crossZoneEnabled: true, securityGroups: [securityGroup] });
  for (const l of [...listeners].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const protocol = l.protocol ?? 'TCP';
    const hc = l.healthCheck ?? {};
    lb.addListener(l.name, {
      port: l.port,
      protocol: elbv2.Protocol[protocol],
      certificates: l.certificateArn ? [elbv2.ListenerCertificate.fromArn(l.certificateArn)] : undefined,
    }).addTargets(l.name, {
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
  }
  return app.synth().getStackByName('S').template;
}

function withConstruct(listeners: ListenerProps[], pqTls: boolean, before?: (asg: autoscaling.AutoScalingGroup, stack: Stack) => void): Record<string, any> {
  const { app, stack, vpc, asg } = base(pqTls);
  before?.(asg, stack);
  new WorkerListeners(stack, 'Listeners', { vpc, subnets: vpc.privateSubnets, allowedCidrs: ['10.0.0.0/8'], listeners, target: asg });
  return app.synth().getStackByName('S').template;
}

const ofTypes = (t: Record<string, any>, ...types: string[]) =>
  Object.fromEntries(Object.entries<any>(t.Resources).filter(([, r]) => types.includes(r.Type)));
const groupArns = (t: Record<string, any>) => Object.values<any>(t.Resources).find((r) => r.Type === 'AWS::AutoScaling::AutoScalingGroup').Properties.TargetGroupARNs;

const SETS: Array<[string, ListenerProps[]]> = [...LISTENERS.map((l): [string, ListenerProps[]] => [l.name, [l]]), ['all of them', LISTENERS]];
const CASES = [false, true].flatMap((pq) => SETS.map(([name, ls]): [string, boolean, ListenerProps[]] => [name, pq, ls]));

test.each(CASES)(
  'listeners and target groups (%s, post-quantum TLS flag %s) are exactly what aws-cdk-lib\'s NetworkListener.addTargets builds, same logical ids',
  (_name, pqTls, listeners) => {
    // GIVEN / WHEN
    const expected = withL2(listeners, pqTls);
    const actual = withConstruct(listeners, pqTls);
    // THEN
    const types = ['AWS::ElasticLoadBalancingV2::Listener', 'AWS::ElasticLoadBalancingV2::TargetGroup'];
    expect(ofTypes(actual, 'AWS::ElasticLoadBalancingV2::LoadBalancer')).toEqual(ofTypes(expected, 'AWS::ElasticLoadBalancingV2::LoadBalancer'));
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
    asg.attachToNetworkTargetGroup(elbv2.NetworkTargetGroup.fromTargetGroupAttributes(stack, 'Other', { targetGroupArn: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/other/0123456789abcdef' })),
  );
  // THEN both are on the group
  expect(groupArns(t)).toEqual(['arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/other/0123456789abcdef', { Ref: expect.stringMatching(/^ListenersLoadBalancerhttps/) }]);
});

test('with the post-quantum TLS flag on, TLS listeners get the policy NetworkListener would give them; others none', () => {
  // GIVEN / WHEN
  const t = withConstruct(LISTENERS, true);
  // THEN
  const listeners = Object.values(ofTypes(t, 'AWS::ElasticLoadBalancingV2::Listener'));
  expect(listeners.filter((l) => l.Properties.SslPolicy).map((l) => [l.Properties.Protocol, l.Properties.SslPolicy])).toEqual([['TLS', elbv2.SslPolicy.TLS13_12_PQ]]);
});
