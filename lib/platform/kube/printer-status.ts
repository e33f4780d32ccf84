import { z } from 'zod';
import { ClusterStatus, ClusterStatusSchema, parseStatus } from '../../model/cluster/schema/status';

/**
 * The status as the custom resource carries it: the reconciler's status plus two short checksum prefixes and the
 * pending replacements of every stack in one line, for the printer columns of `kubectl get wc` (a printer column can
 * neither cut a string nor join a list, and 64 hex digits are too wide). They are derived on every status write and
 * dropped on read, so the reconciler never sees them and the file store never stores them.
 */

/** Hex digits of a checksum shown by `kubectl get wc` and `worker-stacks status` alike. @internal exported for its tests */
export const SHORT_CHECKSUM_LENGTH = 12;

const d = (text: string) => ({ description: text });

export const KubeStatusSchema = ClusterStatusSchema.extend({
  desiredChecksumShort: z
    .string()
    .optional()
    .meta(d(`First ${SHORT_CHECKSUM_LENGTH} hex digits of desiredChecksum (for kubectl get).`)),
  cloudConfigChecksumShort: z
    .string()
    .optional()
    .meta(d(`First ${SHORT_CHECKSUM_LENGTH} hex digits of cloudConfigChecksum, the live one (for kubectl get).`)),
  pendingRolls: z
    .string()
    .optional()
    .meta(
      d(
        'The replacements of nodes pending, with their cause, of every stack of the cluster (for kubectl get): "image; spot: config".',
      ),
    ),
});

export type KubeStatus = z.output<typeof KubeStatusSchema>;

/** The status to write to the status subresource. */
export function toKubeStatus(status: ClusterStatus): KubeStatus {
  const { desiredChecksumShort: _d, cloudConfigChecksumShort: _c, pendingRolls: _p, ...rest } = status as KubeStatus;
  const pending = pendingRolls(status);
  return {
    ...rest,
    ...(pending ? { pendingRolls: pending } : {}),
    ...(status.desiredChecksum ? { desiredChecksumShort: status.desiredChecksum.slice(0, SHORT_CHECKSUM_LENGTH) } : {}),
    ...(status.cloudConfigChecksum
      ? { cloudConfigChecksumShort: status.cloudConfigChecksum.slice(0, SHORT_CHECKSUM_LENGTH) }
      : {}),
  };
}

/** The reconciler's status from the custom resource's (the short prefixes dropped), or the field that is wrong. */
export function fromKubeStatus(raw: unknown): ReturnType<typeof parseStatus> {
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    const {
      desiredChecksumShort: _d,
      cloudConfigChecksumShort: _c,
      pendingRolls: _p,
      ...rest
    } = raw as Record<string, unknown>;
    return parseStatus(rest);
  }
  return parseStatus(raw ?? { conditions: [] });
}

/** The shared stack's pending replacement, then each pool's by name: "image; spot: image, config". */
function pendingRolls(status: ClusterStatus): string | undefined {
  const all = [
    ...(status.pendingRoll ? [status.pendingRoll] : []),
    ...(status.pools ?? []).flatMap((p) => (p.pendingRoll ? [`${p.name}: ${p.pendingRoll}`] : [])),
  ];
  return all.length ? all.join('; ') : undefined;
}
