import * as path from 'node:path';
import { parse } from 'yaml';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { MOTO_ACCOUNT, readExamples, rewriteExample, wantedIds } from '../../../lib/adapters/playground/examples';
import { EXAMPLE_NAMES, EXAMPLES_DIR, rawExample, TEMPLATES } from '../../helpers/clusters';

// The playground deploys the repository's own examples, moved only for account and ids.

const examples = readExamples(EXAMPLES_DIR);

test('the ids each region needs are read from the fields that hold them: network, image, rule sources, certificates', () => {
  // GIVEN the repository's examples
  // WHEN the wanted ids are collected
  const wants = wantedIds(examples);

  // THEN every region has each cluster's VPC with its subnets in their zones, its image, and what its rules and listeners name
  expect(Object.keys(wants).sort()).toEqual([...new Set(examples.map((e) => e.raw.spec.region as string))].sort());
  for (const { raw } of examples) {
    const w = wants[raw.spec.region];
    const vpc = w.vpcs[raw.spec.network.vpcId];
    expect(vpc.subnets).toEqual(
      expect.arrayContaining(
        raw.spec.network.subnetIds.map((id: string, i: number) => ({ id, az: raw.spec.network.availabilityZones[i] })),
      ),
    );
    for (const pool of raw.spec.pools ?? [raw.spec.pool]) expect(w.images).toContain(pool.machineImage);
    for (const rule of raw.spec.securityGroupRules ?? []) {
      if (rule.source.securityGroupId) expect(vpc.securityGroups).toContain(rule.source.securityGroupId);
      if (rule.source.prefixListId) expect(w.prefixLists).toContain(rule.source.prefixListId);
    }
    for (const l of raw.spec.listeners ?? []) if (l.certificateArn) expect(w.certificates).toContain(l.certificateArn);
  }
});

describe.each(EXAMPLE_NAMES)('%s, moved into moto', (name) => {
  const example = examples.find((e) => e.file === `${name}.yaml`)!;
  // Every wanted id gets a new one of the same kind, as the seed would make it.
  const ids: Record<string, string> = {};
  for (const w of Object.values(wantedIds(examples))) {
    for (const [vpc, v] of Object.entries(w.vpcs)) {
      ids[vpc] = `vpc-0000${Object.keys(ids).length.toString(16).padStart(4, '0')}`;
      for (const s of v.subnets) ids[s.id] = `subnet-0000${Object.keys(ids).length.toString(16).padStart(4, '0')}`;
      for (const sg of v.securityGroups) ids[sg] = `sg-0000${Object.keys(ids).length.toString(16).padStart(4, '0')}`;
    }
    for (const i of w.images) ids[i] = `ami-0000${Object.keys(ids).length.toString(16).padStart(4, '0')}`;
    for (const p of w.prefixLists) ids[p] = `pl-0000${Object.keys(ids).length.toString(16).padStart(4, '0')}`;
    for (const c of w.certificates)
      ids[c] = c.replace(
        /:\d{12}:certificate\/.*/,
        `:${MOTO_ACCOUNT}:certificate/00000000-0000-0000-0000-00000000000${Object.keys(ids).length % 10}`,
      );
  }
  const text = rewriteExample(example, ids);
  const moved = parse(text);

  test('is valid in moto account and names no id or account of the original', () => {
    // GIVEN the rewritten object
    // WHEN it is validated
    const r = validateCluster(moved, { file: `clusters/${name}.yaml`, templates: TEMPLATES });

    // THEN it is valid, in moto's account, and nothing of the old account or ids is left in its text
    expect(r.problems).toEqual([]);
    expect(moved.spec.account).toBe(MOTO_ACCOUNT);
    expect(text).not.toContain(rawExample(name).spec.account);
    for (const old of Object.keys(ids)) expect(text).not.toContain(old);
  });

  test('differs from the original only in the account and the ids (comments kept)', () => {
    // GIVEN the rewritten object, with the new ids mapped back to the old ones and the account put back
    const back = Object.fromEntries(Object.entries(ids).map(([o, n]) => [n, o]));
    const account = rawExample(name).spec.account;
    const restored = JSON.parse(JSON.stringify(moved), (_k, v) =>
      typeof v !== 'string'
        ? v
        : (back[v] ??
          (v === MOTO_ACCOUNT
            ? account
            : v
                .split(':')
                .map((p, i) => (i === 4 && p === MOTO_ACCOUNT ? account : p))
                .join(':'))),
    );

    // THEN it is the original object, and the file's leading comment is still there
    expect(restored).toEqual(rawExample(name));
    const comment = (text.match(/^#.*$/m) ?? [''])[0];
    expect(comment).not.toBe('');
    expect(text.startsWith(comment)).toBe(true);
    expect(path.basename(example.file, '.yaml')).toBe(moved.metadata.name);
  });
});

test('the playground has a cluster of node pools: an on-demand system pool, a spot pool and an arm64 pool', () => {
  // GIVEN the repository's examples, validated
  const pooled = examples
    .map((e) => validateCluster(e.raw, { file: `clusters/${e.file}`, templates: TEMPLATES }).cluster)
    .filter((c) => c?.spec.pools);
  // WHEN their pools are sorted by what they run on
  const kinds = pooled.map((c) =>
    (c?.spec.pools ?? []).map((p) => ({
      onDemand: (p.capacity?.onDemandPercentageAboveBaseCapacity ?? 100) === 100,
      spot: p.capacity !== undefined && p.capacity.onDemandPercentageAboveBaseCapacity === 0,
      arm64: p.architecture === 'arm64',
      tainted: p.taints.some((t) => t.effect === 'NoSchedule'),
    })),
  );
  // THEN one cluster has all three, and the seed gets each pool's image
  expect(
    kinds.some((k) => k.some((p) => p.onDemand && p.tainted) && k.some((p) => p.spot) && k.some((p) => p.arm64)),
  ).toBe(true);
  const wants = wantedIds(examples);
  for (const c of pooled)
    for (const p of c?.spec.pools ?? []) expect(wants[c?.spec.region ?? ''].images).toContain(p.machineImage);
});
