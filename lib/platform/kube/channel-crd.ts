import { CHANNEL_KIND, ChannelSpecSchema } from '../../model/channel/channel-schema';
import { named, PlacedValidation, v } from './cel-build';
import { customResourceDefinition, objectSchema } from './crd';
import { Json, structuralSchema } from './structural';
import { POLICY_RULES } from './policy-crd';

/**
 * The WorkerImageChannel CustomResourceDefinition, generated from the zod schema the file store validates channel
 * files with (lib/model/channel/channel-schema.ts), with a status subresource: the daemon records what it read of the
 * channel's source there (its releases, halts and problems: lib/model/channel/channel-status.ts), as it writes
 * `<clusters>/image-channels/.status/<name>.json` in the file store. Namespaced: a pool names a channel of its own
 * namespace.
 */

export const CHANNEL_PLURAL = 'workerimagechannels';
const CHANNEL_SINGULAR = 'workerimagechannel';
const CHANNEL_LIST_KIND = `${CHANNEL_KIND}List`;
const CHANNEL_SHORT_NAMES = ['wic'] as const;
/** @internal The tests install, wait for and delete the CRD by this name. */
export const CHANNEL_CRD_NAME = `${CHANNEL_PLURAL}.worker-stacks.io`;

/** Columns of `kubectl get wic`: where its images come from, their architecture, and a promotion by hand. */
const CHANNEL_PRINTER_COLUMNS = [
  { name: 'Architecture', type: 'string', jsonPath: '.spec.architecture', description: 'spec.architecture.' },
  {
    name: 'Parameter',
    type: 'string',
    jsonPath: '.spec.source.ssmParameter',
    description: 'spec.source.ssmParameter (empty: a list of images).',
  },
  {
    name: 'Promoted',
    type: 'string',
    jsonPath: '.spec.promotedRelease',
    description: 'spec.promotedRelease: the newest release pinned (empty: each as it is recorded).',
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
] as const;

/** Map sizes zod does not bound. */
const CHANNEL_CAPS: Readonly<Record<string, { maxProperties: number; minProperties?: number }>> = {
  'spec.source.images[].imageIds': { maxProperties: 64, minProperties: 1 },
  'spec.holds[].selector.matchLabels': { maxProperties: 64 },
};

/** The cross-field rules of channel-schema.ts, with its messages. */
const CHANNEL_RULES: readonly PlacedValidation[] = [
  // The name is a DNS label of at most 40 characters, as for the other kinds (the policy's rule, the same text).
  POLICY_RULES[0],
  named(
    'channel-source',
    v('spec.source', 'has(self.ssmParameter) != has(self.images)', {
      text: 'set exactly one of ssmParameter and images',
    }),
  ),
  named(
    'channel-holds',
    v('spec.holds[]', 'has(self.clusters) != has(self.selector)', {
      text: 'give exactly one of clusters and selector',
    }),
  ),
];

/** The openAPIV3Schema of the WorkerImageChannel object: its spec, and a status only the daemon writes. */
function imageChannelSchema(): Json {
  const spec = structuralSchema(ChannelSpecSchema, 'input');
  spec.description =
    'Where the images of the pools that name this channel come from; the same fields as <clusters>/image-channels/<name>.yaml (docs/image-channels.md).';
  return objectSchema(
    'An image channel: a stream of machine images that pools name (imageChannel) instead of an AMI id.',
    {
      spec,
      status: {
        type: 'object',
        description:
          "What the daemon has read of the source: its releases (image per region, first seen, halted), the last read's problems. Written by the daemon only.",
        'x-kubernetes-preserve-unknown-fields': true,
      },
    },
    CHANNEL_CAPS,
    CHANNEL_RULES,
  );
}

/** The CustomResourceDefinition (apiextensions.k8s.io/v1) of workerimagechannels.worker-stacks.io. */
export function imageChannelCrd(): Json {
  return customResourceDefinition({
    names: {
      kind: CHANNEL_KIND,
      listKind: CHANNEL_LIST_KIND,
      plural: CHANNEL_PLURAL,
      singular: CHANNEL_SINGULAR,
      shortNames: [...CHANNEL_SHORT_NAMES],
    },
    printerColumns: CHANNEL_PRINTER_COLUMNS,
    schema: imageChannelSchema(),
    status: true,
  });
}
