/**
 * The Kubernetes store's unchanged passes in a fresh process: the list + watch cache syncs (one paginated list, then
 * the watch), then two Controller passes over the settled fleet read from that cache. Prints one JSON line.
 *
 *   node -r ts-node/register/transpile-only bench/kube-unchanged-child.ts <kubeconfig> <namespace> <manifest.json>
 */
import * as fs from 'node:fs';
import { KubernetesStore } from '../lib/adapters/stores/kubernetes-store';
import type { SeededStack } from './seed';
import { seedStacks } from './seed';
import { World } from './world';

export interface KubePassFigures {
  readonly wallMs: number;
  readonly clusters: number;
  readonly outcomes: Record<string, number>;
  readonly syntheses: number;
  readonly cfnReads: number;
  readonly cfnWrites: number;
  readonly s3Publishes: number;
  readonly statusWrites: number;
  /** API requests during the pass, by method. */
  readonly requests: Record<string, number>;
}

export interface KubeUnchangedChildResult {
  /** The informer's first list (all pages) until synced. */
  readonly syncMs: number;
  readonly syncRequests: Record<string, number>;
  readonly informer: { lists: number; watches: number; relistsAfterGone: number; watchErrors: number };
  readonly passes: KubePassFigures[];
  readonly maxRssBytes: number;
}

async function main(): Promise<void> {
  const [kubeconfig, namespace, manifest] = process.argv.slice(2);
  const stacks = JSON.parse(fs.readFileSync(manifest, 'utf8')) as SeededStack[];
  const world = new World({
    clustersDir: '/nonexistent',
    account: '111111111111',
    store: { kind: 'kubernetes', options: { kubeconfig, namespace } },
  });
  seedStacks(world, stacks);
  const store = world.store as unknown as KubernetesStore;
  const client = (store as unknown as { client: { requests: Record<string, number> } }).client;
  const snapshot = () => ({ ...client.requests });
  const delta = (before: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(client.requests)
        .map(([k, v]) => [k, v - (before[k] ?? 0)])
        .filter(([, v]) => (v as number) > 0),
    );
  // As the daemon does: the watch starts the cache; every later read is served from it.
  const t = performance.now();
  const stop = store.watch(() => undefined);
  await store.sync();
  const syncMs = performance.now() - t;
  const syncRequests = snapshot();
  const passes: KubePassFigures[] = [];
  for (let i = 0; i < 2; i++) {
    const before = snapshot();
    const pass = await world.measuredPass();
    passes.push({
      ...pass,
      cfnReads: world.cfnReads(),
      cfnWrites: world.cfnWrites(),
      s3Publishes: world.publisher.calls,
      statusWrites: world.statusWrites,
      requests: delta(before),
    });
  }
  const informer = { ...store.informerStats! };
  stop();
  store.close();
  const result: KubeUnchangedChildResult = {
    syncMs,
    syncRequests,
    informer,
    passes,
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
