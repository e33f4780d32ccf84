import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CfnSecurityGroupIngress } from 'aws-cdk-lib/aws-ec2';
import { awsSolutionsChecks } from '../stacks/nag';
import { IConstruct } from 'constructs';
import { sha256Hex } from '../../model/cloudconfig/checksum';
import { ruleKey } from '../constructs/security-group-rules';
import { OWN_SECURITY_GROUP } from '../constructs/pool-security-group';
import { Problem, RenderError, TemplateError, WorkerStacksError } from '../../core/errors';
import { renderProblem } from '../../model/cluster/derive';
import { buildFleetApp } from '../stacks/app';
import { poolStackName, workerStackName } from '../../core/naming';
import { DEFAULT_POOL, poolsOf } from '../../model/cluster/pools/pools';
import { WorkerCluster } from '../../model/cluster/schema/schema';

/**
 * Validation equals synthesis: `validate` synthesizes each valid object with the code `cdk synth` runs (render,
 * constructs, aspects) and runs cdk-nag's AwsSolutions pack on the result, with the stack's own acknowledgements.
 * Each finding is traced back to the item of the object that produced the resource, and says how to fix it in
 * YAML: a YAML author cannot acknowledge a finding in code, and should not need to.
 *
 * This module is imported by the CLI only (not by validateCluster, which stays pure and fast for the reconciler,
 * whose own synthesis step refuses the same findings).
 */

export interface SynthesisCheckOptions {
  /** The template directory. */
  readonly templatesDir: string;
  /** Run cdk-nag, as `cdk synth` does unless WORKER_STACKS_NAG=false. @default true */
  readonly nag?: boolean;
}

/** The problems `cdk synth` would refuse this (schema-valid) object with; empty when it synthesizes cleanly. */
export function synthesisProblems(cluster: WorkerCluster, file: string, opts: SynthesisCheckOptions): Problem[] {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-validate-'));
  try {
    const fleet = buildFleetApp({
      clusters: [{ file, cluster }],
      outdir,
      templatesDir: opts.templatesDir,
      nag: false,
      bootstrap: false,
      logicalIdMetadata: false,
    });
    // synth() runs the aspects and prepares the tree exactly as `cdk synth`; the pack then walks that same tree.
    fleet.app.synth();
    if (opts.nag === false) return [];
    const report = awsSolutionsChecks(fleet.app).validateScope(fleet.app);
    const byPath = new Map(fleet.app.node.findAll().map((c) => [c.node.path, c]));
    // One problem per finding and field: a CIDR open on two listeners is one mistake in the YAML, not two.
    const found = new Map<string, { origin: string; rule: string; description: string; resources: string[] }>();
    for (const v of report.violations) {
      for (const r of v.violatingResources) {
        const at = r.constructPath ?? '';
        const origin = originOf(cluster, at, byPath.get(at));
        const key = `${origin}\0${v.ruleName}`;
        const entry = found.get(key) ?? { origin, rule: v.ruleName, description: v.description, resources: [] };
        entry.resources.push(at);
        found.set(key, entry);
      }
    }
    return [...found.values()].map((f) => ({
      file,
      path: f.origin,
      message: `cdk-nag ${f.rule}: ${f.description} (resource${f.resources.length > 1 ? 's' : ''} ${f.resources.sort().join(', ')}); fix: ${fixFor(f.rule, f.origin, cluster)}`,
    }));
  } catch (e) {
    if (e instanceof RenderError) return [...e.problems];
    if (e instanceof TemplateError) return [renderProblem(e, file)];
    // aws-cdk-lib's construct validations come as "Validation failed with the following errors:" and one
    // "[construct path] message" line each: the messages are the rule (and name the object's field).
    const lines = e instanceof Error ? e.message.split('\n') : [String(e)];
    const validations = /^Validation failed with the following errors/.test(lines[0])
      ? lines.slice(1).flatMap((l) => /^\s*\[[^\]]*\]\s*(.+)$/.exec(l)?.[1] ?? [])
      : [];
    if (validations.length) {
      return validations.map((m) => {
        const at = /^(spec\.[^:\s]+): ([\s\S]*)$/.exec(m);
        return { file, path: at?.[1] ?? '', message: at?.[2] ?? m };
      });
    }
    const message = lines[0];
    return [
      {
        file,
        path: '',
        message: `does not synthesize: ${message}${e instanceof WorkerStacksError ? '' : ' (`npx cdk synth` with this object reproduces it)'}`,
      },
    ];
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

/** The field path of the item that produced the resource at `constructPath`. */
export function originOf(cluster: WorkerCluster, constructPath: string, construct?: IConstruct): string {
  const parts = constructPath.split('/');
  const pools = poolsOf(cluster.spec);
  // The field of a pool: spec.pool for a single-pool object, else its item of spec.pools.
  const poolField = (pool: string) => {
    if (!cluster.spec.pools) return 'spec.pool';
    const i = pools.findIndex((p) => p.name === pool);
    return i >= 0 ? `spec.pools[${i}]` : 'spec.pools';
  };
  // A rule of the shared group (Rules/<id>) or of a pool's own group (OwnSecurityGroup/Ingress/<id>), in either stack.
  const rules = parts[1] === 'Rules' ? 1 : parts[1] === OWN_SECURITY_GROUP && parts[2] === 'Ingress' ? 2 : -1;
  const ruleId = rules > 0 ? parts[rules + 1] : undefined;
  if (ruleId) {
    // A rule's construct id ends with the hash of its identity (protocol, ports, source); see SecurityGroupRules.
    const i = cluster.spec.securityGroupRules.findIndex((r) =>
      ruleId.endsWith(`-${sha256Hex(ruleKey(r)).slice(0, 8)}`),
    );
    return i >= 0 ? `spec.securityGroupRules[${i}]` : 'spec.listeners';
  }
  const own = pools.find((p) => p.name !== DEFAULT_POOL && poolStackName(cluster.metadata.name, p.name) === parts[0]);
  if (own) {
    if (parts[1] === 'NodeConfig') return own.cloudConfig ? `${poolField(own.name)}.cloudConfig` : 'spec.cloudConfig';
    return poolField(own.name);
  }
  if (parts[0] !== workerStackName(cluster.metadata.name)) return '';
  const [, top, child] = parts;
  if (top === 'Listeners') {
    if (child === 'ClientRules' && construct instanceof CfnSecurityGroupIngress) {
      const cidr = construct.cidrIp ?? construct.cidrIpv6;
      const j = (cluster.spec.loadBalancer?.allowedCidrs ?? []).indexOf(String(cidr));
      if (j >= 0) return `spec.loadBalancer.allowedCidrs[${j}]`;
    }
    const name = parts.slice(2).find((p) => cluster.spec.listeners.some((l) => p.includes(l.name)));
    const k = name === undefined ? -1 : cluster.spec.listeners.findIndex((l) => name.includes(l.name));
    return k >= 0 ? `spec.listeners[${k}]` : 'spec.loadBalancer';
  }
  if (top === 'Pool') return poolField(DEFAULT_POOL);
  if (top === 'NodeConfig') return 'spec.cloudConfig';
  return 'spec';
}

/** How to make a finding go away in the object, for the findings a cluster object can cause. */
function fixFor(rule: string, origin: string, cluster: WorkerCluster): string {
  if (rule === 'AwsSolutions-EC23' && origin.startsWith('spec.securityGroupRules[')) {
    return `narrow ${origin}.source to the networks that need it (a smaller cidr or cidrIpv6, or a prefixListId or securityGroupId, e.g. a bastion for SSH) instead of 0.0.0.0/0 or ::/0`;
  }
  if (rule === 'AwsSolutions-EC23' && origin.startsWith('spec.loadBalancer.allowedCidrs[')) {
    return cluster.spec.loadBalancer?.scheme === 'internet-facing'
      ? `narrow ${origin} to the clients that need the listeners`
      : `the load balancer is internal: narrow ${origin} to the networks inside (the VPC, peered networks), or set spec.loadBalancer.scheme: internet-facing if the listeners are meant to be public`;
  }
  return `change ${origin || 'the object'} so that the rule no longer applies (cdk-nag's RULES.md describes ${rule}); a finding worker-stacks accepts by design is acknowledged with its reason in lib/engines/stacks/nag.ts`;
}
