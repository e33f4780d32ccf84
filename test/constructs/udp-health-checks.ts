/**
 * A UDP listener must name its health-check port (a TCP probe of a UDP port never passes). Example objects written
 * before that rule get one here: a TCP probe of node port + 50 (for edge-ap1 inside the 31000-31100 range its rules
 * open to the load balancer, and clear of every other node port). Listeners that name a port keep it.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw, unvalidated cluster objects
export function withUdpHealthChecks(raw: any): void {
  for (const l of raw.spec.listeners ?? []) {
    if (l.protocol === 'UDP' && l.healthCheck?.port === undefined) l.healthCheck = { ...(l.healthCheck ?? {}), protocol: 'TCP', port: l.nodePort + 50 };
  }
}
