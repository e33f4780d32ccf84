import { z } from 'zod';
import { API_VERSION } from '../cluster/schema/schema';
import { awsId, dnsLabel, pattern } from '../cluster/schema/rules';
import { ruleIssue } from '../cluster/rules/rule-registry';
import { LabelSelectorSchema } from '../cluster/schema/selector';

/**
 * The WorkerImageChannel object: a stream of machine images that pools name instead of an AMI id (`imageChannel`).
 * The daemon reads the channel's source (an SSM parameter, or a list in the object), records each new release in the
 * channel's status, and pins a literal AMI id into each pool it governs before synthesis: CloudFormation never
 * resolves an image (no SSM-typed parameters, no `{{resolve:ssm}}`, which it re-resolves on every update). The zod
 * schema is the source of truth, as for WorkerCluster.
 */

export const CHANNEL_KIND = 'WorkerImageChannel';
const d = (text: string) => ({ description: text });

/** An SSM parameter path: AWS's public ones (`/aws/service/...`) or an organisation's own. */
/**
 * At most 1,011 characters: written as 1-1,000 then 0-10 more, because RE2 (the API server runs the CRD's copy of this
 * pattern with it) refuses a repeat count above 1,000.
 */
export const SSM_PARAMETER = /^\/[a-zA-Z0-9_.\-/]{1,1000}[a-zA-Z0-9_.\-/]{0,10}$/;
const REGION = /^[a-z]{2}(-[a-z]+)+-[0-9]$/;
/** A release's name: an AMI name (the SSM source) or what the list says; it is shown in status and messages. */
const RELEASE = /^[a-zA-Z0-9][a-zA-Z0-9._\-()/[\] ]{0,127}$/;
/** An image owner EC2 reports: an account id, or the alias `amazon` of AWS's own images. */
const OWNER = /^([0-9]{12}|amazon|aws-marketplace)$/;

export const ARCHITECTURES = ['x86_64', 'arm64'] as const;

const releaseName = pattern(RELEASE, 'a release name (letters, digits and ._-()/[] and space, at most 128)', 128);

export const ListedReleaseSchema = z
  .strictObject({
    release: releaseName.meta(d('The release, as status and messages show it (for example 2026.11.20).')),
    imageIds: z
      .record(pattern(REGION, 'an AWS region such as eu-central-1', 32), awsId('ami', 'an AMI'))
      .refine((m) => Object.keys(m).length > 0, { message: 'at least one region' })
      .meta(d('The release image by region.')),
  })
  .meta(d('One release of a list channel.'));

export const ChannelSourceSchema = z
  .strictObject({
    ssmParameter: pattern(SSM_PARAMETER, 'an SSM parameter name (a path starting with /)', 1011)
      .optional()
      .meta(
        d(
          'An SSM parameter whose value is an AMI id, read in each region of the clusters that use the channel (for example /aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id). A release is the image its value names; it is named by the image name, the same in every region. @default none',
        ),
      ),
    images: z
      .array(ListedReleaseSchema)
      .min(1)
      .max(64)
      .optional()
      .meta(d('The releases, oldest first: the last is the newest. @default none')),
  })
  .superRefine((s, ctx) => {
    if ((s.ssmParameter === undefined) === (s.images === undefined))
      ctx.addIssue(ruleIssue('channel-source', 'set exactly one of ssmParameter and images'));
  })
  .meta(d('Where the images come from: exactly one of ssmParameter and images.'));

export const ChannelHoldSchema = z
  .strictObject({
    release: releaseName.meta(
      d(
        'The newest release the selected clusters run: this one, or the newest recorded before it that is neither skipped nor halted.',
      ),
    ),
    clusters: z
      .array(dnsLabel)
      .min(1)
      .max(256)
      .optional()
      .meta(d('The clusters held, by name (metadata.name). @default none: give clusters or selector')),
    selector: LabelSelectorSchema.optional().meta(
      d("The clusters held, by label (a wave: its policy's wave selector). @default none: give clusters or selector"),
    ),
  })
  .superRefine((h, ctx) => {
    if ((h.clusters === undefined) === (h.selector === undefined))
      ctx.addIssue(ruleIssue('channel-holds', 'give exactly one of clusters and selector'));
  })
  .meta(d('Clusters held at a release while the rest of the channel moves on.'));

export const ChannelSpecSchema = z
  .strictObject({
    source: ChannelSourceSchema,
    architecture: z
      .enum(ARCHITECTURES)
      .meta(d('The architecture of every image of the channel; an image of another is refused, not pinned.')),
    owners: z
      .array(pattern(OWNER, 'an image owner (a 12-digit account id, amazon or aws-marketplace)', 16))
      .min(1)
      .max(16)
      .default(['amazon'])
      .meta(
        d('The image owners the channel trusts; an image of another owner is refused, not pinned. @default [amazon]'),
      ),
    skipReleases: z
      .array(releaseName)
      .max(64)
      .default([])
      .meta(d('Releases never pinned (the one before is kept or taken instead). @default none')),
    promotedRelease: releaseName
      .optional()
      .meta(
        d(
          'Promote by hand: the newest release any cluster of the channel runs (this one, or the newest recorded before it that is neither skipped nor halted). A release recorded after it is not pinned until this names it. @default none: each release is promoted as soon as it is recorded',
        ),
      ),
    holds: z
      .array(ChannelHoldSchema)
      .max(32)
      .default([])
      .meta(
        d(
          'Clusters held at a release, by name or by label selector (a wave), whatever the channel is promoted to; the first hold that selects a cluster applies. @default none',
        ),
      ),
  })
  .meta(d('An image channel.'));

export const WorkerImageChannelSchema = z
  .strictObject({
    apiVersion: z.literal(API_VERSION),
    kind: z.literal(CHANNEL_KIND),
    metadata: z.looseObject({ name: dnsLabel }),
    spec: ChannelSpecSchema,
  })
  .meta(d('WorkerImageChannel: a stream of machine images that pools name (imageChannel).'));

export type ChannelSpec = z.output<typeof ChannelSpecSchema>;
