/**
 * Summarizes a V8 CPU profile (node --cpu-prof, or `npm run bench -- <name> --cpu-prof`):
 * top functions by self time, self time by module (npm package or our own file), and our
 * own (lib/) functions by inclusive time, which is where a fix goes.
 *
 *   npx ts-node --transpile-only bench/profile.ts <file.cpuprofile> [--top N] [--under FUNCTION]
 *
 * --under keeps only the samples taken while FUNCTION was on the stack (e.g. synthesizeStack).
 */
import * as fs from 'node:fs';
import { ROOT } from './cdk-cli';
import { table } from './stats';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: number[];
}

interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

/** `node_modules/yaml/dist/...` → `yaml`; `/work/main/lib/adapters/stores/file-store.ts` → `lib/adapters/stores/file-store.ts`. */
export function moduleOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  return url.replace(/^file:\/\//, '').replace(`${ROOT}/`, '');
}

/** Line numbers only for packages: ours are positions in ts-node's transpiled output, not in the .ts source. */
const where = (n: ProfileNode) => {
  const mod = moduleOf(n.callFrame.url, n.callFrame.functionName);
  return /^(lib|bin|bench|test)\/|^\(/.test(mod) ? mod : `${mod}:${n.callFrame.lineNumber + 1}`;
};
const fnKey = (n: ProfileNode) => `${n.callFrame.functionName || '(anonymous)'} ${where(n)}`;

export function summarizeProfile(profile: CpuProfile, top = 20, under?: string): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const modules = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const anyInclusive = new Map<string, number>();
  let total = 0;
  const stackOf = (leaf: ProfileNode) => {
    const out: ProfileNode[] = [];
    for (let n: ProfileNode | undefined = leaf; n; n = parent.has(n.id) ? byId.get(parent.get(n.id)!) : undefined)
      out.push(n);
    return out;
  };
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const leaf = byId.get(id)!;
    const stack = stackOf(leaf);
    if (under && !stack.some((n) => n.callFrame.functionName === under)) return;
    total += ms;
    self.set(fnKey(leaf), (self.get(fnKey(leaf)) ?? 0) + ms);
    const leafModule = moduleOf(leaf.callFrame.url, leaf.callFrame.functionName);
    modules.set(leafModule, (modules.get(leafModule) ?? 0) + ms);
    // Each of our functions on the stack once, however deep the recursion.
    const seen = new Set<string>();
    for (const n of stack) {
      const k = fnKey(n);
      if (seen.has(k)) continue;
      seen.add(k);
      const mod = moduleOf(n.callFrame.url, n.callFrame.functionName);
      // Frames every sample shares (the module loader, the entry point) say nothing.
      if (!/^(node:|ts-node|\(root\)|bench\/)/.test(mod)) anyInclusive.set(k, (anyInclusive.get(k) ?? 0) + ms);
      if (/^(lib|bin)\//.test(mod)) inclusive.set(k, (inclusive.get(k) ?? 0) + ms);
    }
  });
  const rows = (m: Map<string, number>, n: number) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, ms]) => [k, ms.toFixed(0), ((100 * ms) / total).toFixed(1)]);
  return [
    `total sampled${under ? ` under ${under}` : ''}: ${total.toFixed(0)} ms`,
    '',
    table(['function (self time)', 'ms', '%'], rows(self, top)),
    '',
    table(['module (self time)', 'ms', '%'], rows(modules, top)),
    '',
    table(['our function (inclusive time)', 'ms', '%'], rows(inclusive, top)),
    '',
    // Library phases (e.g. aws-cdk-lib's resolve or validate steps) show up here.
    table(['any function (inclusive time)', 'ms', '%'], rows(anyInclusive, top)),
  ].join('\n');
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const file = args.find((a) => a.endsWith('.cpuprofile'));
  if (!file) {
    process.stderr.write('usage: profile.ts <file.cpuprofile> [--top N] [--under FUNCTION]\n');
    process.exit(2);
  }
  const flag = (f: string) => (args.includes(f) ? args[args.indexOf(f) + 1] : undefined);
  process.stdout.write(
    `${summarizeProfile(JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile, Number(flag('--top') ?? 20), flag('--under'))}\n`,
  );
}
