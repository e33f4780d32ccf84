import { ClusterSpecSchema } from '../../model/cluster/schema/schema';
import { PlacedValidation } from './cel-build';
import { CAPS, CROSS_FIELD_RULES } from './cel-rules';
import { KubeStatusSchema } from './printer-status';
import { Json, SchemaNode, structuralSchema, Validation } from './structural';

/**
 * The WorkerCluster CustomResourceDefinition, generated from the zod schema the file store validates with
 * (lib/model/cluster/schema/schema.ts, status.ts): the same fields, field rules as OpenAPI and CEL (lib/model/cluster/schema/openapi.ts),
 * cross-field rules as CEL (cel-rules.ts). Deterministic: the same code gives the same bytes.
 */

export const GROUP = 'worker-stacks.io';
export const VERSION = 'v1alpha1';
export const PLURAL = 'workerclusters';
export const SINGULAR = 'workercluster';
export const KIND = 'WorkerCluster';
export const LIST_KIND = 'WorkerClusterList';
export const SHORT_NAMES = ['wc'] as const;
export const CATEGORIES = ['worker-stacks'] as const;
/** @internal The tests install, wait for and delete the CRD by this name. */
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/** Columns of `kubectl get wc`: where the cluster is, without reading the status. */
export const PRINTER_COLUMNS = [
  {
    name: 'Ready',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    description: 'Ready condition: the live stack runs the config the object asks for.',
  },
  {
    name: 'Reason',
    type: 'string',
    jsonPath: '.status.conditions[?(@.type=="Ready")].reason',
    description: 'Reason of the Ready condition.',
  },
  {
    name: 'Desired',
    type: 'string',
    jsonPath: '.status.desiredChecksumShort',
    description: 'Checksum prefix of the node config the object asks for.',
  },
  {
    name: 'Live',
    type: 'string',
    jsonPath: '.status.cloudConfigChecksumShort',
    description: 'Checksum prefix of the node config live on the stack.',
  },
  {
    name: 'Pending',
    type: 'string',
    jsonPath: '.status.pendingRolls',
    description:
      'Replacements of nodes pending and why (config, image, instance types, subnets, capacity, release), per pool.',
  },
  {
    name: 'Stack',
    type: 'string',
    jsonPath: '.status.stackStatus',
    description: 'Last CloudFormation stack status seen.',
  },
  {
    name: 'Pools',
    type: 'string',
    jsonPath: '.status.poolsReady',
    description: 'Stacks of the cluster that are Ready, of all (the shared one and each pool with its own), as n/m.',
  },
  {
    name: 'Paused',
    type: 'boolean',
    jsonPath: '.spec.paused',
    priority: 1,
    description: 'spec.paused: no AWS writes.',
  },
  { name: 'Stack Name', type: 'string', jsonPath: '.status.stackName', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;

/** The schema node at a path of cel-rules.ts ('spec.listeners[]', 'spec.pool', '' for the object). */
export function nodeAt(root: SchemaNode, at: string): SchemaNode {
  let node: SchemaNode | undefined = root;
  if (!at) return node;
  for (const part of at.split('.')) {
    const name = part.replace(/\[\]$/, '');
    node = node.properties?.[name];
    if (node && part.endsWith('[]')) node = node.items;
    if (!node) throw new Error(`CRD generator: no schema node at ${at} (a cel-rules.ts path no longer in the schema)`);
  }
  return node;
}

/** The openAPIV3Schema of the WorkerCluster object. */
export function workerClusterSchema(): Json {
  const spec = structuralSchema(ClusterSpecSchema, 'input');
  spec.description =
    "What the cluster's worker stack should be; the same fields as clusters/<name>.yaml (docs/reference.md).";
  const status = structuralSchema(KubeStatusSchema, 'output');
  status.description = 'Written by the reconciler only, through the status subresource.';
  // Every status field is optional to the API server: a status is cleared by writing {}.
  delete status.required;
  // One condition per type: a map keyed by type, as the Kubernetes API conventions have it.
  const conditions = status.properties?.conditions;
  if (!conditions) throw new Error('CRD generator: the status schema has no conditions');
  conditions['x-kubernetes-list-type'] = 'map';
  conditions['x-kubernetes-list-map-keys'] = ['type'];
  return objectSchema(
    "One Kubernetes cluster's worker nodes: a CloudFormation stack per object, kept in step by worker-stacks reconcile.",
    { spec, status },
    CAPS,
    CROSS_FIELD_RULES,
  );
}

/**
 * The openAPIV3Schema of one of our kinds: apiVersion, kind, metadata, and the given `spec` (and `status`), with the
 * list bounds (`caps`, by path) and the CEL rules placed at their nodes.
 */
export function objectSchema(
  description: string,
  parts: { spec: SchemaNode; status?: SchemaNode },
  caps: Readonly<Record<string, SchemaNode>>,
  rules: readonly PlacedValidation[],
): Json {
  const root: SchemaNode = {
    type: 'object',
    description,
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      // The API server validates metadata itself; naming name here lets the root's CEL rule report on it.
      metadata: { type: 'object', properties: { name: { type: 'string' } } },
      ...parts,
    },
  };
  for (const [at, cap] of Object.entries(caps)) Object.assign(nodeAt(root, at), cap);
  for (const { at, ...rule } of rules) {
    const node = nodeAt(root, at);
    node['x-kubernetes-validations'] = withRule((node['x-kubernetes-validations'] ?? []) as Validation[], rule, at);
  }
  return root;
}

/**
 * A node's rules with one more. `x-kubernetes-validations` is a list map keyed by `rule`: server-side apply (Flux,
 * Argo CD, `kubectl apply --server-side`) refuses a CRD with two entries of one rule text ("duplicate entries for
 * key"), so two are refused here, when the CRD is built: checks that come to one rule are written as one, with one
 * message that says each (lib/platform/kube/cel-listener-rules.ts, the listener limits).
 */
export function withRule(list: readonly Validation[], rule: Validation, at: string): Validation[] {
  if (list.some((r) => r.rule === rule.rule))
    throw new Error(`two CEL rules at ${at || 'the root'} have the text ${rule.rule}: write them as one rule`);
  return [...list, rule];
}

/** A namespaced CustomResourceDefinition (apiextensions.k8s.io/v1) of the group, one served and stored version. */
export function customResourceDefinition(props: {
  names: Json;
  printerColumns: readonly Json[];
  schema: Json;
  status: boolean;
}): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${props.names.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/name': 'worker-stacks', 'app.kubernetes.io/part-of': 'worker-stacks' },
    },
    spec: {
      group: GROUP,
      names: { ...props.names, categories: [...CATEGORIES] },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          ...(props.status ? { subresources: { status: {} } } : {}),
          additionalPrinterColumns: props.printerColumns.map((c) => ({ ...c })),
          schema: { openAPIV3Schema: props.schema },
        },
      ],
    },
  };
}

/** The CustomResourceDefinition (apiextensions.k8s.io/v1) of workerclusters.worker-stacks.io. */
export function workerClusterCrd(): Json {
  return customResourceDefinition({
    names: { kind: KIND, listKind: LIST_KIND, plural: PLURAL, singular: SINGULAR, shortNames: [...SHORT_NAMES] },
    printerColumns: PRINTER_COLUMNS,
    schema: workerClusterSchema(),
    status: true,
  });
}
