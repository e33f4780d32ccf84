import * as net from 'node:net';
import { z } from 'zod';
import { cel, quoted } from './openapi';
import { custom } from './rules';

/**
 * Node settings as the kubelet takes them: the cluster DNS address of its configuration, and the labels and taints
 * it registers the node with. A value the kubelet refuses would pass synthesis and stop every node of the pool from
 * joining, so each is refused here, and by the API server from the same definitions (CEL).
 */

/** What a node's cluster DNS address must not be: no unicast host answers there (0.0.0.0/8, loopback, link-local, multicast, reserved, broadcast). */
const NOT_UNICAST = /^(0|127|22[4-9]|23\d|24\d|25[0-5])\.|^169\.254\./;
export const clusterDnsAddress = custom(
  z.string(),
  (v) => {
    if (!net.isIPv4(v)) return `${JSON.stringify(v)} is not a valid IPv4 address`;
    return NOT_UNICAST.test(v)
      ? `${v} is not a unicast address a DNS service can have (0.0.0.0/8, loopback, link-local, multicast and reserved addresses are refused); use the cluster DNS Service's ClusterIP, such as 10.100.0.10`
      : undefined;
  },
  {
    maxLength: 15,
    cel: [
      cel(
        `isIP(self) && ip(self).family() == 4 && self.matches(${quoted(/^\d{1,3}(\.\d{1,3}){3}$/.source)})`,
        `'"' + self + '" is not a valid IPv4 address'`,
      ),
      cel(
        `!self.matches(${quoted(NOT_UNICAST.source)})`,
        `self + ${quoted(" is not a unicast address a DNS service can have (0.0.0.0/8, loopback, link-local, multicast and reserved addresses are refused); use the cluster DNS Service's ClusterIP, such as 10.100.0.10")}`,
      ),
    ],
  },
);

/**
 * Label keys and values as the kubelet takes them in --node-labels (k8s.io/apimachinery validation.IsQualifiedName and
 * IsValidLabelValue, and the kubelet's node-restriction rule): a name of at most 63 characters, an optional DNS
 * subdomain prefix of at most 253; a label in the kubernetes.io or k8s.io namespace only with the prefixes and keys the
 * kubelet may set on its own node (it refuses to start otherwise, so no node of the pool would ever join).
 */
const QUALIFIED_NAME =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;
const KUBE_NAMESPACE = /^([^/]*\.)?(kubernetes\.io|k8s\.io)\//;
const KUBELET_LABEL_PREFIXES = ['kubelet.kubernetes.io/', 'node.kubernetes.io/'];
const KUBELET_LABELS = [
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/instance-type',
  'beta.kubernetes.io/os',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'kubernetes.io/arch',
  'kubernetes.io/hostname',
  'kubernetes.io/os',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
];
const kubeletAllowed = (k: string) => KUBELET_LABEL_PREFIXES.some((p) => k.startsWith(p)) || KUBELET_LABELS.includes(k);

function qualifiedNameProblem(v: string, what: string): string | undefined {
  const slash = v.lastIndexOf('/');
  const [prefix, name] = slash < 0 ? ['', v] : [v.slice(0, slash), v.slice(slash + 1)];
  if (!QUALIFIED_NAME.test(v)) return `${JSON.stringify(v)} is not a ${what}`;
  if (name.length > 63)
    return `${JSON.stringify(v)} is not a ${what}: the name after the prefix has ${name.length} characters, at most 63`;
  if (prefix.length > 253)
    return `${JSON.stringify(v)} is not a ${what}: the prefix has ${prefix.length} characters, at most 253`;
  return undefined;
}

const qualifiedNameCel = (what: string) => [
  cel(`self.matches(${quoted(QUALIFIED_NAME.source)})`, `'"' + self + ${quoted(`" is not a ${what}`)}`),
  cel(
    `size(self.substring(self.lastIndexOf('/') + 1)) <= 63 && (self.lastIndexOf('/') < 0 || self.lastIndexOf('/') <= 253)`,
    `'"' + self + ${quoted(`" is not a ${what}: a name of at most 63 characters, a prefix of at most 253`)}`,
  ),
];

/**
 * Labels whose value differs from node to node of one pool: the kubelet and the cloud provider set each on its node
 * (its name, its zone: a pool spans its subnets' zones; its instance type: a pool may have several). As a pool's
 * label (the same constant on every node) it would be wrong on most of them, and schedulers and topology spread
 * would act on the lie.
 */
const PER_NODE_LABELS = [
  'beta.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/zone',
  'kubernetes.io/hostname',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/zone',
];
const PER_NODE_RULE =
  'differs from node to node (the kubelet and the cloud provider set it on each node): a pool label is one value for all of its nodes; leave it out';

const KUBELET_LABEL_RULE = `the kubelet may not set labels in the kubernetes.io or k8s.io namespaces except ${KUBELET_LABEL_PREFIXES.map((p) => `${p}*`).join(', ')} and ${KUBELET_LABELS.join(', ')} (it refuses to start); use your own prefix, such as example.com/role`;
export const nodeLabelKey = custom(
  z.string(),
  (v) =>
    qualifiedNameProblem(v, 'label key') ??
    (KUBE_NAMESPACE.test(v) && !kubeletAllowed(v) ? `${JSON.stringify(v)}: ${KUBELET_LABEL_RULE}` : undefined) ??
    (PER_NODE_LABELS.includes(v) ? `${JSON.stringify(v)} ${PER_NODE_RULE}` : undefined),
  {
    maxLength: 317,
    cel: [
      ...qualifiedNameCel('label key'),
      cel(
        `!self.matches(${quoted(KUBE_NAMESPACE.source)}) || ${[...KUBELET_LABEL_PREFIXES.map((p) => `self.startsWith(${quoted(p)})`), `self in [${KUBELET_LABELS.map(quoted).join(', ')}]`].join(' || ')}`,
        `'"' + self + ${quoted(`": ${KUBELET_LABEL_RULE}`)}`,
      ),
      cel(`!(self in [${PER_NODE_LABELS.map(quoted).join(', ')}])`, `'"' + self + ${quoted(`" ${PER_NODE_RULE}`)}`),
    ],
  },
);
export const taintKey = custom(z.string(), (v) => qualifiedNameProblem(v, 'taint key'), {
  maxLength: 317,
  cel: qualifiedNameCel('taint key'),
});

const labelValueRule = (what: string) =>
  custom(
    z.string(),
    (v) =>
      !LABEL_VALUE.test(v)
        ? `${JSON.stringify(v)} is not a ${what}`
        : v.length > 63
          ? `${JSON.stringify(v)} is not a ${what}: ${v.length} characters, at most 63`
          : undefined,
    {
      maxLength: 256,
      cel: [
        cel(`self.matches(${quoted(LABEL_VALUE.source)})`, `'"' + self + ${quoted(`" is not a ${what}`)}`),
        cel('size(self) <= 63', `'"' + self + ${quoted(`" is not a ${what}: at most 63 characters`)}`),
      ],
    },
  );
export const labelValue = labelValueRule('label value');
export const taintValue = labelValueRule('taint value');
