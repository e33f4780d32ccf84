import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { LIMITS } from '../../model/cluster/rules/limits';
import { UsageError } from '../../core/errors';

/** Where the traffic of one rule comes from: exactly one field. */
export interface RuleSourceProps {
  /** IPv4 CIDR. @default none */
  readonly cidr?: string;
  /** IPv6 CIDR. @default none */
  readonly cidrIpv6?: string;
  /** Another security group. @default none */
  readonly securityGroupId?: string;
  /** A managed prefix list. @default none */
  readonly prefixListId?: string;
  /** The target security group itself. @default false */
  readonly self?: true;
  /** The load balancer's security group (given to the construct). @default false */
  readonly loadBalancer?: true;
}

export interface RuleProps {
  /** Shown in the EC2 console. */
  readonly description: string;
  /** IP protocol. */
  readonly protocol: 'tcp' | 'udp' | 'icmp' | 'icmpv6' | 'all';
  /** Single port (tcp/udp). @default none: use fromPort/toPort */
  readonly port?: number;
  /** First port of a range. @default none */
  readonly fromPort?: number;
  /** Last port of a range. @default none */
  readonly toPort?: number;
  /** Where the traffic comes from. */
  readonly source: RuleSourceProps;
}

export interface SecurityGroupRulesProps {
  /** The group the rules are added to. */
  readonly securityGroup: ec2.ISecurityGroup;
  /** The rules. */
  readonly rules: RuleProps[];
  /** Needed when a rule's source is `loadBalancer`. @default none */
  readonly loadBalancerSecurityGroup?: ec2.ISecurityGroup;
}

const IP_PROTOCOL = { tcp: 'tcp', udp: 'udp', icmp: 'icmp', icmpv6: '58', all: '-1' } as const;

/** A rule's identity: protocol, ports and source. Its description and its position in the list are not part of it. */
export function ruleKey(r: RuleProps): string {
  const s = r.source;
  const src =
    s.cidr ??
    s.cidrIpv6 ??
    s.securityGroupId ??
    s.prefixListId ??
    (s.self ? 'self' : s.loadBalancer ? 'loadBalancer' : '?');
  // A one-port range is the same rule to AWS as a single port.
  const from = r.port ?? r.fromPort;
  const to = r.port ?? r.toPort;
  const ports = from === undefined ? 'any' : from === to ? `${from}` : `${from}-${to}`;
  return `${r.protocol}/${ports}/${src}`;
}

/**
 * One AWS::EC2::SecurityGroupIngress per rule, in a loop over the typed list.
 * The construct id (hence the logical id) comes from the rule's content, so
 * reordering the list changes nothing and adding one rule adds one resource.
 */
export class SecurityGroupRules extends Construct {
  public readonly ruleIds: string[] = [];

  constructor(scope: Construct, id: string, props: SecurityGroupRulesProps) {
    super(scope, id);
    if (props.rules.length > LIMITS.inboundRulesPerSecurityGroup) {
      throw new UsageError(
        `${props.rules.length} rules exceed ${LIMITS.inboundRulesPerSecurityGroup} inbound rules per security group`,
      );
    }
    // Sorted by identity, so the template's resource order never depends on the list order either.
    const rules = [...props.rules].sort((a, b) => (ruleKey(a) < ruleKey(b) ? -1 : ruleKey(a) > ruleKey(b) ? 1 : 0));
    for (const rule of rules) {
      const key = ruleKey(rule);
      const ruleId = `${key.replace(/[^A-Za-z0-9]+/g, '-').slice(0, 60)}-${sha256Hex(key).slice(0, 8)}`;
      if (this.node.tryFindChild(ruleId))
        throw new UsageError(`duplicate security group rule ${key} (${rule.description})`);
      const s = rule.source;
      if (s.loadBalancer && !props.loadBalancerSecurityGroup)
        throw new UsageError(`rule ${key} names the load balancer, but none was given`);
      const ranged = rule.protocol === 'tcp' || rule.protocol === 'udp';
      new ec2.CfnSecurityGroupIngress(this, ruleId, {
        groupId: props.securityGroup.securityGroupId,
        description: rule.description,
        ipProtocol: IP_PROTOCOL[rule.protocol],
        // icmp: -1/-1 is every type and code; icmpv6 and all take no ports at all (EC2 ignores them).
        fromPort: ranged ? (rule.port ?? rule.fromPort) : rule.protocol === 'icmp' ? -1 : undefined,
        toPort: ranged ? (rule.port ?? rule.toPort) : rule.protocol === 'icmp' ? -1 : undefined,
        cidrIp: s.cidr,
        cidrIpv6: s.cidrIpv6,
        sourcePrefixListId: s.prefixListId,
        sourceSecurityGroupId:
          s.securityGroupId ??
          (s.self
            ? props.securityGroup.securityGroupId
            : s.loadBalancer
              ? props.loadBalancerSecurityGroup?.securityGroupId
              : undefined),
      });
      this.ruleIds.push(ruleId);
    }
  }
}
