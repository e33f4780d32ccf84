import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Construct } from 'constructs';
import { RuleProps, SecurityGroupRules } from './security-group-rules';

/** The construct id of a pool's own security group, under its stack (synthesis-check.ts maps its rules to the object). */
export const OWN_SECURITY_GROUP = 'OwnSecurityGroup';

export interface PoolSecurityGroupProps {
  /** The cluster's VPC. */
  readonly vpc: ec2.IVpc;
  /** The cluster's name (in the group's description). */
  readonly clusterName: string;
  /** The pool's name (in the group's description). */
  readonly poolName: string;
  /** The rules narrowed to this pool (spec.securityGroupRules[] naming it in pools); at least one. */
  readonly rules: readonly RuleProps[];
  /** Needed when a rule's source is `loadBalancer`. @default none */
  readonly loadBalancerSecurityGroup?: ec2.ISecurityGroup;
}

/**
 * A pool's own security group: the inbound rules a cluster narrows to that pool (a GPU pool's NCCL ports among its own
 * nodes, SSH from a bastion to one pool), beside the cluster's worker security group that every node has. It exists
 * only while some rule names the pool, so a cluster that narrows nothing has the templates it had before.
 *
 * Why a group of its own rather than rules on the shared group: a security group's rule applies to every interface
 * that has the group, so narrowing needs a group that only this pool's nodes carry. `self` in a narrowed rule is
 * this group (traffic among the pool's nodes), as it is the shared group in a cluster-wide rule. The group carries
 * no `kubernetes.io/cluster/<name>` tag: cloud-provider-aws wants exactly one tagged group per node (the shared one)
 * and refuses to pick among several. Egress stays the shared group's (all outbound): this group adds none, so CDK's
 * placeholder rule (255.255.255.255/32, ICMP type 252 code 86) keeps EC2 from adding its default allow-all.
 */
export class PoolSecurityGroup extends Construct {
  public readonly securityGroup: ec2.SecurityGroup;

  constructor(scope: Construct, id: string, props: PoolSecurityGroupProps) {
    super(scope, id);
    // `Resource`, so the group's logical id is this construct's (OwnSecurityGroup<hash>), unlike the shared Pool/SecurityGroup.
    this.securityGroup = new ec2.SecurityGroup(this, 'Resource', {
      vpc: props.vpc,
      allowAllOutbound: false,
      description: `Worker nodes of pool ${props.poolName} of cluster ${props.clusterName}: the rules narrowed to it`,
    });
    new SecurityGroupRules(this, 'Ingress', {
      securityGroup: this.securityGroup,
      rules: [...props.rules],
      loadBalancerSecurityGroup: props.loadBalancerSecurityGroup,
    });
  }
}
