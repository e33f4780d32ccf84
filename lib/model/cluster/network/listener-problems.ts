import { duplicates } from '../rules/duplicates';
import { LIMITS } from '../rules/limits';
import { clientRuleCount, ListenerPorts } from './listener-rules';
import { arr, Found, int, Loose, obj, str } from '../rules/loose';
import { found } from '../rules/rule-registry';

/** The listeners' rules over several fields (cross-field.ts): a load balancer, the AWS limits, unique names and ports. */
export function listenerProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const listeners = arr(spec.listeners);
  if (listeners.length > 0 && spec.loadBalancer === undefined)
    out.push(
      found(
        'listeners-need-load-balancer',
        'spec.loadBalancer',
        'required field is missing (listeners need a load balancer with allowedCidrs)',
      ),
    );
  if (listeners.length > LIMITS.listenersPerLoadBalancer) {
    out.push(
      found(
        'listeners-limit',
        'spec.listeners',
        `${listeners.length} listeners exceed the AWS limit of ${LIMITS.listenersPerLoadBalancer} per load balancer`,
      ),
    );
  }
  if (listeners.length > LIMITS.targetGroupsPerAutoScalingGroup) {
    out.push(
      found(
        'listeners-limit',
        'spec.listeners',
        `${listeners.length} target groups exceed the AWS limit of ${LIMITS.targetGroupsPerAutoScalingGroup} per Auto Scaling group`,
      ),
    );
  }
  const cidrs = arr(obj(spec.loadBalancer).allowedCidrs).length;
  const transports = clientRuleCount(
    listeners.map((l) => obj(l) as ListenerPorts),
    1,
  );
  if (transports * cidrs > LIMITS.inboundRulesPerSecurityGroup) {
    const counted = transports === listeners.length ? '' : ` (${transports} with each TCP_UDP listener counted twice)`;
    out.push(
      found(
        'client-rules-limit',
        'spec.loadBalancer.allowedCidrs',
        `${listeners.length} listeners${counted} × ${cidrs} CIDRs = ${transports * cidrs} rules, over the AWS limit of ${LIMITS.inboundRulesPerSecurityGroup} per security group`,
      ),
    );
  }
  listeners.forEach((raw, i) => {
    const l = obj(raw);
    const at = `spec.listeners[${i}]`;
    const proto = str(l.protocol) ?? 'TCP';
    if (proto === 'TLS' && l.certificateArn === undefined)
      out.push(
        found(
          'tls-fields',
          `${at}.certificateArn`,
          'required field is missing (TLS listeners need an ACM certificate)',
        ),
      );
    if (proto !== 'TLS' && l.certificateArn !== undefined)
      out.push(
        found('tls-fields', `${at}.certificateArn`, `only TLS listeners take a certificate (protocol is ${proto})`),
      );
    const hc = obj(l.healthCheck);
    const hcProto = str(hc.protocol) ?? 'TCP';
    if (hc.path !== undefined && hcProto === 'TCP')
      out.push(
        found(
          'tcp-health-check-path',
          `${at}.healthCheck.path`,
          'a TCP health check takes no path (use protocol HTTP or HTTPS)',
        ),
      );
  });
  out.push(
    ...duplicates(
      'listeners-unique',
      listeners,
      (l) => str(l.name),
      (i) => `spec.listeners[${i}].name`,
      'listener names',
    ),
  );
  out.push(
    ...duplicates(
      'listeners-unique',
      listeners,
      (l) => int(l.port),
      (i) => `spec.listeners[${i}].port`,
      'listener ports',
    ),
  );
  return out;
}
