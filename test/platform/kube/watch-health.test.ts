import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { KubeClient } from '../../../lib/platform/kube/client';
import { kubeHealth, registerKubeMetrics, WatchErrorReason } from '../../../lib/platform/kube/kube-health';
import { collectionPath, KubeWorkerCluster } from '../../../lib/platform/kube/resource';
import { Informer, WatchLogger } from '../../../lib/platform/kube/watch';
import { eventually } from '../../helpers/eventually';
import { KubeApiServer } from '../../helpers/kube-apiserver';
import { kubeForFile } from '../../helpers/kube-crd';
import { applyObject } from '../../helpers/kube-objects';
import { objectNamed } from '../../adapters/stores/store-contract';
import { Json } from '../../helpers/json';

/**
 * Watch health, seen by the operator: each failed list or watch is one JSON log line (store, reason, what happens
 * next) and one count of worker_stacks_watch_errors_total{store,reason}; a 410 is also a relist
 * (worker_stacks_watch_relists_total). Against the real API server, through a proxy on 127.0.0.1 that answers the
 * next watch with what a test asks for (a 410 in the stream as the API server sends it, a 429, a 503, a 403), and
 * with the API server itself stopped (an outage).
 */
const kube = kubeForFile();
const api = (): KubeApiServer => kube.current.api;

type Fault = '410' | '429' | '503' | '403';
const STATUS_REASON: Record<Fault, string> = {
  '410': 'Expired',
  '429': 'TooManyRequests',
  '503': 'ServiceUnavailable',
  '403': 'Forbidden',
};

/** A plain-HTTP proxy in front of the API server (the admin's token added), which can fail the next watch. */
async function faultyProxy(target: KubeApiServer) {
  const faults: Fault[] = [];
  const open = new Set<{ res: http.ServerResponse; up: http.ClientRequest }>();
  const server = http.createServer((req, res) => {
    const watch = /[?&]watch=true/.test(req.url ?? '');
    const fault = watch ? faults.shift() : undefined;
    if (fault === '410') {
      // As the API server does it: the watch starts (200), then an ERROR event with the 410 Status, then the end.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired', message: 'too old resource version: 1 (99)' } })}\n`,
      );
      return;
    }
    if (fault) {
      res.writeHead(Number(fault), {
        'content-type': 'application/json',
        ...(fault === '429' ? { 'retry-after': '1' } : {}),
      });
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          code: Number(fault),
          reason: STATUS_REASON[fault],
          message: `injected ${fault}`,
        }),
      );
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.authorization;
    const up = https.request(
      `${target.server}${req.url}`,
      { method: req.method, headers: { ...headers, authorization: `Bearer ${target.adminToken}` }, ca: target.caPem },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
    if (watch) {
      const entry = { res, up };
      open.add(entry);
      res.on('close', () => open.delete(entry));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const kubeconfig = path.join(target.dir, `proxy-${port}.kubeconfig`);
  fs.writeFileSync(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      // client-node refuses plain HTTP unless told not to verify TLS (there is none on the proxy's loopback leg).
      clusters: [{ name: 'proxy', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'proxy', user: { token: 'added-by-the-proxy' } }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
      'current-context': 'proxy',
    }),
  );
  return {
    kubeconfig,
    faults,
    /** Ends the open watches cleanly, as the API server does at a watch's timeout: the informer watches again. */
    endWatches: () => {
      for (const { res, up } of open) {
        up.destroy();
        res.end();
      }
    },
    get openWatches() {
      return open.size;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function recordingLog(): WatchLogger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  return {
    lines,
    info: (o, msg) => lines.push({ level: 'info', ...o, msg }),
    warn: (o, msg) => lines.push({ level: 'warn', ...o, msg }),
  };
}

let n = 0;

test.each([
  // fault, reason, what the log says happens next
  ['410', 'Expired', /list again/],
  ['429', 'Throttled', /retry the watch in \d+ ms/],
  ['503', 'Unavailable', /retry the watch in \d+ ms/],
  ['403', 'Forbidden', /retry the watch in \d+ ms/],
] as const)(
  'a watch answered %s is logged (reason %s, with what happens next) and counted',
  async (fault, reason, next) => {
    // GIVEN an informer through the proxy, synced, its watch open for more than a second (a shorter one ending is a failure)
    const ns = await kube.current.namespace(`health-${++n}`);
    await applyObject(kube.current.admin, ns, objectNamed('alpha'));
    const proxy = await faultyProxy(api());
    const client = KubeClient.fromOptions({ kubeconfig: proxy.kubeconfig });
    const log = recordingLog();
    const store = `test-${fault}`;
    const inf = new Informer<KubeWorkerCluster>(client, collectionPath(ns), () => undefined, {
      store,
      log,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
    });
    inf.start();
    try {
      await run();
    } finally {
      inf.stop();
      client.close();
      await proxy.close();
    }
    async function run() {
      await eventually(
        () => inf.hasSynced && proxy.openWatches === 1,
        `the informer lists and watches through the proxy (${JSON.stringify(log.lines)})`,
      );
      await new Promise((r) => setTimeout(r, 1200));

      // WHEN the next watch fails so
      proxy.faults.push(fault);
      proxy.endWatches();

      // THEN it is watched again, and the failure was logged and counted under its reason
      await eventually(
        () => proxy.openWatches === 1 && proxy.faults.length === 0 && kubeHealth.errors(store, reason) === 1,
        'the informer watches again after the failure',
      );
      const line = log.lines.find((l) => l.reason === reason)!;
      expect(line).toMatchObject({ store, reason, status: Number(fault), what: 'watch', path: collectionPath(ns) });
      expect(String(line.next)).toMatch(next);
      expect(WATCH_REASONS.filter((r) => r !== reason).map((r) => kubeHealth.errors(store, r))).toEqual([0, 0, 0, 0]);
      // A 410 is the one failure that lists again.
      expect(kubeHealth.relists.get(store) ?? 0).toBe(fault === '410' ? 1 : 0);
    }
  },
);

const WATCH_REASONS: WatchErrorReason[] = ['Expired', 'Throttled', 'Unavailable', 'Forbidden', 'Other'];

test('an API server outage is logged and counted as Unavailable while it lasts, and the watch resumes after it', async () => {
  // GIVEN an informer on the real API server, synced
  const ns = await kube.current.namespace(`health-${++n}`);
  await applyObject(kube.current.admin, ns, objectNamed('alpha'));
  const client = KubeClient.fromOptions({ kubeconfig: api().kubeconfig });
  const log = recordingLog();
  const seen: number[] = [];
  const inf = new Informer<KubeWorkerCluster>(
    client,
    collectionPath(ns),
    (_t, o) => seen.push((o.spec as Json)?.pool?.maxSize),
    { store: 'test-outage', log, backoffBaseMs: 50, backoffMaxMs: 300 },
  );
  inf.start();
  try {
    await run();
  } finally {
    inf.stop();
    client.close();
  }
  async function run() {
    await inf.synced();

    // WHEN the API server is down for a while
    await api().stopApiServer();
    await eventually(
      () => kubeHealth.errors('test-outage', 'Unavailable') >= 2,
      'failed attempts during the outage are counted',
    );
    await api().restartApiServer();
    await applyObject(
      kube.current.admin,
      ns,
      objectNamed('alpha', (r) => (r.spec.pool.maxSize = 27)),
    );

    // THEN each failed attempt was one warn line saying when it retries, and the change after the outage arrives
    const lines = log.lines.filter((l) => l.reason === 'Unavailable');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const l of lines)
      expect(l).toMatchObject({
        level: 'warn',
        store: 'test-outage',
        next: expect.stringMatching(/^retry the (watch|list) in \d+ ms/),
      });
    await eventually(() => seen.includes(27), 'the edit after the outage is delivered');
  }
}, 120_000);

test("the counts are exposed under the names the alerts use, on the daemon's registry", async () => {
  // GIVEN a registry with the Kubernetes metrics, and one count of each kind
  const registry = new Registry();
  registerKubeMetrics(registry);
  kubeHealth.watchError('test-expose', 'Throttled');
  kubeHealth.relisted('test-expose');
  // WHEN scraped
  const text = await registry.metrics();
  // THEN
  expect(text).toContain('# TYPE worker_stacks_watch_errors_total counter');
  expect(text).toContain('worker_stacks_watch_errors_total{store="test-expose",reason="Throttled"} 1');
  expect(text).toContain('worker_stacks_watch_relists_total{store="test-expose"} 1');
});

test('the shard ownership gauges: the count while leading, 0 on a replica that does not look', async () => {
  // GIVEN a registry with the Kubernetes metrics
  const registry = new Registry();
  registerKubeMetrics(registry);
  const scrape = async () => /^worker_stacks_unowned_clusters (\d+)$/m.exec(await registry.metrics())?.[1];
  // WHEN the leader's look found 3, and later it stopped leading
  kubeHealth.unowned = 3;
  const leading = await scrape();
  kubeHealth.unowned = undefined;
  const following = await scrape();
  // THEN
  expect([leading, following]).toEqual(['3', '0']);
});
