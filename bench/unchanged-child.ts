/**
 * Two Controller passes over a settled fleet in a fresh process: the first is
 * what a restarted reconciler pays (cold module, template and JIT caches), the
 * second what every later pass of the daemon pays. Prints one JSON line.
 *
 *   node -r ts-node/register/transpile-only bench/unchanged-child.ts <clustersDir> <manifest.json>
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SeededStack } from './seed';
import { seedStacks } from './seed';
import { World } from './world';

export interface PassFigures {
  readonly wallMs: number;
  readonly clusters: number;
  readonly outcomes: Record<string, number>;
  readonly syntheses: number;
  readonly taskRuns: Record<string, number>;
  readonly taskMs: Record<string, number>;
  readonly storeListMs: number;
  readonly cfnCalls: Readonly<Partial<Record<string, number>>>;
  readonly listPages: number;
  readonly cfnReads: number;
  readonly cfnWrites: number;
  readonly s3Publishes: number;
  readonly s3Uploads: number;
  readonly stsCalls: number;
  readonly statusWrites: number;
  /** State files whose mtime moved during the pass (catches writes that bypass writeStatus, e.g. generation bumps). */
  readonly stateFilesTouched: number;
}

export interface UnchangedChildResult {
  readonly passes: PassFigures[];
  readonly maxRssBytes: number;
}

function mtimes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!fs.existsSync(dir)) return out;
  for (const f of fs.readdirSync(dir)) out.set(f, fs.statSync(path.join(dir, f)).mtimeMs);
  return out;
}

async function main(): Promise<void> {
  const [clustersDir, manifest] = process.argv.slice(2);
  const stacks = JSON.parse(fs.readFileSync(manifest, 'utf8')) as SeededStack[];
  const world = new World({ clustersDir, account: '111111111111' });
  seedStacks(world, stacks);
  const stateDir = path.join(clustersDir, '.status');
  const passes: PassFigures[] = [];
  for (let i = 0; i < 2; i++) {
    const before = mtimes(stateDir);
    const pass = await world.measuredPass();
    const after = mtimes(stateDir);
    passes.push({
      ...pass,
      taskRuns: Object.fromEntries(world.taskRuns),
      taskMs: Object.fromEntries(world.taskMs),
      storeListMs: world.storeListMs,
      cfnCalls: world.calls(),
      listPages: world.listPages,
      cfnReads: world.cfnReads(),
      cfnWrites: world.cfnWrites(),
      s3Publishes: world.publisher.calls,
      s3Uploads: world.publisher.uploads.length,
      stsCalls: world.identity.calls,
      statusWrites: world.statusWrites,
      stateFilesTouched:
        [...after].filter(([f, t]) => before.get(f) !== t).length +
        [...before.keys()].filter((f) => !after.has(f)).length,
    });
  }
  const result: UnchangedChildResult = { passes, maxRssBytes: process.resourceUsage().maxRSS * 1024 };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
