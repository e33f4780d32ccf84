/**
 * The CPU architecture of an EC2 instance type, from its name: Graviton families carry a `g` among the attributes
 * after the generation (m6g, c7gn, r8gd, t4g, im4gn, is4gen, x2gd, g5g) and a1 is the first Graviton; every other
 * family is x86_64 (the high-memory u-*, u7i-*, p6-b200 ones included). Checked against every instance type of EC2's
 * DescribeInstanceTypes as the pinned moto ships it (test/model/cluster/pools/instance-architecture.test.ts). undefined
 * for macOS hosts and for a name that is not an instance type (the schema reports it).
 */
export function architectureOf(instanceType: string): 'arm64' | 'x86_64' | undefined {
  // macOS hosts (mac1, mac2-m2 ...) have their own AMIs: out of scope.
  if (instanceType.startsWith('mac') || !INSTANCE_FAMILY.test(instanceType)) return undefined;
  return ARM64_FAMILY.test(instanceType) ? 'arm64' : 'x86_64';
}

/** `<letters><generation><attributes>.`, and the arm64 ones among them; RE2 reads both alike (the CRD's CEL). */
export const INSTANCE_FAMILY = /^[a-z]+[0-9]*[a-z0-9-]*\./;
export const ARM64_FAMILY = /^(a[0-9]+[a-z-]*|[a-z]+[0-9]+[a-z-]*g[a-z-]*)\./;
