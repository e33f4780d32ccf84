/**
 * "One listener per port", checked across a stack update the way CloudFormation applies it:
 *
 * 1. create and update phase: new resources are created, changed ones updated in place or, when a property that
 *    needs replacement changed, created anew; with no dependency between them these run in any order;
 * 2. cleanup phase: only then are removed resources and the old copies of replaced ones deleted.
 *
 * A load balancer refuses a second listener on a port (DuplicateListener) at every moment, so the check asks: could
 * two listener instances be on the same load balancer and port at the same time, in some order CloudFormation may
 * pick? It ignores dependencies (they could only rule orders out), so it errs on the side of reporting a conflict.
 */

import { Json } from '../../helpers/json';

/** Properties whose change replaces an AWS::ElasticLoadBalancingV2::LoadBalancer (CloudFormation resource reference). */
const LOAD_BALANCER_REPLACED_BY = ['Name', 'Scheme', 'Type'];

type Template = { readonly Resources?: Record<string, { Type: string; Properties?: Record<string, Json> }> } & Record<
  string,
  Json
>;
interface Instance {
  readonly id: string;
  /** Every (load balancer, port) it may occupy during the create and update phase. */
  readonly at: string[];
}

const LISTENER = 'AWS::ElasticLoadBalancingV2::Listener';
const listeners = (t: Template) => Object.entries(t.Resources ?? {}).filter(([, r]) => r.Type === LISTENER);

/** Load balancers that the update replaces: their `Ref` stays the same text but names a new physical resource. */
function replacedLoadBalancers(before: Template, after: Template): Set<string> {
  const out = new Set<string>();
  for (const [id, r] of Object.entries(after.Resources ?? {})) {
    const old = before.Resources?.[id];
    if (r.Type !== 'AWS::ElasticLoadBalancingV2::LoadBalancer' || old?.Type !== r.Type) continue;
    const removedSubnet = (old.Properties?.Subnets ?? []).some(
      (s: unknown) => !JSON.stringify(r.Properties?.Subnets ?? []).includes(JSON.stringify(s)),
    );
    if (
      removedSubnet ||
      LOAD_BALANCER_REPLACED_BY.some((p) => JSON.stringify(old.Properties?.[p]) !== JSON.stringify(r.Properties?.[p]))
    )
      out.add(id);
  }
  return out;
}

/** Every moment's possible conflicts, as "<load balancer>:<port> held by a, b" lines; empty when the update deploys. */
export function listenerPortConflicts(before: Template, after: Template): string[] {
  const replacedLbs = replacedLoadBalancers(before, after);
  const lbOf = (p: Record<string, Json> | undefined, generation: 'old' | 'new') => {
    const ref = p?.LoadBalancerArn?.Ref;
    return ref && replacedLbs.has(ref) ? `${ref}#${generation}` : JSON.stringify(p?.LoadBalancerArn);
  };
  const where = (p: Record<string, Json> | undefined, generation: 'old' | 'new') => `${lbOf(p, generation)}:${p?.Port}`;
  const instances: Instance[] = [];
  const oldOnes = new Map(listeners(before));
  for (const [id, r] of listeners(after)) {
    const old = oldOnes.get(id);
    const newAt = where(r.Properties, 'new');
    if (!old) {
      instances.push({ id: `${id} (created)`, at: [newAt] });
      continue;
    }
    const replaced = lbOf(old.Properties, 'old') !== lbOf(r.Properties, 'new');
    if (replaced) {
      // The new copy exists from its creation on; the old one until cleanup.
      instances.push(
        { id: `${id} (new copy)`, at: [newAt] },
        { id: `${id} (old copy)`, at: [where(old.Properties, 'old')] },
      );
    } else {
      // Updated in place (ModifyListener): on the old port until its update, on the new one after.
      instances.push({ id, at: [...new Set([where(old.Properties, 'old'), newAt])] });
    }
    oldOnes.delete(id);
  }
  // Removed listeners stay until cleanup.
  for (const [id, old] of oldOnes) instances.push({ id: `${id} (removed)`, at: [where(old.Properties, 'old')] });

  const holders = new Map<string, string[]>();
  for (const i of instances) for (const at of i.at) holders.set(at, [...(holders.get(at) ?? []), i.id]);
  return [...holders.entries()]
    .filter(([, ids]) => ids.length > 1)
    .map(([at, ids]) => `${at} held by ${ids.sort().join(', ')}`)
    .sort();
}
