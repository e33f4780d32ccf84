import { z } from 'zod';
import { ipv4Cidr, ipv6Cidr } from './cidr-rules';
import { awsId, dnsLabel, ec2Description, intIn, noTokens, pattern, port } from './rules';

/** spec.securityGroupRules and spec.listeners of the WorkerCluster object (schema.ts composes them). */

const d = (text: string) => ({ description: text });

export const RuleSourceSchema = z
  .strictObject({
    cidr: ipv4Cidr.optional().meta(d('An IPv4 CIDR, network address only (10.0.0.0/8).')),
    cidrIpv6: ipv6Cidr.optional().meta(d('An IPv6 CIDR (2001:db8::/32).')),
    securityGroupId: awsId('sg', 'a security group').optional().meta(d('Another security group.')),
    prefixListId: awsId('pl', 'a prefix list').optional().meta(d('A managed prefix list.')),
    self: z.literal(true).optional().meta(d('The worker pool itself (node to node).')),
    loadBalancer: z.literal(true).optional().meta(d("The cluster's load balancer.")),
  })
  .meta(
    d(
      'Where the traffic comes from: exactly one of cidr, cidrIpv6, securityGroupId, prefixListId, self, loadBalancer.',
    ),
  );

export const RULE_SOURCE_KINDS = [
  'cidr',
  'cidrIpv6',
  'securityGroupId',
  'prefixListId',
  'self',
  'loadBalancer',
] as const;

export const SecurityGroupRuleSchema = z
  .strictObject({
    description: ec2Description.meta(
      d(
        'What the rule is for; shown in the EC2 console. 1-255 characters: letters a-z A-Z, digits, space and ._-:/()#,@[]+=&;{}!$* (what EC2 takes).',
      ),
    ),
    protocol: z.enum(['tcp', 'udp', 'icmp', 'icmpv6', 'all']).meta(d('IP protocol.')),
    port: port().optional().meta(d('A single port (tcp/udp). Give either port or fromPort+toPort.')),
    fromPort: port().optional().meta(d('First port of a range (tcp/udp).')),
    toPort: port().optional().meta(d('Last port of a range, inclusive (tcp/udp).')),
    source: RuleSourceSchema,
    pools: z
      .array(dnsLabel)
      .min(1)
      .optional()
      .meta(
        d(
          "Pools (spec.pools[].name) whose nodes alone take the rule: it goes on each named pool's own security group (the first narrowed rule of a pool adds that group to its nodes: a roll of that pool), and source self means that pool's nodes. @default every node of the cluster (the shared worker security group)",
        ),
      ),
  })
  .meta(d('One inbound rule on the worker security group, or on the groups of the pools it names.'));

export const HealthCheckSchema = z
  .strictObject({
    protocol: z.enum(['TCP', 'HTTP', 'HTTPS']).default('TCP').meta(d('Health check protocol. @default TCP')),
    port: port().optional().meta(d("Port to probe on the node. @default the listener's nodePort")),
    path: noTokens(pattern(/^\/[\x21-\x7e]*$/, 'an HTTP path starting with /'))
      .optional()
      .meta(d('HTTP(S) path. Only for HTTP and HTTPS. @default /')),
    intervalSeconds: z.literal([10, 30]).default(10).meta(d('Seconds between probes (10 or 30). @default 10')),
    healthyThreshold: intIn(2, 10, 'healthy threshold').default(3).meta(d('@default 3')),
    unhealthyThreshold: intIn(2, 10, 'unhealthy threshold').default(3).meta(d('@default 3')),
  })
  .meta(d('Target health check.'));

export const ListenerSchema = z
  .strictObject({
    name: dnsLabel.meta(d('Unique name; the listener and target group ids derive from it, not from its position.')),
    protocol: z.enum(['TCP', 'UDP', 'TCP_UDP', 'TLS']).default('TCP').meta(d('Listener protocol. @default TCP')),
    port: port().meta(d('Port the load balancer listens on.')),
    nodePort: port('node port').meta(d('Port on the nodes the traffic is forwarded to (a Kubernetes NodePort).')),
    certificateArn: pattern(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[0-9a-f-]+$/, 'an ACM certificate ARN')
      .optional()
      .meta(d('ACM certificate; required for TLS, refused otherwise.')),
    // Only policies whose oldest protocol is TLS 1.2 or 1.3 (the minimum is in the name: TLS13-1-2, TLS-1-2, FS-1-2):
    // ELBSecurityPolicy-2016-08, -TLS-1-0-*, -TLS-1-1-*, -TLS13-1-0-*, -TLS13-1-1-*, -FS-2018-06 and -FS-1-1-* take TLS 1.0 or 1.1.
    sslPolicy: pattern(
      /^ELBSecurityPolicy-(TLS13-1-[23]|TLS-1-2|FS-1-2)(-[A-Za-z0-9]+)*-\d{4}-\d{2}$/,
      'an ELB security policy of TLS 1.2 or newer, such as ELBSecurityPolicy-TLS13-1-2-2021-06 (policies that accept TLS 1.0 or 1.1 are refused)',
    )
      .optional()
      .meta(
        d(
          'TLS security policy of a TLS listener; refused for other protocols. @default ELBSecurityPolicy-TLS13-1-2-2021-06 (TLS 1.2 and 1.3 only)',
        ),
      ),
    hostPort: z
      .boolean()
      .default(false)
      .meta(
        d(
          'Allow a nodePort outside spec.nodePortRange (for hostNetwork ingress); ports of node services (SSH, kubelet, etcd, API server ...) are refused even then. @default false',
        ),
      ),
    pools: z
      .array(dnsLabel)
      .min(1)
      .optional()
      .meta(
        d(
          'Pools (spec.pools[].name) whose nodes the target group takes. @default every pool without a NoSchedule or NoExecute taint',
        ),
      ),
    healthCheck: HealthCheckSchema.default({
      protocol: 'TCP',
      intervalSeconds: 10,
      healthyThreshold: 3,
      unhealthyThreshold: 3,
    }),
  })
  .meta(d('One load-balancer listener with its target group on the worker pool.'));
