import { FeatureFlags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { LIMITS } from '../cluster/limits';
import { nodeRules, transportsOf } from '../cluster/listener-rules';
import { UsageError } from '../errors';
import { RuleProps, SecurityGroupRules } from './security-group-rules';

export interface ListenerHealthCheckProps {
  /** Probe protocol. @default 'TCP' */
  readonly protocol?: 'TCP' | 'HTTP' | 'HTTPS';
  /** Port probed on the node. @default the listener's nodePort */
  readonly port?: number;
  /** HTTP(S) path. @default '/' for HTTP(S) */
  readonly path?: string;
  /** Seconds between probes. @default 10 */
  readonly intervalSeconds?: number;
  /** @default 3 */
  readonly healthyThreshold?: number;
  /** @default 3 */
  readonly unhealthyThreshold?: number;
}

export interface ListenerProps {
  /** Unique name; the construct ids derive from it. */
  readonly name: string;
  /** @default 'TCP' */
  readonly protocol?: 'TCP' | 'UDP' | 'TCP_UDP' | 'TLS';
  /** Port the load balancer listens on. */
  readonly port: number;
  /** Port on the nodes. */
  readonly nodePort: number;
  /** ACM certificate, for TLS only. @default none */
  readonly certificateArn?: string;
  /** @default TCP probe of the node port */
  readonly healthCheck?: ListenerHealthCheckProps;
}

export interface WorkerListenersProps {
  readonly vpc: ec2.IVpc;
  /** Subnets of the load balancer. */
  readonly subnets: ec2.ISubnet[];
  /** @default false (internal) */
  readonly internetFacing?: boolean;
  /** Client CIDRs allowed to reach the listeners. */
  readonly allowedCidrs: string[];
  /** The listeners; each gets a target group on `target`. */
  readonly listeners: ListenerProps[];
  /** The Auto Scaling group the target groups attach to. */
  readonly target: autoscaling.AutoScalingGroup;
}

const byName = (a: ListenerProps, b: ListenerProps) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * A Network Load Balancer with one listener and target group per item of the
 * typed list. Items are processed in name order, so the group's
 * TargetGroupARNs never depend on the order of the list.
 */
export class WorkerListeners extends Construct {
  public readonly loadBalancer: elbv2.NetworkLoadBalancer;
  public readonly securityGroup: ec2.SecurityGroup;
  /** Rules the worker security group needs so the load balancer reaches node and health-check ports. */
  public readonly nodeRules: RuleProps[];

  constructor(scope: Construct, id: string, props: WorkerListenersProps) {
    super(scope, id);
    const listeners = [...props.listeners].sort(byName);
    if (listeners.length === 0) throw new UsageError('WorkerListeners needs at least one listener');
    if (listeners.length > LIMITS.listenersPerLoadBalancer) throw new UsageError(`${listeners.length} listeners exceed ${LIMITS.listenersPerLoadBalancer} per load balancer`);
    for (let i = 1; i < listeners.length; i++) {
      if (listeners[i].name === listeners[i - 1].name) throw new UsageError(`duplicate listener name ${listeners[i].name}`);
    }

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', { vpc: props.vpc, allowAllOutbound: false, description: 'Worker load balancer' });
    this.loadBalancer = new elbv2.NetworkLoadBalancer(this, 'LoadBalancer', {
      vpc: props.vpc,
      vpcSubnets: { subnets: props.subnets },
      internetFacing: props.internetFacing ?? false,
      crossZoneEnabled: true,
      securityGroups: [this.securityGroup],
    });

    // Listeners and target groups are L1 resources at the paths the L2 NetworkListener.addTargets used
    // (LoadBalancer/<name>/Resource, LoadBalancer/<name>/<name>Group/Resource), so their logical ids did not change.
    // The L2s' lazy properties and checks cost about half a millisecond of synthesis per listener (measured with a
    // stack with and without its listeners); the limits they checked are in the cluster schema, which refuses the
    // object before synthesis, and test/constructs/worker-listeners.test.ts holds these resources to what the L2s
    // build, with the feature flag they read on and off.
    const pqTls = FeatureFlags.of(this).isEnabled(cxapi.ELB_USE_POST_QUANTUM_TLS_POLICY);
    const clientRules: RuleProps[] = [];
    for (const l of listeners) {
      const protocol = l.protocol ?? 'TCP';
      const hc = l.healthCheck ?? {};
      const scope = new Construct(this.loadBalancer, l.name);
      // The listener first: the template lists resources in construct order.
      const listener = new elbv2.CfnListener(scope, 'Resource', {
        loadBalancerArn: this.loadBalancer.loadBalancerArn,
        port: l.port,
        protocol,
        certificates: l.certificateArn ? [{ certificateArn: l.certificateArn }] : undefined,
        // What NetworkListener picks for TLS when no policy is given, under the same flag.
        sslPolicy: protocol === 'TLS' && pqTls ? elbv2.SslPolicy.TLS13_12_PQ : undefined,
        defaultActions: [],
      });
      const group = new Construct(scope, `${l.name}Group`);
      const targetGroup = new elbv2.CfnTargetGroup(group, 'Resource', {
        port: l.nodePort,
        // TLS ends at the load balancer; the nodes get plain TCP.
        protocol: protocol === 'TLS' ? 'TCP' : protocol,
        vpcId: props.vpc.vpcId,
        targetType: 'instance',
        targetGroupAttributes: [{ key: 'deregistration_delay.timeout_seconds', value: '30' }],
        healthCheckProtocol: hc.protocol ?? 'TCP',
        healthCheckPort: String(hc.port ?? l.nodePort),
        healthCheckPath: hc.protocol && hc.protocol !== 'TCP' ? (hc.path ?? '/') : undefined,
        healthCheckIntervalSeconds: hc.intervalSeconds ?? 10,
        healthyThresholdCount: hc.healthyThreshold ?? 3,
        unhealthyThresholdCount: hc.unhealthyThreshold ?? 3,
      });
      listener.defaultActions = [{ type: 'forward', targetGroupArn: targetGroup.ref }];
      // Through the group's own list (an import is no resource): other attachments to the group are kept.
      props.target.attachToNetworkTargetGroup(elbv2.NetworkTargetGroup.fromTargetGroupAttributes(group, 'Attach', { targetGroupArn: targetGroup.ref }));
      for (const proto of transportsOf(protocol)) {
        for (const cidr of props.allowedCidrs) clientRules.push({ protocol: proto, port: l.port, source: { cidr }, description: `clients to listener ${l.name}` });
      }
    }
    // One resource per rule, ids from content: adding a listener adds its rules and touches no other resource.
    new SecurityGroupRules(this, 'ClientRules', { securityGroup: this.securityGroup, rules: clientRules });
    new ec2.CfnSecurityGroupEgress(this, 'ToNodes', {
      groupId: this.securityGroup.securityGroupId,
      description: 'to the worker nodes',
      ipProtocol: '-1',
      destinationSecurityGroupId: props.target.connections.securityGroups[0].securityGroupId,
    });
    // The same function validation counts the security group quota with.
    this.nodeRules = nodeRules<number>(listeners).map((r) => ({
      protocol: r.protocol,
      port: r.port,
      source: { loadBalancer: true },
      description: r.kind === 'traffic' ? `load balancer to node port (listener ${r.listener})` : `load balancer health check (listener ${r.listener})`,
    }));
  }
}
