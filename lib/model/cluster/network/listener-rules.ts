/**
 * Which security-group rules the listeners add, as one function that both the
 * construct (lib/engines/constructs/worker-listeners.ts) and validation count with, so
 * that the quota check at validation counts exactly what synthesis will build.
 */
export type Transport = 'tcp' | 'udp';

/** The IP protocols a listener's traffic uses on the wire. */
export function transportsOf(protocol: string | undefined): Transport[] {
  return protocol === 'UDP' ? ['udp'] : protocol === 'TCP_UDP' ? ['tcp', 'udp'] : ['tcp'];
}

export interface ListenerPorts<P = unknown> {
  readonly name?: unknown;
  readonly protocol?: string;
  readonly nodePort?: P;
  readonly healthCheck?: { readonly port?: P };
}

export interface NodeRule<P> {
  readonly protocol: Transport;
  readonly port: P;
  /** The first listener that needs it names it. */
  readonly listener: unknown;
  readonly kind: 'traffic' | 'health-check';
}

/**
 * The node-side rules (from the load balancer), in listener order; a port two listeners share is one rule: one
 * per transport of each node port, and a TCP rule for each health-check port.
 */
export function nodeRules<P>(listeners: readonly ListenerPorts<P>[]): NodeRule<P>[] {
  const rules = new Map<string, NodeRule<P>>();
  const add = (r: NodeRule<P>) =>
    rules.has(`${r.protocol}/${String(r.port)}`) || rules.set(`${r.protocol}/${String(r.port)}`, r);
  for (const l of listeners) {
    for (const t of transportsOf(l.protocol))
      add({ protocol: t, port: l.nodePort as P, listener: l.name, kind: 'traffic' });
    add({ protocol: 'tcp', port: (l.healthCheck?.port ?? l.nodePort) as P, listener: l.name, kind: 'health-check' });
  }
  return [...rules.values()];
}

/** Client rules on the load balancer's group: one per transport of each listener and allowed CIDR. */
export function clientRuleCount(listeners: readonly ListenerPorts[], cidrs: number): number {
  return listeners.reduce((n, l) => n + transportsOf(l.protocol).length * cidrs, 0);
}
