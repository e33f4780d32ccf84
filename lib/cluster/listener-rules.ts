/**
 * Which security-group rules the listeners add, as one function that both the
 * construct (lib/constructs/worker-listeners.ts) and validation count with, so
 * that the quota check at validation counts exactly what synthesis will build.
 */
export type Transport = 'tcp' | 'udp';

/** The IP protocols a listener's traffic uses on the wire. */
export function transportsOf(protocol: string | undefined): Transport[] {
  return protocol === 'UDP' ? ['udp'] : protocol === 'TCP_UDP' ? ['tcp', 'udp'] : ['tcp'];
}

export interface ListenerPorts {
  readonly protocol?: string;
  readonly nodePort?: unknown;
  readonly healthCheck?: { readonly port?: unknown };
}

/**
 * The node-side rules (from the load balancer), by `protocol/port`, in listener order; a port two listeners share
 * is one rule: one per transport of each node port, and a TCP rule for each health-check port.
 */
export function nodeRuleKeys(listeners: readonly ListenerPorts[]): string[] {
  const keys = new Set<string>();
  for (const l of listeners) {
    for (const t of transportsOf(l.protocol)) keys.add(`${t}/${String(l.nodePort)}`);
    keys.add(`tcp/${String(l.healthCheck?.port ?? l.nodePort)}`);
  }
  return [...keys];
}

/** Client rules on the load balancer's group: one per transport of each listener and allowed CIDR. */
export function clientRuleCount(listeners: readonly ListenerPorts[], cidrs: number): number {
  return listeners.reduce((n, l) => n + transportsOf(l.protocol).length * cidrs, 0);
}
