import { Problem } from '../../../core/errors';
import { WorkerCluster } from '../schema/schema';

/**
 * A subnet is in one VPC. An object names its subnets and its VPC by hand (synthesis never looks them up), so a typo
 * or a copied file can put a subnet under the wrong VPC: CloudFormation then fails the stack midway (the security
 * group is in one VPC, the instances in a subnet of another). Within one object nothing tells which is wrong; across
 * the fleet, a subnet named under two VPCs is wrong in one of them, and each object that names it hears of the other.
 */
export function subnetVpcProblems(
  clusters: readonly { readonly file: string; readonly cluster: WorkerCluster }[],
): Problem[] {
  // Subnet ids are unique per region (and partition): the key is region and subnet.
  const seen = new Map<string, { vpc: string; file: string; index: number }[]>();
  for (const { file, cluster } of clusters) {
    const { vpcId, subnetIds } = cluster.spec.network;
    subnetIds.forEach((subnet, index) => {
      const key = `${cluster.spec.region}/${subnet}`;
      seen.set(key, [...(seen.get(key) ?? []), { vpc: vpcId, file, index }]);
    });
  }
  const problems: Problem[] = [];
  for (const [key, uses] of seen) {
    const vpcs = new Set(uses.map((u) => u.vpc));
    if (vpcs.size < 2) continue;
    const subnet = key.slice(key.indexOf('/') + 1);
    for (const u of uses) {
      const others = uses.filter((o) => o.vpc !== u.vpc).map((o) => `${o.vpc} in ${o.file}`);
      problems.push({
        file: u.file,
        path: `spec.network.subnetIds[${u.index}]`,
        message: `${subnet} is named under ${u.vpc} here and under ${[...new Set(others)].join(', ')}: a subnet is in one VPC (check spec.network.vpcId and the subnet ids against aws ec2 describe-subnets)`,
      });
    }
  }
  return problems;
}
