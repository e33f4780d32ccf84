import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseDocument, visit } from 'yaml';
import { asRecord } from '../../core/json';

/** The account moto answers STS GetCallerIdentity with, and so the one every playground cluster lives in. @internal exported for the playground tests */
export const MOTO_ACCOUNT = '123456789012';

/** What the objects reference in one region, for tools/moto/seed.py to create. */
export interface RegionWants {
  /** VPC id -> its subnets (id, zone) and the security groups that rules name as a source. */
  vpcs: Record<string, { subnets: { id: string; az: string }[]; securityGroups: string[] }>;
  images: string[];
  prefixLists: string[];
  certificates: string[];
}

/** One example object as read: its file name, parsed document (comments kept) and plain value. */
export interface Example {
  readonly file: string;
  readonly doc: ReturnType<typeof parseDocument>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- read as written, before validation
  readonly raw: any;
}

export function readExamples(dir: string): Example[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const doc = parseDocument(fs.readFileSync(path.join(dir, file), 'utf8'));
      const raw: unknown = doc.toJS();
      return { file, doc, raw };
    });
}

/**
 * The ids the objects name, per region: what must exist in the emulator for their stacks to deploy. Read from the
 * fields that hold them (network, load balancer subnets, each pool's image, rule sources, certificates), never guessed
 * from text. A pool's own subnets are a subset of the cluster's, so the network's list has them all.
 */
export function wantedIds(examples: readonly Example[]): Record<string, RegionWants> {
  const wants: Record<string, RegionWants> = {};
  const add = (list: string[], v: unknown) => typeof v === 'string' && !list.includes(v) && list.push(v);
  const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
  for (const { raw } of examples) {
    // Read before validation: a field of another shape names nothing to create.
    const spec = asRecord(asRecord(raw).spec);
    const region = String(spec.region);
    if (!(region in wants)) wants[region] = { vpcs: {}, images: [], prefixLists: [], certificates: [] };
    const w = wants[region];
    const net = asRecord(spec.network);
    const vpcId = String(net.vpcId);
    if (!(vpcId in w.vpcs)) w.vpcs[vpcId] = { subnets: [], securityGroups: [] };
    const vpc = w.vpcs[vpcId];
    const zones = list(net.availabilityZones).map(String);
    const subnet = (id: unknown, i: number) =>
      typeof id === 'string' &&
      !vpc.subnets.some((s) => s.id === id) &&
      vpc.subnets.push({ id, az: zones[i % zones.length] });
    list(net.subnetIds).forEach(subnet);
    // Load balancer subnets are in the same VPC; their zones are the cluster's, in turn.
    list(asRecord(spec.loadBalancer).subnetIds).forEach(subnet);
    // spec.pool, or each pool of spec.pools (an arm64 pool has an image of its own).
    for (const pool of [spec.pool, ...list(spec.pools)]) add(w.images, asRecord(pool).machineImage);
    for (const rule of list(spec.securityGroupRules)) {
      const source = asRecord(asRecord(rule).source);
      add(vpc.securityGroups, source.securityGroupId);
      add(w.prefixLists, source.prefixListId);
    }
    for (const l of list(spec.listeners)) add(w.certificates, asRecord(l).certificateArn);
  }
  return wants;
}

/**
 * The object moved into the emulator: every scalar that is an id the seed replaced becomes the new id, the account
 * becomes moto's, and so does the account field of every ARN (secrets, certificates). Nothing else changes: the
 * comments, the order and every other value stay as in the repository's own example.
 */
export function rewriteExample(example: Example, ids: Readonly<Partial<Record<string, string>>>): string {
  const doc = example.doc.clone();
  // An account id unquoted in YAML is a number; in ARNs it is text either way.
  const accountField = asRecord(asRecord(example.raw).spec).account;
  const account = typeof accountField === 'string' || typeof accountField === 'number' ? String(accountField) : '';
  visit(doc, {
    Scalar(key, node) {
      if (key === 'key' || typeof node.value !== 'string') return;
      const v = node.value;
      const id = ids[v];
      if (id !== undefined) node.value = id;
      else if (account && v === account) node.value = MOTO_ACCOUNT;
      else if (account && v.startsWith('arn:'))
        node.value = v
          .split(':')
          .map((part, i) => (i === 4 && part === account ? MOTO_ACCOUNT : part))
          .join(':');
    },
  });
  return doc.toString({ lineWidth: 0 });
}
