import { z } from 'zod';
import { clusterDnsAddress, labelValue, nodeLabelKey } from './kubelet-rules';
import { httpsUrl, intIn, pattern } from './rules';
import { DEFAULT_NODE_READY_TIMEOUT_SECONDS } from './rollout-schema';
import { TaintSchema } from './pool-schema';

/** spec.cloudConfig.values of the WorkerCluster object: the values every node-config template takes. */

const d = (text: string) => ({ description: text });

export const CloudConfigValuesSchema = z
  .strictObject({
    apiEndpoint: httpsUrl('an https:// URL of the Kubernetes API server (https://host[:port], no path)', false).meta(
      d('Kubernetes API server URL (https://host[:port], port 1-65535, no credentials).'),
    ),
    clusterCA: pattern(
      /^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+-----END CERTIFICATE-----\n?$/,
      'a PEM certificate',
      65536,
    ).meta(d('PEM CA bundle of the API server (public, not a secret).')),
    // Optional here: required by the templates that read it (their values.yaml says required: true), so an EKS
    // object, whose AMI brings its kubelet, need not write one.
    kubernetesVersion: pattern(/^v1\.\d{1,2}\.\d{1,3}$/, 'a Kubernetes version such as v1.31.2')
      .optional()
      .meta(d('Kubelet version. Required by the templates that install a kubelet (flatcar-worker, al2023-worker).')),
    clusterDNS: clusterDnsAddress.meta(
      d('Cluster DNS service IP (a unicast IPv4 address: not 0.0.0.0/8, loopback, link-local, multicast or reserved).'),
    ),
    maxPods: intIn(8, 1024, 'pod count').default(110).meta(d('@default 110')),
    nodeLabels: z
      .record(nodeLabelKey, labelValue)
      .default({})
      .meta(d('Labels the kubelet registers the node with. @default {}')),
    nodeTaints: z.array(TaintSchema).default([]).meta(d('Taints the kubelet registers the node with. @default []')),
    registryMirrors: z
      .array(httpsUrl('an https:// registry mirror URL', true))
      .default([])
      .meta(
        d(
          'Container registry mirrors for docker.io (https://host[:port][/path], port 1-65535, the path of letters, digits and ._~%/:+=,-; a URL with user:password@ is refused and never echoed). @default []',
        ),
      ),
    nodeReadyTimeoutSeconds: intIn(60, 3540, 'timeout in seconds')
      .default(DEFAULT_NODE_READY_TIMEOUT_SECONDS)
      .meta(
        d(
          `How long a booting node waits for its kubelet to be healthy and its node object to exist before it signals FAILURE to CloudFormation. @default ${DEFAULT_NODE_READY_TIMEOUT_SECONDS}`,
        ),
      ),
    bootstrapTokenSecretArn: pattern(
      /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/,
      'a Secrets Manager secret ARN',
      2048,
    )
      // Optional here, as kubernetesVersion: an EKS node joins with its role, not a bootstrap token.
      .optional()
      .meta(
        d(
          'Secret holding the kubelet bootstrap token, in the cluster account and region; its name starts with worker-stacks/<metadata.name>/ (a cluster names only its own secrets). Secret: fetched by the node at boot with its role, never rendered into a config. Required by the templates that join with a bootstrap token (flatcar-worker, al2023-worker).',
        ),
      ),
  })
  // Keys beyond these are the chosen template's own values: lib/model/cluster/values/template-values.ts checks them against the
  // template's values.yaml, so a template can take a new setting without a change here.
  .catchall(z.unknown())
  .meta(
    d(
      "Typed values the config template renders with: these, which every template takes, and the template's own (below).",
    ),
  );

/**
 * The values every template takes that a pool may set for itself (a kubelet version per pool, its pod density, its
 * boot time); the others are the cluster's alone (pool-rules.ts refuses them in a pool): where the API server is and how
 * a node trusts it and joins it (apiEndpoint, clusterCA, clusterDNS, the bootstrap secret, whose name is checked against
 * the cluster's), the registry mirrors, and nodeLabels and nodeTaints, which are the pool's labels and taints.
 */
export const POOL_OWN_VALUES = ['kubernetesVersion', 'maxPods', 'nodeReadyTimeoutSeconds'] as const;
