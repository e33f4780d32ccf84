/**
 * Deterministic generator of WorkerCluster objects, shaped like clusters/*.yaml:
 * 5-20 listeners, 10-60 security-group rules, both config templates, a few
 * accounts and regions. Cluster i depends only on (seed, i), so a fleet of 10
 * is the first 10 of a fleet of 1,000. Every object is validated before it is
 * written; the generator never emits one that the product would refuse.
 *
 *   npx ts-node --transpile-only bench/generate-fleet.ts <dir> <count> [--seed N] [--account ID]
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { LIMITS } from '../lib/model/cluster/rules/limits';
import { validateCluster } from '../lib/model/cluster/validate';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { formatProblem } from '../lib/core/errors';
import { defaultTemplates } from '../lib/platform/files/template-directory';

/** 64 lowercase hex derived from a label: the shape of a pinned SHA-256, not a real one (the generator has no network). */
const placeholderSha256 = (label: string) => createHash('sha256').update(`placeholder ${label}`).digest('hex');

export const DEFAULT_SEED = 20260501;
export const ACCOUNTS = ['111111111111', '222222222222', '333333333333'];
const REGIONS: Record<string, { code: string; zones: string }> = {
  'eu-west-1': { code: 'euw1', zones: 'abc' },
  'us-east-1': { code: 'use1', zones: 'abcdef' },
  'ap-southeast-1': { code: 'apse1', zones: 'abc' },
  'eu-central-1': { code: 'euc1', zones: 'abc' },
};
const INSTANCE_TYPES = ['m6i.xlarge', 'm6a.xlarge', 'm5.xlarge', 'c6i.2xlarge', 'r6i.large', 't3.large', 'm7i.2xlarge'];
const CLUSTER_CA = [
  '-----BEGIN CERTIFICATE-----',
  'MIIBdzCCAR2gAwIBAgIUQ2x1c3RlckNBZXhhbXBsZTAKBggqhkjOPQQDAjAVMRMw',
  'EQYDVQQDEwprdWJlcm5ldGVzMB4XDTI2MDEwMTAwMDAwMFoXDTM2MDEwMTAwMDAw',
  'MFowFTETMBEGA1UEAxMKa3ViZXJuZXRlczBZMBMGByqGSM49AgEGCCqGSM49AwEH',
  'A0IABExhbXBsZUNBcHVibGlja2V5Zm9yZG9jdW1lbnRhdGlvbm9ubHlub3RyZWFs',
  'a2V5bWF0ZXJpYWwwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAw',
  '-----END CERTIFICATE-----',
  '',
].join('\n');

/** mulberry32: tiny, fast and good enough for shapes; Math.random would make runs incomparable. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  public next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Inclusive on both ends. */
  public int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  public chance(p: number): boolean {
    return this.next() < p;
  }
  public pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }
  /** k distinct items, in their original order (zones and subnets must line up). */
  public sample<T>(items: readonly T[], k: number): T[] {
    const idx = items.map((_, i) => i);
    for (let i = idx.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [idx[i], idx[j]] = [idx[j], idx[i]];
    }
    return idx
      .slice(0, k)
      .sort((a, b) => a - b)
      .map((i) => items[i]);
  }
  public hex(n: number): string {
    let s = '';
    for (let i = 0; i < n; i++) s += Math.floor(this.next() * 16).toString(16);
    return s;
  }
}

export interface FleetOptions {
  readonly seed?: number;
  /** Accounts to spread clusters over. One account suits the reconciler, whose credentials belong to one. */
  readonly accounts?: readonly string[];
}

type Proto = 'TCP' | 'UDP' | 'TCP_UDP' | 'TLS';
interface GenListener {
  name: string;
  protocol: Proto;
  port: number;
  nodePort: number;
  certificateArn?: string;
  healthCheck?: { protocol: 'TCP' | 'HTTP'; port?: number; path?: string };
}

const transports = (p: Proto) => (p === 'UDP' ? ['udp'] : p === 'TCP_UDP' ? ['tcp', 'udp'] : ['tcp']);

/**
 * Rules the load balancer adds to the worker security group, counted as the construct counts them
 * (per protocol and port). Validation counts distinct port numbers only, which is lower for UDP and
 * TCP_UDP listeners; generating against validation's count alone could emit objects that pass
 * validation and then fail at synth with "rules exceed 60".
 */
function nodeRuleKeys(listeners: readonly GenListener[]): Set<string> {
  const keys = new Set<string>();
  for (const l of listeners) {
    for (const t of transports(l.protocol)) keys.add(`${t}/${l.nodePort}`);
    keys.add(`tcp/${l.healthCheck?.port ?? l.nodePort}`);
  }
  return keys;
}

/** Cluster `index` of the fleet: a plain object as it would be parsed from YAML. */
export function generateCluster(index: number, opts: FleetOptions = {}): Record<string, unknown> {
  const rng = new Rng(
    Math.imul((opts.seed ?? DEFAULT_SEED) ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35),
  );
  const account = rng.pick(opts.accounts ?? ACCOUNTS);
  const region = rng.pick(Object.keys(REGIONS));
  const env = rng.pick(['prod', 'staging', 'dev', 'edge']);
  const name = `${env}-${REGIONS[region].code}-${String(index).padStart(5, '0')}`;
  // eslint-disable-next-line @typescript-eslint/no-misused-spread -- zone letters are ASCII (a, b, c)
  const zoneNames = [...REGIONS[region].zones].map((z) => `${region}${z}`);
  const zones = rng.sample(zoneNames, rng.int(2, 3));
  const minSize = rng.int(1, 5);
  const maxSize = minSize + rng.int(2, 30);
  const legacy = rng.chance(0.1);

  const listeners: GenListener[] = [];
  // Node ports and health ports inside the default NodePort range (30000-32767), as validation requires.
  const nodeBase = 30000 + rng.int(0, 700);
  const ingressHealthPort = 30254 + rng.int(0, 2) * 1000;
  for (let i = 0, n = rng.int(5, 20); i < n; i++) {
    const r = rng.next();
    const protocol: Proto = r < 0.7 ? 'TCP' : r < 0.82 ? 'UDP' : r < 0.9 ? 'TCP_UDP' : 'TLS';
    const l: GenListener = {
      name: `${rng.pick(['web', 'api', 'grpc', 'game', 'mqtt', 'stream', 'dns', 'sip'])}-${String(i).padStart(2, '0')}`,
      protocol,
      port: protocol === 'TLS' ? 8443 + i : 7000 + i,
      nodePort: nodeBase + i,
    };
    if (protocol === 'TLS')
      l.certificateArn = `arn:aws:acm:${region}:${account}:certificate/${rng.hex(8)}-${rng.hex(4)}-${rng.hex(4)}-${rng.hex(4)}-${rng.hex(12)}`;
    const hc = rng.next();
    if (hc < 0.25) l.healthCheck = { protocol: 'HTTP', port: ingressHealthPort, path: '/healthz' };
    else if (hc < 0.4 || protocol === 'UDP' || protocol === 'TCP_UDP')
      l.healthCheck = { protocol: 'TCP', port: nodeBase + 2000 + i }; // a UDP port cannot be probed over TCP
    listeners.push(l);
  }
  while (listeners.length > 5 && LIMITS.inboundRulesPerSecurityGroup - nodeRuleKeys(listeners).size < 10)
    listeners.pop();
  const budget = LIMITS.inboundRulesPerSecurityGroup - nodeRuleKeys(listeners).size;
  const clientRulesPerCidr = listeners.reduce((n, l) => n + transports(l.protocol).length, 0);
  const cidrCount = Math.max(
    1,
    Math.min(rng.int(1, 3), Math.floor(LIMITS.inboundRulesPerSecurityGroup / clientRulesPerCidr)),
  );

  // Fixed infrastructure rules first, then monitoring/partner rules with unique sources up to the budget.
  const rules: Record<string, unknown>[] = [
    { description: 'node to node', protocol: 'all', source: { self: true } },
    {
      description: 'kubelet API from the control plane',
      protocol: 'tcp',
      port: 10250,
      source: { securityGroupId: `sg-${rng.hex(17)}` },
    },
  ];
  if (rng.chance(0.5))
    rules.push({
      description: 'SSH from the bastion prefix list',
      protocol: 'tcp',
      port: 22,
      source: { prefixListId: `pl-${rng.hex(17)}` },
    });
  if (rng.chance(0.5))
    rules.push({ description: 'ICMP path MTU discovery', protocol: 'icmp', source: { cidr: '10.0.0.0/8' } });
  if (rng.chance(0.3))
    rules.push({
      description: 'NodePort services from the VPC',
      protocol: 'tcp',
      fromPort: 30000,
      toPort: 32767,
      source: { cidr: `10.${rng.int(16, 31)}.0.0/16` },
    });
  const ruleCount = rng.int(Math.max(10, rules.length), budget);
  for (let j = 0; rules.length < ruleCount; j++) {
    const v6 = rng.chance(0.1);
    const proto = rng.chance(0.1) ? 'udp' : 'tcp';
    rules.push({
      description: `partner ${j + 1} ${proto === 'udp' ? 'syslog' : 'monitoring'}`,
      protocol: proto,
      port: proto === 'udp' ? 514 : rng.pick([9100, 9090, 443, 8080, 10255]),
      source: v6
        ? { cidrIpv6: `2001:db8:${(j + 1).toString(16)}::/48` }
        : { cidr: `10.${64 + (j >> 8)}.${j & 255}.0/24` },
    });
  }

  const flatcar = rng.chance(0.5);
  const pool: Record<string, unknown> = {
    instanceTypes: legacy ? [rng.pick(INSTANCE_TYPES)] : rng.sample(INSTANCE_TYPES, rng.int(1, 3)),
    machineImage: `ami-${rng.hex(17)}`,
    minSize,
    maxSize,
    ...(rng.chance(0.3) ? { desiredCapacity: rng.int(minSize, maxSize) } : {}),
    ...(rng.chance(0.5) ? { rootVolume: { sizeGiB: rng.pick([50, 100, 200]), type: 'gp3' } } : {}),
    ...(legacy ? { legacyLaunchConfiguration: true } : {}),
    rollingUpdate: {
      maxBatchSize: rng.int(1, 3),
      minInstancesInService: rng.int(0, minSize),
      pauseTime: rng.pick(['PT10M', 'PT12M', 'PT15M']),
    },
  };
  const poolLabel = rng.pick(['general', 'compute', 'memory', 'edge']);
  const kubernetesVersion = rng.pick(['v1.30.6', 'v1.31.2', 'v1.32.0']);
  const values: Record<string, unknown> = {
    apiEndpoint: `https://api.${name}.k8s.example.com${flatcar ? '' : ':6443'}`,
    kubernetesVersion,
    // Well-formed placeholders, one per version and architecture (an operator copies the real ones from the release's .sha256 files).
    kubeletSha256: {
      amd64: placeholderSha256(`kubelet ${kubernetesVersion} amd64`),
      arm64: placeholderSha256(`kubelet ${kubernetesVersion} arm64`),
    },
    ...(flatcar
      ? { awsCliImage: `public.ecr.aws/aws-cli/aws-cli:2.22.0@sha256:${placeholderSha256('aws-cli 2.22.0')}` }
      : {}),
    clusterDNS: rng.pick(['172.20.0.10', '10.100.0.10']),
    ...(rng.chance(0.4) ? { maxPods: rng.pick([58, 110, 250]) } : {}),
    nodeLabels: { 'node.kubernetes.io/pool': poolLabel, 'topology.example.com/env': env },
    ...(rng.chance(0.3)
      ? { nodeTaints: [{ key: `example.com/${poolLabel}`, value: 'true', effect: 'NoSchedule' }] }
      : {}),
    ...(rng.chance(0.3) ? { registryMirrors: [`https://mirror.${region}.example.com`] } : {}),
    bootstrapTokenSecretArn: `arn:aws:secretsmanager:${region}:${account}:secret:worker-stacks/${name}/kubelet-bootstrap-${rng.hex(6)}`,
    clusterCA: CLUSTER_CA,
  };
  return {
    apiVersion: 'worker-stacks.io/v1alpha1',
    kind: 'WorkerCluster',
    metadata: { name },
    spec: {
      account,
      region,
      network: {
        vpcId: `vpc-${rng.hex(17)}`,
        availabilityZones: zones,
        subnetIds: zones.map(() => `subnet-${rng.hex(17)}`),
      },
      pool,
      loadBalancer: {
        scheme: rng.pick(['internal', 'internet-facing']),
        allowedCidrs: Array.from({ length: cidrCount }, (_, k) => `10.${k}.0.0/16`),
      },
      securityGroupRules: rules,
      listeners,
      cloudConfig: { template: flatcar ? 'flatcar-worker' : 'al2023-worker', values },
      tags: { team: rng.pick(['platform', 'edge', 'data', 'games']), 'cost-center': String(rng.int(1000, 9999)), env },
    },
  };
}

/** Writes clusters [from, to) of the fleet into `dir` (one `<name>.yaml` each) and returns their names. */
export function writeFleet(dir: string, count: number, opts: FleetOptions & { from?: number } = {}): string[] {
  fs.mkdirSync(dir, { recursive: true });
  const templates = listTemplates(defaultTemplates());
  const names: string[] = [];
  for (let i = opts.from ?? 0; i < (opts.from ?? 0) + count; i++) {
    const raw = generateCluster(i, opts);
    const name = (raw.metadata as { name: string }).name;
    const file = path.join(dir, `${name}.yaml`);
    const result = validateCluster(raw, { file, templates });
    if (!result.cluster)
      throw new Error(`generator bug: cluster ${i} is invalid:\n${result.problems.map(formatProblem).join('\n')}`);
    fs.writeFileSync(file, `# Generated by bench/generate-fleet.ts (cluster ${i}); do not edit.\n${stringify(raw)}`);
    names.push(name);
  }
  return names;
}

if (require.main === module) {
  const [dir, count, ...rest] = process.argv.slice(2);
  if (!dir || !count) {
    process.stderr.write('usage: generate-fleet.ts <dir> <count> [--seed N] [--account ID]\n');
    process.exit(2);
  }
  const flag = (f: string) => (rest.includes(f) ? rest[rest.indexOf(f) + 1] : undefined);
  const account = flag('--account');
  const names = writeFleet(dir, Number(count), {
    seed: flag('--seed') ? Number(flag('--seed')) : undefined,
    accounts: account ? [account] : undefined,
  });
  process.stdout.write(`wrote ${names.length} cluster objects to ${dir}\n`);
}
