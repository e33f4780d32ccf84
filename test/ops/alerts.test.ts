import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse, stringify } from 'yaml';
import { KubeClient } from '../../lib/platform/kube/client';
import { registerKubeMetrics } from '../../lib/platform/kube/kube-health';
import { ReconcilerMetrics } from '../../lib/engines/reconciler/runtime/metrics';
import { KubeApiServer, startKubeApiServer } from '../helpers/kube-apiserver';
import { freePort } from '../helpers/moto';
import { CHART, goTool, Json, run, runOk } from '../charts/tools';
import { createUnrenderable, getOrUndefined, PodProcess, runDeploymentAsPod } from './daemon-as-pod';

// The chart's daemon, run the only way it can run here (no kubelet: the Deployment's pods never start): helm installs
// the chart into a real API server, and this test starts `worker-stacks` with the container's arguments and env as
// the installed Deployment has them, authenticated as the chart's ServiceAccount (./daemon-as-pod.ts), so the
// chart's RBAC, admission policies and flags are what the process lives with. It takes its Lease, stalls an object
// it cannot render (InvalidSpec, no AWS call) and serves /metrics. That scrape is the input of the alert tests:
// every series a `promtool test rules` case feeds the alerts is a series of the scrape (its name, and its label names;
// only label values are chosen by the case), so a renamed metric or label breaks the test.

const RULES = path.join(CHART, 'files', 'prometheus-rules.yaml');
const DAEMON_NS = 'worker-stacks';
const POD = 'worker-stacks-7d9f8-abcde';
const TARGET = { namespace: DAEMON_NS, pod: POD, job: 'worker-stacks-metrics', instance: '10.0.0.7:8080' };
let api: KubeApiServer | undefined;
let admin: KubeClient | undefined;
let daemon: PodProcess | undefined;
let scrape = '';
let scratch: string;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-alerts-'));
  const server = await startKubeApiServer();
  api = server;
  const client = KubeClient.fromOptions({ kubeconfig: server.kubeconfig });
  admin = client;
  const port = await freePort();
  // GIVEN the chart installed by helm, its ops endpoints on loopback (the only change to its defaults)
  runOk(goTool('helm'), [
    'install',
    'worker-stacks',
    CHART,
    '--kubeconfig',
    server.kubeconfig,
    '--namespace',
    'default',
    '--set',
    `reconciler.port=${port}`,
    '--set',
    'reconciler.bind=127.0.0.1',
  ]);
  // AND an object the daemon cannot render (its template does not exist): Stalled, InvalidSpec, nothing touches AWS
  await client.request('POST', '/api/v1/namespaces', { metadata: { name: 'team-a' } });
  await createUnrenderable(client, 'team-a', 'no-template');
  // WHEN the Deployment's container runs, as its pod would
  daemon = await runDeploymentAsPod(server, client, DAEMON_NS, 'worker-stacks', POD, scratch);
  const metricsUrl = `http://127.0.0.1:${port}/metrics`;
  scrape = await daemon.eventually('/metrics with the Stalled object and the leader', 120_000, async () => {
    const text = await fetch(metricsUrl).then(
      (r) => r.text(),
      () => '',
    );
    return /^worker_stacks_cluster_condition\{cluster="no-template",condition="Stalled",status="True"\} 1$/m.test(
      text,
    ) && /^worker_stacks_leader 1$/m.test(text)
      ? text
      : undefined;
  });
}, 300_000);

afterAll(async () => {
  await daemon?.kill();
  admin?.close();
  await api?.stop();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

test("the daemon, run with the installed Deployment's arguments as its ServiceAccount, leads, stalls the bad object, and stops cleanly on SIGTERM", async () => {
  // THEN it holds the Lease the chart's Role names, as this pod
  const lease = await daemon!.eventually('the Lease', 30_000, () =>
    getOrUndefined(admin!, `/apis/coordination.k8s.io/v1/namespaces/${DAEMON_NS}/leases/worker-stacks`),
  );
  expect(lease.spec.holderIdentity).toMatch(new RegExp(`^${POD}_\\d+$`));
  // AND it wrote the object's status through the status subresource: Stalled, InvalidSpec, naming the template
  const obj = await daemon!.eventually('the Stalled status', 30_000, async () => {
    const o = await getOrUndefined(
      admin!,
      '/apis/worker-stacks.io/v1alpha1/namespaces/team-a/workerclusters/no-template',
    );
    return o?.status?.conditions?.some((c: Json) => c.type === 'Stalled' && c.status === 'True') ? o : undefined;
  });
  expect(obj.status.conditions.find((c: Json) => c.type === 'Stalled')).toMatchObject({
    reason: 'InvalidSpec',
    observedGeneration: obj.metadata.generation,
  });
  expect(obj.status.conditions.find((c: Json) => c.type === 'Stalled').message).toContain('no-such-template');
  // AND it counted the reconcile
  expect(scrape).toMatch(/^worker_stacks_reconciles_total\{result="invalid",account="\d{12}"\} \d+$/m);
  // WHEN it is told to stop, as the kubelet would; THEN it exits 0
  expect(await daemon!.terminate()).toBe(0);
}, 120_000);

// --- the alerts, on series of that scrape ---------------------------------------------------------------------

/** One family of the scrape: its type, and the label sets of its samples. */
function family(name: string): { type: string; samples: Record<string, string>[] } {
  const type = scrape.match(new RegExp(`^# TYPE ${name} (\\w+)$`, 'm'))?.[1];
  if (!type) throw new Error(`the daemon's /metrics has no metric ${name} (renamed or removed?)`);
  const samples = [...scrape.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? \\S+$`, 'gm'))].map((m) =>
    Object.fromEntries([...((m[1] as string | undefined) ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]])),
  );
  return { type, samples };
}

/** The label names of a metric the scrape declares but has no sample of (prom-client prints HELP and TYPE for it). */
function declaredLabelNames(name: string): string[] {
  // The registry `reconcile` builds: ReconcilerMetrics plus the Kubernetes store's health (lib/adapters/cli/reconcile.ts).
  const { registry } = new ReconcilerMetrics({ processMetrics: false });
  registerKubeMetrics(registry);
  const metric = registry.getSingleMetric(name) as unknown as { labelNames?: string[] } | undefined;
  if (!metric) throw new Error(`${name} is in /metrics but not in the daemon's registry`);
  return [...(metric.labelNames ?? [])].sort();
}

/**
 * A series of the scrape, with `values` for its label values (only labels it has), plus the target labels Prometheus
 * adds (namespace, pod, job, instance) unless `target` replaces them.
 */
function series(name: string, values: Record<string, string> = {}, target: Record<string, string> = TARGET): string {
  const f = family(name);
  const names = f.samples.length ? Object.keys(f.samples[0]).sort() : declaredLabelNames(name);
  const unknown = Object.keys(values).filter((k) => !names.includes(k));
  if (unknown.length)
    throw new Error(`${name} has no label ${unknown.join(', ')} (its labels: ${names.join(', ') || 'none'})`);
  const missing = names.filter((k) => !(k in values) && !f.samples.length);
  if (missing.length) throw new Error(`${name}: give a value for ${missing.join(', ')}`);
  const labels = { ...(f.samples[0] ?? {}), ...values, ...target };
  return `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')}}`;
}

interface AlertCase {
  readonly name: string;
  readonly input: { readonly series: string; readonly values: string }[];
  readonly evalTime: string;
  readonly alert: string;
  /** The labels of each alert expected at evalTime (severity comes from the rule); [] for none. */
  readonly expect: Record<string, string>[];
}

const rules: Json[] = parse(fs.readFileSync(RULES, 'utf8')).groups.flatMap((g: Json) => g.rules);
/** The rule's annotations with {{ $labels.x }} filled in, as Prometheus renders them. */
function annotationsFor(alert: string, labels: Record<string, string>): Record<string, string> {
  const rule = rules.find((r) => r.alert === alert)!;
  return Object.fromEntries(
    Object.entries(rule.annotations as Record<string, string>).map(([k, v]) => [
      k,
      v.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_m, l: string) => (l in labels ? labels[l] : '')),
    ]),
  );
}

const stalled = () =>
  series('worker_stacks_cluster_condition', { cluster: 'no-template', condition: 'Stalled', status: 'True' });
const CASES: (() => AlertCase)[] = [
  () => ({
    name: 'a Stalled cluster, seen by the leader',
    input: [
      { series: stalled(), values: '1x20' },
      { series: series('worker_stacks_leader'), values: '1x20' },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksClusterStalled',
    expect: [{ cluster: 'no-template' }],
  }),
  () => ({
    name: "a Stalled cluster in a follower's stale view",
    input: [
      { series: stalled(), values: '1x20' },
      { series: series('worker_stacks_leader'), values: '0x20' },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksClusterStalled',
    expect: [],
  }),
  () => ({
    name: 'a Stalled cluster for less than 5 minutes',
    input: [
      { series: stalled(), values: '1x20' },
      { series: series('worker_stacks_leader'), values: '1x20' },
    ],
    evalTime: '3m',
    alert: 'WorkerStacksClusterStalled',
    expect: [],
  }),
  () => ({
    name: 'a halted wave',
    input: [
      {
        series: series('worker_stacks_rollout_holds_total', {
          policy: 'fleet',
          wave: 'early',
          reason: 'RolloutHalted',
        }),
        values: '0 0 1 2 3 4 5 6 7 8 9 10',
      },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksRolloutHalted',
    expect: [{ policy: 'fleet', wave: 'early' }],
  }),
  () => ({
    name: 'a wave held by its window, not halted',
    input: [
      {
        series: series('worker_stacks_rollout_holds_total', {
          policy: 'fleet',
          wave: 'early',
          reason: 'OutsideMaintenanceWindow',
        }),
        values: '0+1x20',
      },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksRolloutHalted',
    expect: [],
  }),
  () => ({
    name: 'a slot held with no stack in progress',
    input: [
      { series: series('worker_stacks_slots_held'), values: '1x30' },
      { series: series('worker_stacks_stacks_in_progress'), values: '0x30' },
      { series: series('worker_stacks_leader'), values: '1x30' },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksSlotLeaked',
    expect: [{}],
  }),
  () => ({
    name: 'slots held by stacks in progress',
    input: [
      { series: series('worker_stacks_slots_held'), values: '2x30' },
      { series: series('worker_stacks_stacks_in_progress'), values: '2x30' },
      { series: series('worker_stacks_leader'), values: '1x30' },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksSlotLeaked',
    expect: [],
  }),
  () => ({
    name: 'a stack in progress for over 3 hours',
    input: [
      { series: series('worker_stacks_stack_in_progress_seconds', { cluster: 'prod-eu1' }), values: '10800+60x20' },
      { series: series('worker_stacks_leader'), values: '1x20' },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksStackInProgressTooLong',
    expect: [{ cluster: 'prod-eu1' }],
  }),
  () => ({
    name: 'no replica leads',
    input: [
      { series: series('worker_stacks_leader'), values: '0x20' },
      { series: series('worker_stacks_leader', {}, { ...TARGET, pod: 'worker-stacks-7d9f8-fghij' }), values: '0x20' },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksNoLeader',
    expect: [{ namespace: DAEMON_NS }],
  }),
  () => ({
    name: 'one of two replicas leads',
    input: [
      { series: series('worker_stacks_leader'), values: '1x20' },
      { series: series('worker_stacks_leader', {}, { ...TARGET, pod: 'worker-stacks-7d9f8-fghij' }), values: '0x20' },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksNoLeader',
    expect: [],
  }),
  () => ({
    name: 'a shard without a leader while another leads',
    input: [
      { series: series('worker_stacks_leader', {}, { ...TARGET, worker_stacks_io_shard: 'canary' }), values: '0x20' },
      {
        series: series('worker_stacks_leader', {}, { ...TARGET, pod: 'main-1', worker_stacks_io_shard: 'main' }),
        values: '1x20',
      },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksNoLeader',
    expect: [{ namespace: DAEMON_NS, worker_stacks_io_shard: 'canary' }],
  }),
  () => ({
    name: 'no replica exports metrics',
    input: [{ series: series('worker_stacks_stacks_in_progress'), values: '0x20' }],
    evalTime: '15m',
    alert: 'WorkerStacksAbsent',
    expect: [{}],
  }),
  () => ({
    name: 'watch errors that are not 410s',
    input: [
      {
        series: series('worker_stacks_watch_errors_total', { store: 'kubernetes', reason: 'Throttled' }),
        values: '0+1x30',
      },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksWatchErrors',
    expect: [{ store: 'kubernetes', reason: 'Throttled' }],
  }),
  () => ({
    name: "410 Expired is the watch's normal end",
    input: [
      {
        series: series('worker_stacks_watch_errors_total', { store: 'kubernetes', reason: 'Expired' }),
        values: '0+1x30',
      },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksWatchErrors',
    expect: [],
  }),
  () => ({
    name: 'a forbidden watch',
    input: [
      {
        series: series('worker_stacks_watch_errors_total', { store: 'kubernetes', reason: 'Forbidden' }),
        values: '0 1 2 3 4 5',
      },
    ],
    evalTime: '4m',
    alert: 'WorkerStacksWatchForbidden',
    expect: [{ store: 'kubernetes' }],
  }),
  () => ({
    name: 'relisting often',
    input: [{ series: series('worker_stacks_watch_relists_total', { store: 'kubernetes' }), values: '0+1x60' }],
    evalTime: '50m',
    alert: 'WorkerStacksRelistingOften',
    expect: [{ store: 'kubernetes' }],
  }),
  () => ({
    name: 'half the reconciles of an account are throttled',
    input: [
      {
        series: series('worker_stacks_transient_reconciles_total', { reason: 'Throttled', account: '111111111111' }),
        values: '0+2x40',
      },
      {
        series: series('worker_stacks_reconciles_total', { result: 'transient', account: '111111111111' }),
        values: '0+2x40',
      },
      {
        series: series('worker_stacks_reconciles_total', { result: 'unchanged', account: '111111111111' }),
        values: '0+2x40',
      },
      {
        series: series('worker_stacks_reconciles_total', { result: 'unchanged', account: '222222222222' }),
        values: '0+2x40',
      },
    ],
    evalTime: '35m',
    alert: 'WorkerStacksAwsThrottled',
    expect: [{ account: '111111111111' }],
  }),
  () => ({
    name: 'half the reconciles of an account end transient on network errors, not throttling',
    input: [
      {
        series: series('worker_stacks_transient_reconciles_total', {
          reason: 'AwsUnavailable',
          account: '111111111111',
        }),
        values: '0+2x40',
      },
      {
        series: series('worker_stacks_reconciles_total', { result: 'transient', account: '111111111111' }),
        values: '0+2x40',
      },
      {
        series: series('worker_stacks_reconciles_total', { result: 'unchanged', account: '111111111111' }),
        values: '0+2x40',
      },
    ],
    evalTime: '35m',
    alert: 'WorkerStacksAwsThrottled',
    expect: [],
  }),
  () => ({
    name: 'failed reconciles',
    input: [
      {
        series: series('worker_stacks_reconciles_total', { result: 'failed', account: '111111111111' }),
        values: '0 0 1 1 1 1 1 1 1 1 1',
      },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksReconcileErrors',
    expect: [{ account: '111111111111', result: 'failed' }],
  }),
  () => ({
    name: 'invalid objects are not reconcile errors (they are Stalled)',
    input: [{ series: series('worker_stacks_reconciles_total', { result: 'invalid' }), values: '0+1x10' }],
    evalTime: '10m',
    alert: 'WorkerStacksReconcileErrors',
    expect: [],
  }),
  () => ({
    name: 'WorkerClusters no shard selects',
    input: [
      { series: series('worker_stacks_unowned_clusters'), values: '3x30' },
      { series: series('worker_stacks_leader'), values: '1x30' },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksUnownedClusters',
    expect: [{}],
  }),
  () => ({
    name: 'every WorkerCluster owned by one shard',
    input: [
      { series: series('worker_stacks_unowned_clusters'), values: '0x30' },
      { series: series('worker_stacks_leader'), values: '1x30' },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksUnownedClusters',
    expect: [],
  }),
  () => ({
    name: 'WorkerClusters two shards select',
    input: [
      { series: series('worker_stacks_multiply_owned_clusters'), values: '1x30' },
      { series: series('worker_stacks_leader'), values: '1x30' },
    ],
    evalTime: '10m',
    alert: 'WorkerStacksOverlappingShards',
    expect: [{}],
  }),
  () => ({
    name: 'a pool waits a day to replace its nodes',
    input: [
      {
        series: series('worker_stacks_pending_roll', { cluster: 'c1', pool: 'spot', cause: 'image' }),
        values: '1x1500',
      },
      { series: series('worker_stacks_leader'), values: '1x1500' },
    ],
    evalTime: '1450m',
    alert: 'WorkerStacksRollPendingLong',
    expect: [{ cluster: 'c1', pool: 'spot', cause: 'image' }],
  }),
  () => ({
    name: 'a replacement pending for hours, not a day',
    input: [
      {
        series: series('worker_stacks_pending_roll', { cluster: 'c1', pool: 'spot', cause: 'image' }),
        values: '1x600',
      },
      { series: series('worker_stacks_leader'), values: '1x600' },
    ],
    evalTime: '590m',
    alert: 'WorkerStacksRollPendingLong',
    expect: [],
  }),
  () => ({
    name: 'clusters waiting three days for a channel release',
    input: [
      {
        series: series('worker_stacks_image_channel_clusters', { channel: 'al2023', release: 'r2', state: 'waits' }),
        values: '3x4400',
      },
      { series: series('worker_stacks_leader'), values: '1x4400' },
    ],
    evalTime: '4330m',
    alert: 'WorkerStacksImageChannelStuck',
    expect: [{ channel: 'al2023', release: 'r2' }],
  }),
  () => ({
    name: 'a new release every day: each waits a day, none is stuck',
    input: [
      {
        series: series('worker_stacks_image_channel_clusters', { channel: 'al2023', release: 'r1', state: 'waits' }),
        values: '3x1440 _x3000',
      },
      {
        series: series('worker_stacks_image_channel_clusters', { channel: 'al2023', release: 'r2', state: 'waits' }),
        values: '_x1440 3x1440 _x1500',
      },
      {
        series: series('worker_stacks_image_channel_clusters', { channel: 'al2023', release: 'r3', state: 'waits' }),
        values: '_x2880 3x1500',
      },
      { series: series('worker_stacks_leader'), values: '1x4400' },
    ],
    evalTime: '4330m',
    alert: 'WorkerStacksImageChannelStuck',
    expect: [],
  }),
  () => ({
    name: 'every cluster runs its release: nothing is stuck',
    input: [
      {
        series: series('worker_stacks_image_channel_clusters', { channel: 'al2023', release: 'r2', state: 'runs' }),
        values: '9x4400',
      },
      { series: series('worker_stacks_leader'), values: '1x4400' },
    ],
    evalTime: '4330m',
    alert: 'WorkerStacksImageChannelStuck',
    expect: [],
  }),
  () => ({
    name: "a channel's newest release halted",
    input: [
      { series: series('worker_stacks_image_channel_newest_release_halted', { channel: 'al2023' }), values: '1x30' },
      { series: series('worker_stacks_leader'), values: '1x30' },
    ],
    evalTime: '20m',
    alert: 'WorkerStacksImageReleaseHalted',
    expect: [{ channel: 'al2023' }],
  }),
  () => ({
    name: "a channel's source unread for hours",
    input: [
      { series: series('worker_stacks_image_channel_problems', { channel: 'al2023' }), values: '1x400' },
      { series: series('worker_stacks_leader'), values: '1x400' },
    ],
    evalTime: '370m',
    alert: 'WorkerStacksImageChannelUnread',
    expect: [{ channel: 'al2023' }],
  }),
  () => ({
    name: "a channel's source unread for an hour only",
    input: [
      { series: series('worker_stacks_image_channel_problems', { channel: 'al2023' }), values: '1x60 0x340' },
      { series: series('worker_stacks_leader'), values: '1x400' },
    ],
    evalTime: '370m',
    alert: 'WorkerStacksImageChannelUnread',
    expect: [],
  }),
  () => ({
    name: 'no pass without errors for over an hour',
    input: [
      { series: series('worker_stacks_last_successful_pass_timestamp_seconds'), values: '0x100' },
      { series: series('worker_stacks_leader'), values: '1x100' },
    ],
    evalTime: '80m',
    alert: 'WorkerStacksNoSuccessfulPass',
    expect: [{}],
  }),
];

/** A case held this long or longer is evaluated every 10m (see the promtool test). */
const LONG_CASE_MINUTES = 360;

/** Writes one promtool test file of `cases`, the rules evaluated every `evaluationInterval`; returns its path. */
function testFile(name: string, evaluationInterval: string, cases: readonly AlertCase[]): string {
  expect(cases.length).toBeGreaterThan(0);
  const file = path.join(scratch, name);
  fs.writeFileSync(
    file,
    stringify({
      rule_files: [RULES],
      evaluation_interval: evaluationInterval,
      tests: cases.map((c) => ({
        name: c.name,
        interval: '1m',
        input_series: c.input,
        alert_rule_test: [
          {
            eval_time: c.evalTime,
            alertname: c.alert,
            exp_alerts: c.expect.map((labels) => {
              const rule = rules.find((r) => r.alert === c.alert)!;
              const all = { ...labels, ...rule.labels };
              return { exp_labels: all, exp_annotations: annotationsFor(c.alert, all) };
            }),
          },
        ],
      })),
    }),
  );
  return file;
}

test('every alert of the rules has at least one case that fires it', () => {
  // GIVEN the alerts the cases fire
  const fired = new Set(
    CASES.map((c) => c())
      .filter((c) => c.expect.length)
      .map((c) => c.alert),
  );
  // THEN
  expect(rules.map((r) => r.alert).filter((a) => !fired.has(a))).toEqual([]);
});

test('promtool check rules accepts the rules file', () => {
  // WHEN
  const r = run(goTool('promtool'), ['check', 'rules', RULES]);
  // THEN
  expect({ code: r.code, out: r.stdout + r.stderr }).toMatchObject({ code: 0 });
  expect(r.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
});

test("promtool test rules: each alert fires (and only then) on series of the daemon's real /metrics", () => {
  // GIVEN one promtool test per case, on the scrape's series: promtool evaluates every rule at each
  // evaluation_interval up to a case's eval_time, so the cases of alerts held for hours or days go in a second file
  // evaluated every 10m (about 1,600 evaluations instead of 16,000; 15 s of CPU at 1m), the rest at 1m
  const cases = CASES.map((c) => c());
  const long = (c: AlertCase) => Number(/^(\d+)m$/.exec(c.evalTime)![1]) >= LONG_CASE_MINUTES;
  const files = [
    testFile(
      'alerts.test.yaml',
      '1m',
      cases.filter((c) => !long(c)),
    ),
    testFile('alerts-long.test.yaml', '10m', cases.filter(long)),
  ];
  // WHEN
  const r = run(goTool('promtool'), ['test', 'rules', ...files]);
  // THEN
  expect({ code: r.code, out: `${r.stdout}\n${r.stderr}` }).toEqual({
    code: 0,
    out: expect.stringContaining('SUCCESS'),
  });
});

test("the Grafana dashboard queries only metrics of the daemon's real /metrics, and every worker_stacks_ metric has a panel", () => {
  // GIVEN the dashboard's queries
  const dashboard = JSON.parse(fs.readFileSync(path.join(CHART, 'files', 'grafana-dashboard.json'), 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((p: Json) => p.targets.map((t: Json) => t.expr));
  const used = new Set(
    exprs
      .flatMap((e) => e.match(/\b(worker_stacks|process|nodejs)_[a-z0-9_]+/g) ?? [])
      .map((m) => m.replace(/_bucket$/, '')),
  );
  // THEN each is a family of the scrape (a histogram's _bucket series belong to it)
  const missing = [...used].filter((m) => !new RegExp(`^# TYPE ${m} `, 'm').test(scrape));
  expect(missing).toEqual([]);
  // AND no worker_stacks_ family of the scrape is left out
  const families = [...scrape.matchAll(/^# TYPE (worker_stacks_\w+) /gm)].map((m) => m[1]);
  expect(families.filter((f) => !used.has(f))).toEqual([]);
  // AND every panel has a unique id and a query
  expect(new Set(dashboard.panels.map((p: Json) => p.id)).size).toBe(dashboard.panels.length);
  for (const p of dashboard.panels) expect(p.targets.length).toBeGreaterThan(0);
});
