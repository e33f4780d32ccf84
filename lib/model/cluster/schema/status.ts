import { z } from 'zod';
import { Condition, ConditionSchema, ConditionType } from './conditions';

// Read by many (the reconciler among them) from here, beside the status they are part of.
export { CONDITION_TYPES, setConditions } from './conditions';
export type { Condition, ConditionInput, ConditionType } from './conditions';

/**
 * The status of a cluster object, written only by the reconciler. It follows
 * the Kubernetes API conventions: conditions with CamelCase reasons,
 * lastTransitionTime that moves only when a condition's status changes, and
 * observedGeneration. Like the spec, it is a zod schema, so a CRD's status
 * schema can be generated from it.
 *
 * Two parts: what users read (checksums, conditions, the stack, the last
 * change), and `controller`, the reconciler's own bookkeeping (fingerprints,
 * attempts, backoff), which nobody needs to read to know where a cluster is.
 */

const d = (text: string) => ({ description: text });

/** A roll key (lib/engines/stacks/roll-key.ts): its digest and a digest per property, so a change can name its cause. */
const RollKeySchema = z.strictObject({
  key: z.string(),
  parts: z.record(z.string(), z.string()),
});

export const ControllerBookkeepingSchema = z
  .strictObject({
    inputsFingerprint: z
      .string()
      .optional()
      .meta(d('Fingerprint of the inputs (code, spec, config) last applied successfully.')),
    appliedInputsKey: z
      .string()
      .optional()
      .meta(
        d(
          'Key of the object bytes, templates and code last applied: while it matches and the stack is settled, a pass skips everything.',
        ),
      ),
    failures: z.number().int().min(0).optional().meta(d('Consecutive failed attempts of failedFingerprint.')),
    failedFingerprint: z
      .string()
      .optional()
      .meta(d('Fingerprint of the inputs the failures were for (new inputs are tried at once).')),
    retryAfter: z.string().optional().meta(d('Do not retry the same inputs before this time (ISO 8601).')),
    recoveryAttempts: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta(d('ContinueUpdateRollback / delete-and-recreate attempts for the current failure.')),
    executing: z
      .strictObject({
        fingerprint: z.string(),
        changeSet: z.string(),
        checksum: z.string(),
        startedAt: z.string(),
        rollKey: z
          .string()
          .optional()
          .meta(d('The roll key the change set applies: it replaces nodes when it differs from the live one.')),
        rolls: z
          .boolean()
          .optional()
          .meta(
            d(
              'Whether the change set replaces nodes, as judged before it was executed (also when the live roll key could not be read).',
            ),
          ),
      })
      .optional()
      .meta(d('The change set this reconciler executed and has not seen end yet.')),
    configDigests: z
      .record(z.string(), z.string())
      .optional()
      .meta(d('Short digest per file and unit of the live config, so a roll can say what changed.')),
    retryHandled: z.string().optional().meta(d('The last operator retry request acted on.')),
    appliedBy: z
      .strictObject({ version: z.string(), code: z.string() })
      .optional()
      .meta(
        d(
          'The release and template-code hash of the daemon that last executed a change set: an older daemon leaves the cluster alone.',
        ),
      ),
    rollKeys: z
      .strictObject({
        inputs: z
          .string()
          .meta(d('The inputs fingerprint the desired roll key was read for (its synthesized template).')),
        desired: RollKeySchema.optional(),
        stack: z.string().meta(d('The live stack (id@lastUpdated) the live roll key was read from (its template).')),
        live: RollKeySchema.optional(),
        release: z
          .string()
          .optional()
          .meta(d('The release that makes this change, when the object does not ("0.1.0 → 0.2.0").')),
        code: z
          .string()
          .optional()
          .meta(
            d(
              'The code fingerprint that read these keys: until a daemon of other code has read them anew, its rollout gate counts them as a replacement pending.',
            ),
          ),
      })
      .optional()
      .meta(
        d(
          'The roll keys as last read, with what they were read from: a held cluster is not synthesized again on every look.',
        ),
      ),
    cleanedFor: z
      .string()
      .optional()
      .meta(
        d(
          'The live checksum the old config objects were last cleaned up for (clean-config-objects runs once per settled config).',
        ),
      ),
  })
  .meta(d("The reconciler's bookkeeping; not needed to read where a cluster is."));

/** Where a cluster (or one pool's stack) is in a fleet rollout. */
const RolloutStatusSchema = z
  .strictObject({
    policy: z.string().optional().meta(d('The WorkerRolloutPolicy that governs this cluster.')),
    wave: z.string().optional().meta(d('Its wave in that policy.')),
    stagedChecksum: z
      .string()
      .optional()
      .meta(
        d('A held config already published to S3 (staged), so a held cluster is not published again on every look.'),
      ),
    heldSince: z
      .string()
      .optional()
      .meta(d('When its current roll was first held (ISO 8601): the start of its time in the wave.')),
    appliedNodeKey: z
      .string()
      .optional()
      .meta(d('No longer written (the roll key replaced it); kept so that a status of an older release still reads.')),
  })
  .optional()
  .meta(d('Where the cluster is in a fleet rollout (lib/engines/rollout).'));

/** What a stack's roll keys say (lib/engines/stacks/roll-key.ts): the same fields at the top level and in each pool's entry. */
const ROLL_FIELDS = {
  rollKey: z
    .string()
    .optional()
    .meta(
      d("Digest of what replaces the nodes (launch template data, the group's rolling properties) on the live stack."),
    ),
  desiredRollKey: z
    .string()
    .optional()
    .meta(
      d(
        'The same digest of the template the object (and this release) asks for: a replacement is pending while they differ.',
      ),
    ),
  pendingRoll: z
    .string()
    .optional()
    .meta(
      d(
        'What a pending replacement of the nodes is for: config, image, instance types, root volume, subnets, capacity, release.',
      ),
    ),
};

/**
 * The status of one pool that has its own stack (WorkerStack-<cluster>-Pool-<pool>): what the top level says of the
 * shared stack, said of this pool's stack. The reconciler reconciles each stack on its own (its checksum, inputs,
 * failures, backoff and executing change set are its own).
 */
export const PoolStatusSchema = z.strictObject({
  name: z.string().meta(d('The pool (spec.pools[].name).')),
  stackName: z.string().meta(d("The pool's own stack.")),
  cloudConfigChecksum: z
    .string()
    .optional()
    .meta(d("SHA-256 of the pool's node config live on its stack, as the stack itself reports it.")),
  desiredChecksum: z.string().optional().meta(d("SHA-256 of the pool's node config the object asks for.")),
  ...ROLL_FIELDS,
  observedGeneration: z.number().int().min(0).optional(),
  stackId: z.string().optional(),
  stackStatus: z.string().optional().meta(d('Last status seen of the pool stack.')),
  stackLastUpdated: z.string().optional(),
  lastConfigChange: z.string().optional(),
  lastConfigChangeTime: z.string().optional(),
  paused: z.boolean().optional(),
  rollout: RolloutStatusSchema,
  conditions: z.array(ConditionSchema),
  controller: ControllerBookkeepingSchema.optional(),
});

export type PoolStatus = z.output<typeof PoolStatusSchema>;

export const ClusterStatusSchema = z.strictObject({
  cloudConfigChecksum: z
    .string()
    .optional()
    .meta(d('SHA-256 of the node config live on the stack, as the stack itself reports it.')),
  desiredChecksum: z
    .string()
    .optional()
    .meta(d('SHA-256 of the node config the object asks for, at observedGeneration.')),
  ...ROLL_FIELDS,
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta(d('Generation of the spec this status was computed for.')),
  stackName: z.string().optional(),
  stackId: z.string().optional(),
  stackStatus: z.string().optional().meta(d('Last stack status seen.')),
  stackLastUpdated: z
    .string()
    .optional()
    .meta(d("The stack's LastUpdatedTime when it was last seen settled on these inputs.")),
  lastConfigChange: z
    .string()
    .optional()
    .meta(d('What changed in the config of the roll in progress or last applied.')),
  lastConfigChangeTime: z.string().optional().meta(d('When that roll started (ISO 8601).')),
  paused: z.boolean().optional().meta(d('spec.paused was seen: no AWS writes.')),
  rollout: RolloutStatusSchema,
  conditions: z.array(ConditionSchema),
  controller: ControllerBookkeepingSchema.optional(),
  pools: z
    .array(PoolStatusSchema)
    .optional()
    .meta(
      d(
        'One entry per pool outside the shared stack WorkerStack-<cluster> (spec.pools other than `default`): its own stack, checksums and conditions. The fields above describe the shared stack.',
      ),
    ),
  poolsReady: z
    .string()
    .regex(/^\d+\/\d+$/)
    .optional()
    .meta(d('Stacks of the cluster that are Ready, of all its stacks (shared and pools), as "n/m" (kubectl get).')),
});

export type ClusterStatus = z.output<typeof ClusterStatusSchema>;
export type ControllerBookkeeping = NonNullable<ClusterStatus['controller']>;

export const EMPTY_STATUS: ClusterStatus = { conditions: [] };

/** A status file or subresource that does not match the schema: the message names the field. */
export function parseStatus(raw: unknown): { status: ClusterStatus } | { problem: string } {
  const r = ClusterStatusSchema.safeParse(raw);
  if (r.success) return { status: r.data };
  const first = r.error.issues[0];
  return { problem: `status.${first.path.join('.')}: ${first.message}` };
}

export function getCondition(status: ClusterStatus | undefined, type: ConditionType): Condition | undefined {
  return status?.conditions.find((c) => c.type === type);
}
