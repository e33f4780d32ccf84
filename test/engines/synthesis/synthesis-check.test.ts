import * as fs from 'node:fs';
import { generateCluster } from '../../../bench/generate-fleet';
import { synthesisProblems } from '../../../lib/engines/synthesis/synthesis-check';
import { validateCluster } from '../../../lib/model/cluster/validate';
import { buildFleetApp } from '../../../lib/engines/stacks/app';
import { rawExample, TEMPLATES, tempDir } from '../../helpers/clusters';
import { Json } from '../../helpers/json';
import { rawPoolsExample } from '../../helpers/named-pools';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/**
 * Validation equals synthesis (issue 10, item 5): what `cdk synth` (with cdk-nag) refuses, validate refuses, on the
 * field that produced the resource and with a fix in YAML terms.
 */

const opts = { templatesDir: DEFAULT_TEMPLATES_DIR };

function valid(raw: Json, file = `clusters/${raw.metadata.name}.yaml`) {
  const r = validateCluster(raw, { file, templates: TEMPLATES });
  if (!r.cluster) throw new Error(`invalid: ${JSON.stringify(r.problems)}`);
  return r.cluster;
}

/** Whether the real synthesis (cdk-nag on, as `cdk synth` runs it) refuses the object. */
function synthRefuses(cluster: ReturnType<typeof valid>): boolean {
  const outdir = tempDir('nag-real');
  try {
    buildFleetApp({ clusters: [{ file: 'x', cluster }], outdir, nag: true, bootstrap: false }).app.synth();
    return false;
  } catch {
    return true;
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

test('a port open to 0.0.0.0/0 is refused on the rule that asks for it, with a fix in YAML terms', () => {
  // GIVEN prod-eu1 with its rule securityGroupRules[3] moved to a port that is no node service (validate refuses a node
  // service from public space itself: test/model/cluster/network/exposure.test.ts) and opened to the internet: valid to the schema
  const raw = rawExample('prod-eu1');
  Object.assign(raw.spec.securityGroupRules[3], { port: 8443, source: { cidr: '0.0.0.0/0' } });
  const cluster = valid(raw);

  // WHEN validate's synthesis check runs
  const problems = synthesisProblems(cluster, 'clusters/prod-eu1.yaml', opts);

  // THEN one problem, on the rule, naming the finding and saying how to change the YAML (not how to acknowledge it)
  expect(problems).toEqual([
    {
      file: 'clusters/prod-eu1.yaml',
      path: 'spec.securityGroupRules[3]',
      message: expect.stringMatching(
        /^cdk-nag AwsSolutions-EC23: .*fix: narrow spec\.securityGroupRules\[3\]\.source to the networks that need it/,
      ),
    },
  ]);
  expect(problems[0].message).not.toMatch(/Acknowledge with|Annotation/);
  expect(synthRefuses(cluster)).toBe(true);
});

test('an internal load balancer open to ::/0 is refused on the allowed CIDR', () => {
  // GIVEN prod-eu1 (internal) with ::/0 among its clients
  const raw = rawExample('prod-eu1');
  raw.spec.loadBalancer.allowedCidrs.push('::/0');
  const cluster = valid(raw);

  // WHEN
  const problems = synthesisProblems(cluster, 'clusters/prod-eu1.yaml', opts);

  // THEN
  expect(problems.map((p) => p.path)).toEqual(['spec.loadBalancer.allowedCidrs[1]']);
  expect(problems[0].message).toMatch(
    /fix: the load balancer is internal: narrow spec\.loadBalancer\.allowedCidrs\[1\] .* or set spec\.loadBalancer\.scheme: internet-facing/,
  );
});

test('a template that cannot render is a problem on the template field, not a crash', () => {
  // GIVEN a valid object and a template directory without its templates
  const cluster = valid(rawExample('staging-us1'));

  // WHEN
  const problems = synthesisProblems(cluster, 'clusters/staging-us1.yaml', { templatesDir: tempDir('no-templates') });

  // THEN
  expect(problems).toEqual([
    {
      file: 'clusters/staging-us1.yaml',
      path: 'spec.cloudConfig.template',
      message: expect.stringMatching(/^does not render: unknown cloud-config template "al2023-worker"/),
    },
  ]);
});

/** The bench fleet's objects, adapted to the listener rules the generator predates (health ports in range, UDP probes). */
function fleetSample(): Json[] {
  return [0, 1, 2, 3, 4].map((i) => {
    const raw: Json = generateCluster(i);
    for (const l of raw.spec.listeners) {
      l.hostPort = true;
      if (l.protocol === 'UDP' && l.healthCheck?.port === undefined)
        l.healthCheck = { protocol: 'TCP', port: Number(l.nodePort) + 3000 };
    }
    return raw;
  });
}

/** Mutations that move an object across cdk-nag's line, or along it. */
const MUTATIONS: Array<[string, (raw: Json) => void]> = [
  ['unchanged', () => undefined],
  // Ports that are no node service: a node service (or protocol all) from public space never gets past validate's own
  // rule (test/model/cluster/network/exposure.test.ts), so it never reaches cdk-nag.
  [
    'a rule from 0.0.0.0/0',
    (r) =>
      (r.spec.securityGroupRules[1] = {
        description: 'https from anywhere',
        protocol: 'tcp',
        port: 443,
        source: { cidr: '0.0.0.0/0' },
      }),
  ],
  [
    'a rule from ::/0',
    (r) =>
      r.spec.securityGroupRules.splice(2, 1, {
        description: 'https from anywhere v6',
        protocol: 'tcp',
        port: 8443,
        source: { cidrIpv6: '::/0' },
      }),
  ],
  [
    'an internal load balancer open to 0.0.0.0/0',
    (r) => Object.assign(r.spec.loadBalancer, { scheme: 'internal', allowedCidrs: ['0.0.0.0/0'] }),
  ],
  [
    'an internet-facing load balancer open to 0.0.0.0/0',
    (r) => Object.assign(r.spec.loadBalancer, { scheme: 'internet-facing', allowedCidrs: ['0.0.0.0/0'] }),
  ],
];

test('property: over a sample of the bench fleet and mutations, validate refuses exactly what cdk synth refuses, each finding on a field', () => {
  const disagreements: string[] = [];
  let refused = 0;
  for (const base of fleetSample()) {
    for (const [what, mutate] of MUTATIONS) {
      // GIVEN a fleet object, mutated
      const raw = JSON.parse(JSON.stringify(base));
      mutate(raw);
      const cluster = valid(raw);

      // WHEN validate's check and the real synthesis run on it
      const problems = synthesisProblems(cluster, 'f.yaml', opts);
      const synth = synthRefuses(cluster);

      // THEN they agree, and every problem names a field of the object
      if (problems.length > 0 !== synth)
        disagreements.push(
          `${cluster.metadata.name} ${what}: validate ${problems.length} problems, synth ${synth ? 'refuses' : 'passes'}`,
        );
      for (const p of problems)
        if (!/^spec\.(securityGroupRules|loadBalancer\.allowedCidrs)\[\d+\]$/.test(p.path))
          disagreements.push(`${cluster.metadata.name} ${what}: ${p.path}: ${p.message}`);
      if (synth) refused++;
    }
  }
  expect(disagreements).toEqual([]);
  // Both sides of the line were visited: 5 clusters x 3 refused mutations.
  expect(refused).toBe(15);
}, 180_000);

test.each([
  ['at the limit: 50 tags with the stack tags', 42, 'accepted'],
  ['one more', 43, 'refused'],
])(
  "an Auto Scaling group's tags are counted as written (spec.tags, cluster-autoscaler's per label and taint, the stack's): %s",
  (_what, labels, verdict) => {
    // GIVEN a pooled object whose first pool has `labels` labels in all, with no spec.tags beyond the example's
    const raw = rawPoolsExample();
    raw.spec.tags = {};
    const pool = raw.spec.pools[0];
    pool.taints = [];
    pool.labels = Object.fromEntries(
      Array.from({ length: labels - Object.keys(raw.spec.cloudConfig.values.nodeLabels ?? {}).length }, (_, i) => [
        `example.com/l${i}`,
        'x',
      ]),
    );
    const cluster = valid(raw);

    // WHEN it is checked as validate checks it
    const problems = synthesisProblems(cluster, 'clusters/prod-eu1.yaml', { ...opts, nag: false });

    // THEN it is accepted at AWS's 50 and refused past it, at the pool's field, with the count
    const ours = problems.filter((p) => /tags/.test(p.message));
    if (verdict === 'accepted') expect(ours).toEqual([]);
    else
      expect(ours).toEqual([
        {
          file: 'clusters/prod-eu1.yaml',
          path: 'spec.pools[0]',
          message: expect.stringMatching(/^the Auto Scaling group would carry 51 tags .*above AWS's 50 per group/),
        },
      ]);
  },
);
