import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { compareSides } from '../../../lib/engines/review/compare-sides';
import { formatTerminal } from '../../../lib/engines/review/format-terminal';
import { WorkerCluster } from '../../../lib/model/cluster/schema/schema';
import { REPO, tempDir, validated } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { schemaProblems } from './formats';

/*
 * Review of EKS pools: both sides are cloud assemblies synthesized by the real CDK app, so the user data is what a
 * node gets (the NodeConfig inline in a MIME part; Bottlerocket's TOML itself). A NodeConfig field or a Bottlerocket
 * setting that changes is shown as a config diff of that pool's stored object, and rolls that pool only.
 */

const OBJECT = path.join(REPO, 'clusters', 'eks-us2.yaml');
const FILE = 'clusters/eks-us2.yaml';

/** The EKS object (pool default: eks-al2023; pool bottlerocket: eks-bottlerocket), `change` applied to its raw form. */
function eks(change: (raw: Json) => void = () => undefined): WorkerCluster {
  const raw = parse(fs.readFileSync(OBJECT, 'utf8'));
  change(raw);
  return validated(raw, FILE);
}

function synth(side: string, cluster: WorkerCluster): string {
  const outdir = path.join(tempDir(`eks-review-${side}`), 'cdk.out');
  buildFleetApp({ clusters: [{ cluster, file: FILE }], outdir, nag: false, bootstrap: false }).app.synth();
  return outdir;
}

function review(base: WorkerCluster, head: WorkerCluster) {
  return compareSides(
    { side: 'base', label: 'base main', outdir: synth('base', base), ref: 'main', commit: 'a'.repeat(40) },
    { side: 'head', label: 'head (working tree)', outdir: synth('head', head) },
  );
}

const lines = (pool: { config?: { entries: ReadonlyArray<{ lines: readonly string[] }> } | null } | undefined) =>
  pool?.config?.entries.flatMap((e) => e.lines) ?? [];

describe('review of EKS node configs', () => {
  test('a Bottlerocket setting change is a TOML diff that rolls the Bottlerocket pool only', () => {
    // GIVEN base, and head with another memory eviction threshold for the Bottlerocket pool
    const base = eks();
    const head = eks((raw) => (raw.spec.pools[1].cloudConfig.values.evictionHard['memory.available'] = '200Mi'));

    // WHEN
    const r = review(base, head);

    // THEN the Bottlerocket pool rolls, for its user data, with the changed TOML line; the AL2023 pool does not
    const c = r.clusters[0];
    expect(c.status).toBe('rolls');
    const br = c.pools.find((p) => p.name === 'bottlerocket');
    expect(br?.status).toBe('rolls');
    expect(br?.why).toMatch(/launch template .* changes \(user data: node config/);
    expect(br?.checksum.base).not.toBe(br?.checksum.head);
    expect(lines(br)).toEqual(
      expect.arrayContaining(['-"memory.available" = "100Mi"', '+"memory.available" = "200Mi"']),
    );
    expect(c.pools.find((p) => p.name === 'default')).toMatchObject({ status: 'unchanged', rolls: false });
    expect(formatTerminal(r, { color: false })).toMatch(
      /Node config of pool bottlerocket \(bottlerocket, checksum [0-9a-f]{12} -> [0-9a-f]{12}\)/,
    );
    expect(schemaProblems(JSON.parse(JSON.stringify(r)))).toEqual([]);
  });

  test.each<[string, (raw: Json) => void, (raw: Json) => void, string[]]>([
    [
      'a kubelet scalar (shutdownGracePeriod)',
      () => undefined,
      (raw) => (raw.spec.cloudConfig.values.kubeletConfig.shutdownGracePeriod = '45s'),
      ['-      shutdownGracePeriod: 30s', '+      shutdownGracePeriod: 45s'],
    ],
    [
      'a nested kubelet map value (evictionHard["memory.available"])',
      (raw) => (raw.spec.cloudConfig.values.kubeletConfig.evictionHard = { 'memory.available': '100Mi' }),
      (raw) => (raw.spec.cloudConfig.values.kubeletConfig.evictionHard = { 'memory.available': '200Mi' }),
      ['-        memory.available: 100Mi', '+        memory.available: 200Mi'],
    ],
    [
      'a nested kubelet list item (allowedUnsafeSysctls)',
      (raw) => (raw.spec.cloudConfig.values.kubeletConfig.allowedUnsafeSysctls = ['net.core.somaxconn']),
      (raw) => (raw.spec.cloudConfig.values.kubeletConfig.allowedUnsafeSysctls = ['net.core.somaxconn', 'kernel.msg*']),
      ['+        - kernel.msg*'],
    ],
  ])('a NodeConfig change of %s is a NodeConfig diff that rolls the AL2023 pool only', (_what, before, after, diff) => {
    // GIVEN base, and head with the AL2023 pool's kubelet setting changed (the cluster's values)
    const base = eks(before);
    const head = eks((raw) => {
      before(raw);
      after(raw);
    });

    // WHEN
    const r = review(base, head);

    // THEN
    const c = r.clusters[0];
    const al = c.pools.find((p) => p.name === 'default');
    expect(al?.status).toBe('rolls');
    // the pool default lives in the shared stack, whose config diff is the cluster's
    expect(al?.shared).toBe(true);
    expect(lines(c)).toEqual(expect.arrayContaining(diff));
    // the Bottlerocket pool has a template of its own, which takes no kubeletConfig: it does not roll
    expect(c.pools.find((p) => p.name === 'bottlerocket')).toMatchObject({ status: 'unchanged', rolls: false });
  });
});
