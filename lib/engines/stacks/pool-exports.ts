import { CfnOutput, Fn } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { workerStackName } from '../../core/naming';
import { sha256Hex } from '../../model/cloudconfig/checksum';

/**
 * What a pool's own stack takes from the shared stack `WorkerStack-<cluster>`: exported there under explicit names
 * (never CDK's generated ones, which change with construct paths) only while the cluster has a pool outside the shared
 * stack, and imported with Fn::ImportValue. CloudFormation refuses to remove an export that a stack still imports: the
 * pool stacks go first.
 */
export const SHARED_EXPORTS = {
  securityGroupId: 'SecurityGroupId',
  instanceProfileArn: 'InstanceProfileArn',
  instanceRoleName: 'InstanceRoleName',
  /** Only while a pool's own stack has a rule narrowed to it whose source is the load balancer. */
  loadBalancerSecurityGroupId: 'LoadBalancerSecurityGroupId',
} as const;

/** `WorkerStack-<cluster>:<thing>`, the export name of one shared value. */
export function sharedExportName(cluster: string, thing: string): string {
  return `${workerStackName(cluster)}:${thing}`;
}

/** The export of a listener's target group ARN (listener names are DNS labels, so the name stays a valid export name). */
export function targetGroupExport(listener: string): string {
  return `TargetGroup-${listener}`;
}

/**
 * Exports `value` from the shared stack under its explicit name. The output's logical id is `Export<thing>`, with a hash
 * of the name when it holds a dash (`a-b` and `ab` would otherwise be the same id).
 */
export function exportShared(scope: Construct, cluster: string, thing: string, value: string): void {
  const alnum = thing.replace(/[^A-Za-z0-9]/g, '');
  new CfnOutput(scope, `Export${alnum}${alnum === thing ? '' : sha256Hex(thing).slice(0, 8)}`, {
    value,
    exportName: sharedExportName(cluster, thing),
  });
}

/** The value the shared stack exports under `thing`, in a pool's own stack. */
export function importShared(cluster: string, thing: string): string {
  return Fn.importValue(sharedExportName(cluster, thing));
}
