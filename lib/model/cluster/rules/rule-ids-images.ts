import { ClusterRule } from './cluster-rule';

// The named rules of what a pool boots: its image channel (lib/model/channel/image-pins.ts, pin-pools.ts,
// channel-schema.ts; the channel's CRD: lib/platform/kube/channel-crd.ts) and its rendered node config
// (lib/model/cloudconfig/config-problems.ts).

/** `field` of spec.pool and of each of spec.pools. */
const eachPool = (field: string) => [`spec.pool.${field}`, `spec.pools[].${field}`];
/** Why a rule over a pool's channel has no CEL twin in the WorkerCluster CRD. */
const OTHER_OBJECT = 'it reads the WorkerImageChannel the pool names, another object, which CEL cannot see';
/** Why a rule over the rendered node config has none. */
const RENDERED = 'it reads the node config rendered from the templates of cloudconfig/, which the API server has not';

export const IMAGE_RULES = [
  {
    id: 'image-channel',
    paths: eachPool('imageChannel'),
    says: "A pool's image channel exists, validates, has a release for the cluster's region, and is of the pool's architecture.",
    cel: { none: OTHER_OBJECT },
  },
  {
    id: 'channel-source',
    paths: ['WorkerImageChannel spec.source', ...eachPool('imageChannel')],
    says: "A channel sets exactly one of ssmParameter and images, and keeps that kind: its recorded releases are its source's.",
    cel: {
      partly:
        "the WorkerImageChannel CRD states exactly one of ssmParameter and images; a changed kind is known from the channel's status, which the daemon writes",
    },
  },
  {
    id: 'channel-promotion',
    paths: ['WorkerImageChannel spec.promotedRelease', ...eachPool('imageChannel')],
    says: "A channel's promotedRelease names a release the channel recorded.",
    cel: { none: "the recorded releases are the channel's status, which the daemon writes after admission" },
  },
  {
    id: 'channel-holds',
    paths: ['WorkerImageChannel spec.holds[]', ...eachPool('imageChannel')],
    says: 'A hold gives exactly one of clusters and selector, and names a release the channel recorded.',
    cel: {
      partly:
        "the WorkerImageChannel CRD states exactly one of clusters and selector; the recorded releases are the channel's status",
    },
  },
  {
    id: 'image-family',
    paths: eachPool('imageFamily'),
    says: "A pool's stated image family reads the node config of its template (eks-al2023, eks-bottlerocket, flatcar-worker...).",
    cel: { none: 'which family reads a format is the format of the template, a file of cloudconfig/' },
  },
  {
    id: 'eks-pools-agree',
    paths: eachPool('cloudConfig.template'),
    says: "A cluster's pools are all EKS nodes or none: each pool's node config joins EKS as the first pool's does.",
    cel: { none: 'whether a template joins EKS is the format of the template, a file of cloudconfig/' },
  },
  {
    id: 'signals-sent',
    paths: eachPool('rollingUpdate.waitOnResourceSignals'),
    says: 'A pool that waits on CloudFormation signals has a node config that sends one.',
    cel: { none: 'whether a node config sends a signal is the format of the template, a file of cloudconfig/' },
  },
  {
    id: 'user-data-fits',
    paths: ['spec.cloudConfig.values'],
    says: "Each pool's user data fits EC2's 16384 bytes (before base64).",
    cel: { none: RENDERED },
  },
] as const satisfies readonly ClusterRule[];
