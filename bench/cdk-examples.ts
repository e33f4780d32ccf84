/**
 * `npx cdk synth` of the three example clusters in clusters/, the way an
 * operator runs it. cdk.json's app is a launcher (bin/launch.js) that runs the
 * precompiled build/ when it is newer than every source, else ts-node; both
 * paths are measured (a current build is made here, in a temp dir, so the
 * figure never depends on whether someone ran `npm run build` lately), with
 * aws-cdk-lib's built-in template validation (CDK_VALIDATION) and cdk-nag on and off.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { buildIsCurrent, cdkSynth, CdkRun, ROOT } from './cdk-cli';
import { BenchOptions, codeState, figure, loadavg1, Section } from './report';
import { fmt, fmtSummary, mb, summarize, table } from './stats';

interface Variant {
  readonly id: string;
  readonly label: string;
  /** CDK_VALIDATION, unset when undefined. */
  readonly validation?: 'true' | 'false';
  readonly nag: boolean;
  /** launcher: cdk.json as it is; ts-node: the launcher forced to ts-node; built: a current build. */
  readonly app: 'launcher' | 'ts-node' | 'built';
}

const VARIANTS: readonly Variant[] = [
  { id: 'shipped', label: 'cdk.json as it is (launcher; see note for build/)', nag: true, app: 'launcher' },
  { id: 'built', label: 'current build, CDK_VALIDATION unset, nag on', nag: true, app: 'built' },
  { id: 'ts-node', label: 'no current build (ts-node), CDK_VALIDATION unset, nag on', nag: true, app: 'ts-node' },
  {
    id: 'built-validation-false',
    label: 'current build, CDK_VALIDATION=false, nag on',
    validation: 'false',
    nag: true,
    app: 'built',
  },
  {
    id: 'built-validation-true',
    label: 'current build, CDK_VALIDATION=true, nag on',
    validation: 'true',
    nag: true,
    app: 'built',
  },
  { id: 'built-nag-off', label: 'current build, CDK_VALIDATION unset, nag off', nag: false, app: 'built' },
  {
    id: 'ts-node-validation-true',
    label: 'no current build (ts-node), CDK_VALIDATION=true, nag on',
    validation: 'true',
    nag: true,
    app: 'ts-node',
  },
];
const QUICK = new Set(['built', 'ts-node']);

/**
 * bin/ and lib/ transpiled to CommonJS (what `npm run build` emits, without type checking) in a temp project whose
 * package.json, cloudconfig/, clusters/ and node_modules/ link to the real ones, so lib/core/paths.ts finds its root there.
 */
function precompile(outDir: string): string {
  const walk = (dir: string): string[] =>
    fs
      .readdirSync(dir, { withFileTypes: true })
      .flatMap((e) =>
        e.isDirectory()
          ? walk(path.join(dir, e.name))
          : /\.ts$/.test(e.name) && !e.name.endsWith('.d.ts')
            ? [path.join(dir, e.name)]
            : [],
      );
  for (const file of [...walk(path.join(ROOT, 'bin')), ...walk(path.join(ROOT, 'lib'))]) {
    const out = path.join(outDir, path.relative(ROOT, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(out), { recursive: true });
    const js = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
      fileName: file,
    });
    fs.writeFileSync(out, js.outputText);
  }
  for (const link of ['package.json', 'cloudconfig', 'clusters', 'node_modules'])
    fs.symlinkSync(path.join(ROOT, link), path.join(outDir, link));
  return path.join(outDir, 'bin', 'app.js');
}

export async function runCdkExamples(opts: BenchOptions): Promise<Section> {
  const load0 = loadavg1();
  const code = codeState();
  const reps = opts.quick ? 1 : 3;
  const app = precompile(path.join(opts.tmp, 'precompiled'));
  const current = buildIsCurrent();
  const runs = new Map<string, CdkRun[]>();
  for (let i = 0; i < reps; i++) {
    // Interleaved, so that a burst of load elsewhere on the machine spreads over the variants instead of hitting one.
    for (const v of VARIANTS.filter((x) => !opts.quick || QUICK.has(x.id))) {
      const r = cdkSynth({
        clustersDir: path.join(ROOT, 'clusters'),
        validation: v.validation,
        nag: v.nag,
        app: v.app === 'built' ? `node ${app}` : undefined,
        extraEnv: v.app === 'ts-node' ? { WORKER_STACKS_TS_NODE: '1' } : undefined,
      });
      if (r.exitCode !== 0) throw new Error(`cdk synth (${v.label}) failed (${r.exitCode}): ${r.stderrTail}`);
      runs.set(v.id, [...(runs.get(v.id) ?? []), r]);
      process.stderr.write(`  cdk synth examples, ${v.label}: ${fmt(r.wallMs / 1000)} s\n`);
    }
  }
  const median = (id: string) => summarize((runs.get(id) ?? []).map((r) => r.wallMs / 1000)).median;
  const rows = VARIANTS.filter((v) => runs.has(v.id)).map((v) => [
    v.label,
    String(runs.get(v.id)!.length),
    ...fmtSummary(summarize(runs.get(v.id)!.map((r) => r.wallMs / 1000))),
    fmt(Math.max(...runs.get(v.id)!.map((r) => mb(r.maxRssBytes)))),
  ]);
  return {
    id: 'cdk-examples',
    title: 'npx cdk synth of the three example clusters',
    mode: opts.quick ? 'quick' : 'full',
    date: new Date().toISOString(),
    loadavg: [load0, loadavg1()],
    code,
    figures: [
      figure(
        'cdk-examples-built',
        'npx cdk synth, 3 examples, with a current build (CDK_VALIDATION unset, nag on)',
        median('built'),
        's',
        { op: '<=', value: 3 },
      ),
      figure(
        'cdk-examples-ts-node',
        'npx cdk synth, 3 examples, without a current build: ts-node (CDK_VALIDATION unset, nag on)',
        median('ts-node'),
        's',
        { op: '<=', value: 3 },
      ),
      figure(
        'cdk-examples-shipped',
        `npx cdk synth, 3 examples, cdk.json as it is (build/ ${current ? 'current' : 'missing or stale'})`,
        median('shipped'),
        's',
      ),
      figure(
        'cdk-examples-validation-true',
        'npx cdk synth, 3 examples, current build, CDK_VALIDATION=true',
        median('built-validation-true'),
        's',
      ),
      figure('cdk-examples-nag-off', 'npx cdk synth, 3 examples, current build, nag off', median('built-nag-off'), 's'),
    ].filter((f) => !Number.isNaN(f.value)),
    tables: [table(['variant', 'runs', 'wall min s', 'median s', 'max s', 'peak RSS MB'], rows)],
    notes: [
      'Wall time of the whole command (npx, the CDK CLI, the app process), 3 worker stacks + 3 bootstrap stacks, fresh --output dir each run, CDK_DISABLE_VERSION_CHECK=1.',
      "CDK_VALIDATION: aws-cdk-lib 2.276 registers a CloudFormationValidatePlugin on every App (resource-provider schema checks and CDK default Rego rules, in WebAssembly). lib/engines/stacks/app.ts now leaves it off unless CDK_VALIDATION=true (App prop builtinCloudFormationValidation), so unset and =false are the same; =true shows what the check costs. Without it, cfn-lint (test/engines/stacks/cfn-lint.test.ts) and CloudFormation's own change-set validation still catch schema errors, later.",
      `"current build": bin/ and lib/ transpiled here by typescript.transpileModule into a temp project (cdk --app "node <tmp>/bin/app.js"), the same JavaScript \`npm run build\` makes, so the figure does not depend on the state of build/. "no current build": the cdk.json launcher with WORKER_STACKS_TS_NODE=1, the path it takes when build/ is missing or older than a source. "cdk.json as it is": build/ was ${current ? 'current' : 'missing or stale'} when the run started.`,
    ],
    data: Object.fromEntries(runs),
  };
}
