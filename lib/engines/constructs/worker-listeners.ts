import { FeatureFlags } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { Construct } from 'constructs';
import { LIMITS } from '../../model/cluster/rules/limits';
import { nodeRules, transportsOf } from '../../model/cluster/network/listener-rules';
import { UsageError } from '../../core/errors';
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
  /** TLS security policy, for TLS only. @default DEFAULT_TLS_POLICY (TLS 1.2 and 1.3 only) */
  readonly sslPolicy?: string;
  /**
   * @default TCP probe of the node port; a UDP listener has no default (a TCP probe of a UDP port never passes) and
   * must give `healthCheck.port`
   */
  readonly healthCheck?: ListenerHealthCheckProps;
}

/** What a TLS listener negotiates unless told otherwise: TLS 1.3 and 1.2, never 1.0/1.1 (CloudFormation's own default). */
export const DEFAULT_TLS_POLICY = 'ELBSecurityPolicy-TLS13-1-2-2021-06';

/** Construct id of the listener on a port: from the port, which the load balancer holds one listener on, not from the name. */
export function listenerConstructId(port: number): string {
  return `Port${port}`;
}

/** True for an IPv6 CIDR (the schema gives IPv4 or IPv6 ones only). */
export const isIpv6Cidr = (cidr: string) => cidr.includes(':');

export interface WorkerListenersProps {
  readonly vpc: ec2.IVpc;
  /** Subnets of the load balancer. */
  readonly subnets: ec2.ISubnet[];
  /** @default false (internal) */
  readonly internetFacing?: boolean;
  /** Client CIDRs allowed to reach the listeners, IPv4 or IPv6; any IPv6 one makes the load balancer dual-stack. */
  readonly allowedCidrs: string[];
  /** The listeners; each gets a target group on `target`. */
  readonly listeners: ListenerProps[];
  /** The Auto Scaling group in this stack the target groups attach to. @default none (every pool in a stack of its own) */
  readonly target?: autoscaling.AutoScalingGroup;
  /** Whether `target` takes a listener's traffic (model/cluster/pools/pools.ts listenerPools). @default every listener */
  readonly attaches?: (listener: string) => boolean;
  /** The nodes' security group, which the load balancer's may reach. @default the first security group of `target` */
  readonly nodeSecurityGroup?: ec2.ISecurityGroup;
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
  /** The target group of each listener, by listener name. */
  public readonly targetGroups = new Map<string, elbv2.CfnTargetGroup>();

  constructor(scope: Construct, id: string, props: WorkerListenersProps) {
    super(scope, id);
    const listeners = [...props.listeners].sort(byName);
    if (listeners.length === 0) throw new UsageError('WorkerListeners needs at least one listener');
    if (listeners.length > LIMITS.listenersPerLoadBalancer)
      throw new UsageError(`${listeners.length} listeners exceed ${LIMITS.listenersPerLoadBalancer} per load balancer`);
    for (let i = 1; i < listeners.length; i++) {
      if (listeners[i].name === listeners[i - 1].name)
        throw new UsageError(`duplicate listener name ${listeners[i].name}`);
    }
    for (const l of listeners) {
      if (l.protocol === 'UDP' && l.healthCheck?.port === undefined) {
        throw new UsageError(
          `listener ${l.name}: a UDP listener needs an explicit health check port; a TCP probe of UDP node port ${l.nodePort} never passes`,
          {
            hint: 'set healthCheck.port (and protocol HTTP/HTTPS with a path, or TCP) to a port the service answers on over TCP',
          },
        );
      }
    }
    const dualStack = props.allowedCidrs.some(isIpv6Cidr);
    const nodeGroup = props.nodeSecurityGroup ?? props.target?.connections.securityGroups.at(0);
    if (!nodeGroup)
      throw new UsageError('WorkerListeners needs the nodes’ security group (nodeSecurityGroup or target)');

    this.securityGroup = new ec2.SecurityGroup(this, 'SecurityGroup', {
      vpc: props.vpc,
      allowAllOutbound: false,
      description: 'Worker load balancer',
    });
    this.loadBalancer = new elbv2.NetworkLoadBalancer(this, 'LoadBalancer', {
      vpc: props.vpc,
      vpcSubnets: { subnets: props.subnets },
      internetFacing: props.internetFacing ?? false,
      // IPv6 clients need a dual-stack load balancer (its subnets need IPv6 CIDR blocks); IPv4-only stays as it was.
      ipAddressType: dualStack ? elbv2.IpAddressType.DUAL_STACK : undefined,
      crossZoneEnabled: true,
      securityGroups: [this.securityGroup],
    });

    // Listeners and target groups are L1 resources. A listener's id comes from its port (LoadBalancer/Port<port>/Resource),
    // its target group's from the name (LoadBalancer/<name>/<name>Group/Resource): renaming a listener, or moving a port
    // from one listener to another, updates the listener on that port in place (ModifyListener) instead of creating a
    // second listener on a port CloudFormation has not freed yet (it deletes only in its cleanup phase, after every
    // create), which the load balancer refuses (DuplicateListener). A changed port is a new listener on a free port.
    // The L2s' lazy properties and checks cost about half a millisecond of synthesis per listener (measured with a
    // stack with and without its listeners); the limits they checked are in the cluster schema, which refuses the
    // object before synthesis, and test/engines/constructs/worker-listeners.test.ts holds these resources to what the L2s
    // build, with the feature flag they read on and off.
    const pqTls = FeatureFlags.of(this).isEnabled(cxapi.ELB_USE_POST_QUANTUM_TLS_POLICY);
    const clientRules: RuleProps[] = [];
    for (const l of listeners) {
      const protocol = l.protocol ?? 'TCP';
      const hc = l.healthCheck ?? {};
      // The listener first: the template lists resources in construct order.
      const listener = new elbv2.CfnListener(
        new Construct(this.loadBalancer, listenerConstructId(l.port)),
        'Resource',
        {
          loadBalancerArn: this.loadBalancer.loadBalancerArn,
          port: l.port,
          protocol,
          certificates: l.certificateArn ? [{ certificateArn: l.certificateArn }] : undefined,
          // The given policy; else what NetworkListener picks under the post-quantum flag, else TLS 1.2+ (never CloudFormation's
          // default, which still negotiates TLS 1.0 and 1.1).
          sslPolicy:
            protocol === 'TLS'
              ? (l.sslPolicy ?? (pqTls ? elbv2.SslPolicy.TLS13_12_PQ : DEFAULT_TLS_POLICY))
              : undefined,
          defaultActions: [],
        },
      );
      const group = new Construct(new Construct(this.loadBalancer, l.name), `${l.name}Group`);
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
      this.targetGroups.set(l.name, targetGroup);
      // Through the group's own list (an import is no resource): other attachments to the group are kept.
      if (props.target && (props.attaches?.(l.name) ?? true)) {
        props.target.attachToNetworkTargetGroup(
          elbv2.NetworkTargetGroup.fromTargetGroupAttributes(group, 'Attach', { targetGroupArn: targetGroup.ref }),
        );
      }
      for (const proto of transportsOf(protocol)) {
        for (const cidr of props.allowedCidrs) {
          clientRules.push({
            protocol: proto,
            port: l.port,
            source: isIpv6Cidr(cidr) ? { cidrIpv6: cidr } : { cidr },
            description: `clients to listener ${l.name}`,
          });
        }
      }
    }
    // One resource per rule, ids from content: adding a listener adds its rules and touches no other resource.
    new SecurityGroupRules(this, 'ClientRules', { securityGroup: this.securityGroup, rules: clientRules });
    new ec2.CfnSecurityGroupEgress(this, 'ToNodes', {
      groupId: this.securityGroup.securityGroupId,
      description: 'to the worker nodes',
      ipProtocol: '-1',
      destinationSecurityGroupId: nodeGroup.securityGroupId,
    });
    // The same function validation counts the security group quota with.
    this.nodeRules = nodeRules<number>(listeners).map((r) => ({
      protocol: r.protocol,
      port: r.port,
      source: { loadBalancer: true },
      description:
        r.kind === 'traffic'
          ? `load balancer to node port (listener ${String(r.listener)})`
          : `load balancer health check (listener ${String(r.listener)})`,
    }));
  }
}
