import { rawPools } from '../pools/raw-pools';
import { partitionOf } from './references';
import { ALARM_ARN, DEFAULT_NODE_READY_TIMEOUT_SECONDS, SIGNAL_BOOT_MARGIN_SECONDS } from '../schema/rollout-schema';
import { arr, Found, int, Loose, obj } from './loose';
import { found, RuleId } from './rule-registry';

/**
 * What AWS refuses (or what could never work) in the combination of rollout fields, as one pure function over the
 * raw object: it still reports while other fields have type errors, and returns every problem at once with its
 * field path. `worker-stacks validate` and `cdk synth` both run it (through crossFieldProblems).
 */

/** Seconds of an ISO 8601 PauseTime (PT#H#M#S); undefined when it is not one. */
export function isoSeconds(v: unknown): number | undefined {
  const m = typeof v === 'string' ? /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(v) : null;
  if (!m || v === 'PT') return undefined;
  return Number(m.at(1) ?? 0) * 3600 + Number(m.at(2) ?? 0) * 60 + Number(m.at(3) ?? 0);
}

/** `PT9M`, `PT10M30S`: the shortest ISO 8601 duration of a number of seconds. */
export function isoDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `PT${h ? `${h}H` : ''}${m ? `${m}M` : ''}${s || (!h && !m) ? `${s}S` : ''}`;
}

/** Rollback triggers per change set (CloudFormation's RollbackConfiguration limit). */
export const MAX_ROLLBACK_ALARMS = 5;
/** Alarms in an instance refresh's AlarmSpecification. */
export const MAX_REFRESH_ALARMS = 10;

export function rolloutProblems(spec: Loose): Found[] {
  const clusterTimeout = int(obj(obj(spec.cloudConfig).values).nodeReadyTimeoutSeconds);
  const out: Found[] = [];
  for (const { pool, at } of rawPools(spec)) {
    // A pool's own nodeReadyTimeoutSeconds (its cloud-config values over the cluster's) is what its nodes wait.
    const own = int(obj(obj(pool.cloudConfig).values).nodeReadyTimeoutSeconds);
    const timeout =
      own !== undefined
        ? { seconds: own, from: `${at}.cloudConfig.values.nodeReadyTimeoutSeconds` }
        : {
            seconds: clusterTimeout ?? DEFAULT_NODE_READY_TIMEOUT_SECONDS,
            from: 'spec.cloudConfig.values.nodeReadyTimeoutSeconds',
          };
    out.push(...poolRolloutProblems(pool, at, timeout));
  }
  out.push(...rollbackAlarmProblems(spec));
  return out;
}

/**
 * The rollout rules of one pool (`spec.pool` or `spec.pools[i]`, written at `base`); `timeout` is the node ready timeout
 * its nodes wait and the field it comes from.
 */
function poolRolloutProblems(
  pool: Loose,
  base: string,
  timeout: { readonly seconds: number; readonly from: string },
): Found[] {
  const out: Found[] = [];
  const ru = obj(pool.rollingUpdate);
  const at = (field: string) => `${base}.rollingUpdate.${field}`;
  const refresh = ru.strategy === 'instanceRefresh';

  if (!refresh && ru.instanceRefresh !== undefined) {
    out.push(
      found(
        'rollout-strategy-fields',
        at('instanceRefresh'),
        `applies only with strategy: instanceRefresh (set ${base}.rollingUpdate.strategy: instanceRefresh, or remove the block)`,
      ),
    );
  }
  if (refresh) {
    for (const field of ['maxBatchSize', 'minInstancesInService']) {
      if (ru[field] !== undefined)
        out.push(
          found(
            'rollout-strategy-fields',
            at(field),
            `applies only with strategy: rolling; an instance refresh sizes its batches from instanceRefresh.minHealthyPercentage and maxHealthyPercentage`,
          ),
        );
    }
    if (ru.waitOnResourceSignals === true) {
      out.push(
        found(
          'rollout-strategy-fields',
          at('waitOnResourceSignals'),
          "an instance refresh does not wait on resource signals (only the group's creation does); gate it with instanceRefresh.alarms and bakeTimeSeconds, or use strategy: rolling",
        ),
      );
    }
    if (pool.legacyLaunchConfiguration === true) {
      out.push(
        found(
          'instance-refresh-launch-template',
          at('strategy'),
          `instanceRefresh needs a launch template: a launch configuration change does not start an instance refresh (remove ${base}.legacyLaunchConfiguration)`,
        ),
      );
    }
    out.push(...instanceRefreshProblems(obj(ru.instanceRefresh), (f) => at(`instanceRefresh.${f}`)));
  }

  // Signals gate the group's creation (both strategies) and each batch of a rolling update, unless switched off.
  const signals = refresh || ru.waitOnResourceSignals !== false;
  const pauseTime = ru.pauseTime ?? 'PT10M';
  const pause = isoSeconds(pauseTime);
  const needed = timeout.seconds + SIGNAL_BOOT_MARGIN_SECONDS;
  // isoSeconds reads only a string, so a pause means pauseTime is one; the typeof says so to the compiler.
  if (signals && typeof pauseTime === 'string' && pause !== undefined && pause < needed) {
    out.push(
      found(
        'pause-time-covers-boot',
        at('pauseTime'),
        `${pauseTime} is shorter than the node ready timeout (${timeout.from}: ${timeout.seconds} s) plus ${SIGNAL_BOOT_MARGIN_SECONDS} s of boot: CloudFormation would count a slow node as failed before it reports; set pauseTime to at least ${isoDuration(needed)} or lower the timeout`,
      ),
    );
  }
  return out;
}

function instanceRefreshProblems(ir: Loose, at: (field: string) => string): Found[] {
  const out: Found[] = [];
  const min = int(ir.minHealthyPercentage) ?? 100;
  const max = int(ir.maxHealthyPercentage) ?? 110;
  if (max - min > 100)
    out.push(
      found(
        'healthy-percentage',
        at('maxHealthyPercentage'),
        `${max} is more than 100 above minHealthyPercentage ${min} (AWS refuses a range over 100)`,
      ),
    );
  if (min === 100 && max === 100)
    out.push(
      found(
        'healthy-percentage',
        at('maxHealthyPercentage'),
        'with minHealthyPercentage 100, maxHealthyPercentage must be above 100, or no node could ever be replaced',
      ),
    );
  const checkpoints = arr(ir.checkpoints).map(int);
  checkpoints.forEach((c, i) => {
    if (c === undefined || i === 0) return;
    const prev = checkpoints[i - 1];
    if (prev !== undefined && c <= prev)
      out.push(
        found(
          'refresh-checkpoints',
          `${at('checkpoints')}[${i}]`,
          `${c} does not follow ${prev}: checkpoints are unique and ascending`,
        ),
      );
  });
  const last = checkpoints.at(-1);
  if (last !== undefined && last !== 100)
    out.push(
      found(
        'refresh-checkpoints',
        `${at('checkpoints')}[${checkpoints.length - 1}]`,
        `${last}: the last checkpoint must be 100, or the refresh would stop before every node is replaced`,
      ),
    );
  if (ir.checkpointDelaySeconds !== undefined && checkpoints.length === 0)
    out.push(
      found(
        'refresh-checkpoints',
        at('checkpointDelaySeconds'),
        'applies only with checkpoints (add instanceRefresh.checkpoints, ending with 100)',
      ),
    );
  const alarms = arr(ir.alarms);
  if (alarms.length > MAX_REFRESH_ALARMS)
    out.push(
      found(
        'refresh-alarms',
        at('alarms'),
        `${alarms.length} alarms exceed the AWS limit of ${MAX_REFRESH_ALARMS} per instance refresh`,
      ),
    );
  out.push(...duplicates('refresh-alarms', alarms, (i) => `${at('alarms')}[${i}]`, 'alarm names'));
  return out;
}

function rollbackAlarmProblems(spec: Loose): Found[] {
  const out: Found[] = [];
  const alarms = arr(obj(spec.rollout).rollbackAlarms);
  const at = (i?: number) => `spec.rollout.rollbackAlarms${i === undefined ? '' : `[${i}]`}`;
  if (alarms.length > MAX_ROLLBACK_ALARMS)
    out.push(
      found(
        'rollback-alarms',
        at(),
        `${alarms.length} alarms exceed CloudFormation's limit of ${MAX_ROLLBACK_ALARMS} rollback triggers per stack`,
      ),
    );
  alarms.forEach((a, i) => {
    const m = typeof a === 'string' ? ALARM_ARN.exec(a) : null;
    if (!m) return; // the field rule names it
    if (typeof spec.region === 'string' && m[1] !== spec.region)
      out.push(
        found(
          'reference-in-cluster',
          at(i),
          `alarm is in region ${m[1]}, not the cluster's ${spec.region} (CloudFormation reads rollback alarms in the stack's region)`,
        ),
      );
    if (typeof spec.account === 'string' && m[2] !== spec.account)
      out.push(found('reference-in-cluster', at(i), `alarm is in account ${m[2]}, not the cluster's ${spec.account}`));
    const partition = /^arn:([a-z-]+):/.exec(a as string)?.[1];
    if (typeof spec.region === 'string' && partition !== partitionOf(spec.region))
      out.push(
        found(
          'reference-in-cluster',
          at(i),
          `alarm is in partition ${partition}, but region ${spec.region} is in ${partitionOf(spec.region)}`,
        ),
      );
  });
  out.push(...duplicates('rollback-alarms', alarms, at, 'rollback alarms'));
  return out;
}

function duplicates(rule: RuleId, items: unknown[], at: (i: number) => string, what: string): Found[] {
  const first = new Map<unknown, number>();
  const out: Found[] = [];
  items.forEach((v, i) => {
    const j = first.get(v);
    if (j === undefined) first.set(v, i);
    else out.push(found(rule, at(i), `duplicates ${at(j)} (${what} must be unique)`));
  });
  return out;
}
