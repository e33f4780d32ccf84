import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../../lib/adapters/cli/program';
import { ReviewError } from '../../../lib/core/errors';
import { formatJson } from '../../../lib/engines/review/format-json';
import { formatMarkdown } from '../../../lib/engines/review/format-markdown';
import { formatTerminal } from '../../../lib/engines/review/format-terminal';
import { ClusterReview, ReviewResult } from '../../../lib/engines/review/model';
import { reviewExitCode } from '../../../lib/engines/review/review';
import { compareSides } from '../../../lib/engines/review/compare-sides';
import { SynthesizedSide, synthesizeRevision, synthesizeWorkingTree } from '../../../lib/engines/review/synth-revision';
import { tempDir } from '../../helpers/clusters';
import { run } from '../../helpers/tools';
import { caseTree, commitAll, createFixtureRepo, edit, git, leftoverReviewWorktrees, pool } from './fixture';
import { parseMarkdown, schemaProblems } from './formats';

/**
 * One fixture repository, its base synthesized once, and one head per case,
 * each synthesized once (as `cdk synth` does); every case is then compared,
 * formatted and gated in-process.
 */
const CASES: Record<string, (dir: string) => void> = {
  // (a) only a listener changes
  listener: (d) =>
    edit(d, 'clusters/prod-eu1.yaml', (t) =>
      t.replace('{ name: ingress-http, port: 80,', '{ name: ingress-http, port: 8080,'),
    ),
  // (b) a kubelet setting in the shared config template: every cluster
  kubelet: (d) =>
    edit(d, 'cloudconfig/_shared/kubelet-config.yaml.hbs', (t) =>
      t.replace('protectKernelDefaults: true', 'protectKernelDefaults: false'),
    ),
  // (c) a value of one cluster only (left uncommitted: head is the working tree, not HEAD)
  maxPods: (d) => edit(d, 'clusters/staging-us1.yaml', (t) => t.replace('maxPods: 58', 'maxPods: 64')),
  // (d) a new cluster, in a new account and region
  added: (d) =>
    fs.writeFileSync(
      path.join(d, 'clusters/dev-us2.yaml'),
      fs
        .readFileSync(path.join(d, 'clusters/staging-us1.yaml'), 'utf8')
        .replace(/staging-us1/g, 'dev-us2')
        .replace(/us-east-1/g, 'us-west-2')
        .replace(/222222222222/g, '444444444444'),
    ),
  // a security-group rule narrowed to the pool (issue 23): the pool's own group joins its launch template
  narrowed: (d) =>
    edit(d, 'clusters/prod-eu1.yaml', (t) =>
      t.replace(
        'port: 22, source: { prefixListId: pl-0123456789abcdef0 } }',
        'port: 22, source: { prefixListId: pl-0123456789abcdef0 }, pools: [default] }',
      ),
    ),
  // a cluster renamed (same spec), another removed
  renamed: (d) => {
    git(d, 'mv', 'clusters/staging-us1.yaml', 'clusters/staging-us2.yaml');
    // The name and the secret, which is the cluster's own by name (worker-stacks/<name>/...).
    edit(d, 'clusters/staging-us2.yaml', (t) => t.replace(/staging-us1/g, 'staging-us2'));
    fs.rmSync(path.join(d, 'clusters/edge-ap1.yaml'));
  },
};

let repo: string;
let out: string;
let base: SynthesizedSide & { ref: string };
const heads: Record<string, SynthesizedSide> = {};
const results: Record<string, ReviewResult> = {};

beforeAll(async () => {
  repo = createFixtureRepo();
  out = tempDir('review-out');
  const dirs: Record<string, string> = {};
  for (const [name, change] of Object.entries(CASES)) {
    dirs[name] = caseTree(repo, name);
    change(dirs[name]);
    if (name !== 'maxPods') commitAll(dirs[name], `head: ${name}`);
  }
  await pool(['(base)', ...Object.keys(CASES)], 2, async (name) => {
    if (name === '(base)') base = { ...(await synthesizeRevision(repo, 'base', path.join(out, 'base'))), ref: 'base' };
    else heads[name] = await synthesizeWorkingTree(dirs[name], path.join(out, name));
  });
  for (const name of Object.keys(CASES)) results[name] = compareSides(base, heads[name]);
}, 300_000);

afterAll(() => {
  // Symbolic links (node_modules) are removed, never followed.
  for (const dir of [out, repo && path.dirname(repo)]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const cluster = (r: ReviewResult, name: string): ClusterReview => {
  const c = r.clusters.find((x) => x.name === name);
  if (!c) throw new Error(`no cluster ${name} in ${r.clusters.map((x) => x.name).join(', ')}`);
  return c;
};
const statuses = (r: ReviewResult) => Object.fromEntries(r.clusters.map((c) => [c.name, c.status]));
const gates = (r: ReviewResult) => [reviewExitCode(r), reviewExitCode(r, 'change'), reviewExitCode(r, 'roll')];
const configLines = (c: ClusterReview, file: string) => c.config?.entries.find((e) => e.name === file)?.lines ?? [];

test('(a) a listener change: the stack changes, no node is replaced, the config is untouched', () => {
  // GIVEN
  const r = results.listener;
  const prod = cluster(r, 'prod-eu1');
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'unchanged', 'prod-eu1': 'changes', 'staging-us1': 'unchanged' });
  // How many resources a port change touches depends on how listeners derive their logical ids (issue 10, item 11).
  expect(prod.verdict).toMatch(/^changes without replacing nodes: \d+ resources? (modified|added|removed)/);
  expect(prod.rollReasons).toEqual([]);
  expect(prod.config).toBeNull();
  expect(prod.checksum.base).toBe(prod.checksum.head);
  expect(new Set(prod.template!.resources.map((x) => x.type))).toEqual(
    new Set(['AWS::EC2::SecurityGroupIngress', 'AWS::ElasticLoadBalancingV2::Listener']),
  );
  expect(gates(r)).toEqual([0, 1, 0]);
});

test('a rule narrowed to the pool rolls it and says why: its security groups change, its config does not', () => {
  // GIVEN
  const r = results.narrowed;
  const prod = cluster(r, 'prod-eu1');
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'unchanged', 'prod-eu1': 'rolls', 'staging-us1': 'unchanged' });
  expect(prod.checksum.base).toBe(prod.checksum.head);
  expect(prod.rollReasons).toEqual([
    expect.stringMatching(
      /^launch template PoolLaunchTemplate\w+ changes \(LaunchTemplateData\.NetworkInterfaces: the nodes' security groups/,
    ),
  ]);
  // the pool's own group and the rule on it are added, the rule on the shared group removed
  expect(prod.template!.resources.map((x) => [x.type, x.change]).sort()).toEqual(
    [
      ['AWS::EC2::LaunchTemplate', 'modified'],
      ['AWS::EC2::SecurityGroup', 'added'],
      ['AWS::EC2::SecurityGroupIngress', 'added'],
      ['AWS::EC2::SecurityGroupIngress', 'removed'],
    ].sort(),
  );
  expect(gates(r)).toEqual([0, 1, 1]);
});

test('(b) a kubelet setting in the shared template rolls every cluster, and the config diff shows the line', () => {
  // GIVEN
  const r = results.kubelet;
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'rolls', 'prod-eu1': 'rolls', 'staging-us1': 'rolls' });
  for (const c of r.clusters) {
    expect(c.config!.entries.map((e) => `${e.kind} ${e.name} ${e.change}`)).toEqual([
      'file /var/lib/kubelet/config.yaml modified',
    ]);
    expect(configLines(c, '/var/lib/kubelet/config.yaml')).toEqual(
      expect.arrayContaining([
        '--- a/var/lib/kubelet/config.yaml',
        '+++ b/var/lib/kubelet/config.yaml',
        '-protectKernelDefaults: true',
        '+protectKernelDefaults: false',
      ]),
    );
    expect(c.config!.entries[0].lines.filter((l) => /^[-+][^-+]/.test(l))).toHaveLength(2);
    expect(c.checksum.base).not.toBe(c.checksum.head);
    expect(c.rollReasons).toEqual([
      expect.stringContaining(
        `user data: node config ${c.checksum.base!.slice(0, 12)} -> ${c.checksum.head!.slice(0, 12)}`,
      ),
    ]);
  }
  expect(cluster(r, 'prod-eu1').rollReasons[0]).toMatch(/^launch template PoolLaunchTemplate\w+ changes/);
  expect(cluster(r, 'edge-ap1').rollReasons[0]).toMatch(/^launch configuration \w+ changes/);
  expect(cluster(r, 'prod-eu1').rollingUpdate).toEqual({
    strategy: 'rolling',
    nodes: null,
    maxBatchSize: 2,
    minInstancesInService: 3,
    pauseTime: 'PT10M',
    waitOnResourceSignals: true,
    minSuccessfulInstancesPercent: 100,
    instanceRefresh: null,
    drained: true,
  });
  expect(cluster(r, 'prod-eu1').verdict).toBe(
    'rolls nodes: in batches of 2, at least 3 in service, gated by node signals (100% within PT10M), drained; desired capacity not set (min 3, max 30; the group keeps its current size)',
  );
  expect(cluster(r, 'staging-us1').verdict).toBe(
    'rolls nodes: 2 nodes in batches of 1, at least 1 in service, gated by node signals (100% within PT10M), drained; desired capacity 2 (min 1, max 4)',
  );
  expect(gates(r)).toEqual([0, 1, 1]);
});

test('(c) a value of one cluster rolls only that cluster; the uncommitted working tree is what is reviewed', () => {
  // GIVEN
  const r = results.maxPods;
  const staging = cluster(r, 'staging-us1');
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'unchanged', 'prod-eu1': 'unchanged', 'staging-us1': 'rolls' });
  expect(configLines(staging, '/var/lib/kubelet/config.yaml')).toEqual(
    expect.arrayContaining(['-maxPods: 58', '+maxPods: 64']),
  );
  expect(staging.config!.entries).toHaveLength(1);
  expect(staging.template!.resources.map((x) => [x.logicalId.replace(/[0-9A-F]{8}$/, ''), x.properties])).toEqual([
    ['PoolLaunchTemplate', ['LaunchTemplateData.UserData']],
  ]);
  expect(cluster(r, 'prod-eu1').template!.text).toBe('');
  expect(gates(r)).toEqual([0, 1, 1]);
});

test('(d) an added cluster: a new stack with its nodes, its bootstrap stack named, nothing rolls', () => {
  // GIVEN
  const r = results.added;
  const dev = cluster(r, 'dev-us2');
  // THEN
  expect(statuses(r)).toEqual({
    'dev-us2': 'added',
    'edge-ap1': 'unchanged',
    'prod-eu1': 'unchanged',
    'staging-us1': 'unchanged',
  });
  expect(dev.verdict).toBe(
    'new cluster: creates WorkerStack-dev-us2 with its nodes, desired capacity 2 (min 1, max 4)',
  );
  expect(dev.notes).toEqual([
    expect.stringContaining(
      'deploy WorkerStacks-Bootstrap-444444444444-us-west-2 (the config bucket) once, before WorkerStack-dev-us2',
    ),
  ]);
  expect(dev.checksum.base).toBeNull();
  expect(dev.config!.entries.every((e) => e.change === 'added')).toBe(true);
  const kubelet = dev.config!.entries.find((e) => e.name === '/var/lib/kubelet/config.yaml')!;
  expect(kubelet.lines.slice(0, 3)).toEqual(['--- /dev/null', '+++ b/var/lib/kubelet/config.yaml', '@@ -0,0 +1,22 @@']);
  expect(kubelet.omittedLines).toBeGreaterThan(0);
  expect(gates(r)).toEqual([0, 1, 0]);
});

test('a renamed cluster is recognised, a removed one is said to stay deployed', () => {
  // GIVEN
  const r = results.renamed;
  // THEN
  expect(statuses(r)).toEqual({ 'edge-ap1': 'removed', 'prod-eu1': 'unchanged', 'staging-us2': 'renamed' });
  const renamed = cluster(r, 'staging-us2');
  expect(renamed.renamedFrom).toBe('staging-us1');
  expect(renamed.template!.resources.length).toBeGreaterThan(5);
  expect(renamed.template!.resources.every((x) => x.change === 'added')).toBe(true);
  expect(renamed.config!.entries.flatMap((e) => e.lines)).toEqual(expect.arrayContaining(['+  - name: staging-us2']));
  expect(cluster(r, 'staging-us2').verdict).toBe(
    'renamed from staging-us1 (same spec): creates WorkerStack-staging-us2 with new nodes; WorkerStack-staging-us1 is NOT deleted by the reconciler',
  );
  expect(cluster(r, 'edge-ap1').verdict).toBe(
    'removed: WorkerStack-edge-ap1 is NOT deleted by the reconciler; deleting it is an explicit command',
  );
  expect(cluster(r, 'edge-ap1').notes.join(' ')).toMatch(/does not delete a removed object's stacks/);
  expect(r.summary).toEqual({
    clusters: 3,
    unchanged: 1,
    changes: 0,
    rolls: 0,
    added: 0,
    removed: 1,
    renamed: 1,
    invalid: 0,
    fixed: 0,
  });
  // A new stack name brings up new nodes in place of the old stack's: --fail-on roll counts it.
  expect(gates(r)).toEqual([0, 1, 1]);
  // WHEN: one cluster, by its old name
  const only = compareSides(base, heads.renamed, { cluster: 'staging-us1' });
  // THEN
  expect(only.clusters.map((c) => c.name)).toEqual(['staging-us2']);
  expect(() => compareSides(base, heads.renamed, { cluster: 'nope' })).toThrow(ReviewError);
});

test('(e) an invalid cluster at head: the review still comes out, the object named as invalid with its problem; exit 1; the base worktree is gone', async () => {
  // GIVEN
  const dir = caseTree(repo, 'invalid');
  edit(dir, 'clusters/staging-us1.yaml', (t) => t.replace('minSize: 1', 'minSize: 10'));
  commitAll(dir, 'head: invalid');
  const out: string[] = [];
  const err: string[] = [];
  // WHEN
  const code = await runCli(['review', '--repo', dir, '--base', 'base'], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
  });
  // THEN
  expect(code).toBe(1);
  expect(err.join('')).toBe('');
  expect(out.join('')).toMatch(
    /^== staging-us1 \(WorkerStack-staging-us1\): invalid at head: \d+ problems?; nothing of WorkerStack-staging-us1 can deploy until fixed$/m,
  );
  expect(out.join('')).toContain('     clusters/staging-us1.yaml: spec.pool.minSize: 10 is greater than maxSize 4');
  expect(leftoverReviewWorktrees(repo)).toEqual([]);
}, 120_000);

test.each(Object.keys(CASES))(
  '%s: the markdown renders: a summary table first, each changed cluster in one collapsible section',
  (name) => {
    // GIVEN
    const r = results[name];
    // WHEN
    const md = parseMarkdown(formatMarkdown(r));
    // THEN
    const changed = r.clusters.filter((c) => c.status !== 'unchanged');
    expect(md.headings[0]).toBe('worker-stacks review');
    expect(md.table!.header).toEqual(['verdict', 'clusters', 'which']);
    const counted = md.table!.rows.reduce((n, row) => n + Number(row[1]), 0);
    expect(counted).toBe(r.clusters.length);
    const summaries = md.html.filter((h) => h.startsWith('<details>\n<summary>'));
    expect(md.html.filter((h) => h.includes('</details>'))).toHaveLength(summaries.length);
    expect((md.rendered.match(/<details>/g) ?? []).length).toBe(summaries.length);
    expect(summaries.length).toBeLessThanOrEqual(changed.length);
    for (const c of changed) expect(summaries.filter((h) => h.includes(`<code>${c.name}</code>`))).toHaveLength(1);
    for (const c of changed.filter((x) => x.status === 'changes' || x.status === 'rolls')) {
      expect(md.rendered).toContain(`<strong>${c.verdict.split(': ')[0]}</strong>`);
    }
  },
);

test('(b) the kubelet change: clusters with the same config diff share one section; the changed lines are shown', () => {
  // WHEN
  const md = parseMarkdown(formatMarkdown(results.kubelet));
  // THEN
  const diffs = md.code
    .filter((b) => b.lang === 'diff')
    .map((b) => b.text)
    .join('\n');
  expect(diffs).toContain('-protectKernelDefaults: true');
  expect(diffs).toContain('+protectKernelDefaults: false');
  expect(md.code.filter((b) => b.lang === 'diff').length).toBeLessThanOrEqual(3);
});

/** A fleet of `n` copies of one cluster's review, each under its own name and checksums: what a shared change does to a big fleet. */
function fleetOf(c: ClusterReview, n: number): ReviewResult {
  const clusters = Array.from({ length: n }, (_, i) => {
    const name = `fleet-${String(i).padStart(4, '0')}`;
    const sum = (side: string) => createHash('sha256').update(`${side}${i}`).digest('hex');
    const text = JSON.stringify(c)
      .split(c.checksum.base!)
      .join(sum('base'))
      .split(c.checksum.base!.slice(0, 12))
      .join(sum('base').slice(0, 12))
      .split(c.checksum.head!)
      .join(sum('head'))
      .split(c.checksum.head!.slice(0, 12))
      .join(sum('head').slice(0, 12))
      .split(c.name)
      .join(name);
    return JSON.parse(text) as ClusterReview;
  });
  return { ...results.kubelet, summary: { ...results.kubelet.summary, clusters: n, rolls: n, unchanged: 0 }, clusters };
}

test('a shared change across 1,000 clusters: one section for all, within the default 60,000 bytes', () => {
  // GIVEN
  const r = fleetOf(cluster(results.kubelet, 'prod-eu1'), 1000);
  // WHEN
  const text = formatMarkdown(r);
  const md = parseMarkdown(text);
  // THEN
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(60_000);
  expect(md.table!.rows).toEqual([
    ['rolls nodes', '1000', expect.stringMatching(/^fleet-0000, fleet-0001, .* and 990 more$/)],
  ]);
  expect(md.html.filter((h) => h.startsWith('<details>'))).toEqual([
    expect.stringContaining('<b>rolls nodes</b>: 1000 clusters, one diff: <code>fleet-0000</code>'),
  ]);
  const diff = md.code.find((b) => b.lang === 'diff')!.text;
  expect(diff).toContain('+protectKernelDefaults: false');
  expect(md.code.find((b) => b.lang === 'text')!.text).toContain('clusters/<cluster>/<head checksum>.ign');
  expect(text).toContain('`worker-stacks review --format json` has everything');
});

test.each([3_000, 8_000, 20_000])('--max-bytes %d: never exceeded; what was left out is said', (maxBytes) => {
  // GIVEN: distinct diffs (each cluster changes another value), so nothing can be shared
  const r = fleetOf(cluster(results.kubelet, 'prod-eu1'), 300);
  const distinct = {
    ...r,
    clusters: r.clusters.map((c, i) => ({ ...c, rollReasons: [`${c.rollReasons[0]} (#${i})`] })),
  };
  // WHEN
  const text = formatMarkdown(distinct, { maxBytes });
  // THEN
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(maxBytes);
  expect(text).toMatch(
    /\*\*Left out to stay within [\d,]+ bytes:\*\* .*\d+ whole sections \(\d+ clusters; the table above counts them\)/,
  );
  expect(text).toContain('`worker-stacks review --format json` has everything');
  expect(parseMarkdown(text).table!.rows[0].slice(0, 2)).toEqual(['rolls nodes', '300']);
});

test.each(Object.keys(CASES))('%s: the JSON output validates against the shipped schema', (name) => {
  // WHEN
  const doc = JSON.parse(formatJson(results[name]));
  // THEN
  expect(schemaProblems(doc)).toEqual([]);
  expect(schemaProblems({ ...doc, clusters: [{ ...doc.clusters[0], status: 'exploded' }] })).not.toEqual([]);
});

test('terminal output: colours only when asked for (the CLI asks on a TTY)', () => {
  // WHEN
  const plain = formatTerminal(results.kubelet, { color: false });
  const coloured = formatTerminal(results.kubelet, { color: true });
  // THEN
  // eslint-disable-next-line no-control-regex -- the control characters (ESC of a colour code) are what the test looks for
  expect(plain).not.toMatch(/\x1b\[/);
  expect(plain).toContain('== prod-eu1 (WorkerStack-prod-eu1): rolls nodes: in batches of 2');
  expect(plain).toContain('     +protectKernelDefaults: false');
  expect(coloured).toContain('\x1b[1;31mrolls nodes: in batches of 2');
  expect(coloured).toContain('\x1b[32m+protectKernelDefaults: false\x1b[0m');
  // eslint-disable-next-line no-control-regex -- the control characters (ESC of a colour code) are what the test looks for
  expect(coloured.replace(/\x1b\[[0-9;]*m/g, '')).toBe(plain);
});

/** What `cdk diff` prints for one change: its header line without colours, and the logical id it names. */
interface CdkChange {
  readonly line: string;
  readonly id: string;
}

/**
 * `cdk diff` of the head assembly against the base template, or null for "no
 * differences". It runs with colours forced on, because colour is how it
 * marks a logical id: grey after the construct path (`Output ConfigChecksum
 * <grey>ConfigChecksum</grey>:`), or alone after the type when there is no path.
 */
function cdkDiff(head: SynthesizedSide, stack: string): CdkChange[] | null {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CDK_DISABLE_VERSION_CHECK: '1',
    AWS_EC2_METADATA_DISABLED: 'true',
    FORCE_COLOR: '1',
  };
  delete env.NO_COLOR;
  const r = run(
    'npx',
    [
      '--no-install',
      'cdk',
      'diff',
      '--app',
      head.outdir,
      '--template',
      path.join(base.outdir, `${stack}.template.json`),
      stack,
    ],
    {
      cwd: repo,
      env,
      timeout: 120_000,
    },
  );
  const text = r.stdout + r.stderr;
  if (r.status !== 0) throw new Error(`cdk diff failed (${r.status}):\n${text}`);
  if (/There were no differences/.test(text)) return null;
  const changes: CdkChange[] = [];
  for (const raw of text.split('\n')) {
    const line = plainText(raw);
    if (!/^\[[-+~]\] /.test(line)) continue;
    // eslint-disable-next-line no-control-regex -- the control characters (ESC of a colour code) are what the test looks for
    const grey = /\x1b\[90m([^\x1b]+)\x1b\[39m/.exec(raw);
    changes.push({ line, id: grey ? grey[1] : line.split(' ')[2].replace(/:$/, '') });
  }
  if (changes.length === 0 || !text.includes('\x1b[90m'))
    throw new Error(`no coloured changes in cdk diff's output:\n${text}`);
  return changes;
}

// eslint-disable-next-line no-control-regex -- the control characters (ESC of a colour code) are what the test looks for
const plainText = (t: string) => t.replace(/\x1b\[[0-9;]*m/g, '').trimEnd();
const sorted = (xs: readonly string[]) => [...xs].sort();

test('the template diff agrees with cdk diff --template: the same changed logical ids and change lines, or both no differences', () => {
  // GIVEN
  const changed = cluster(results.listener, 'prod-eu1');
  const rolled = cluster(results.kubelet, 'edge-ap1');
  const same = cluster(results.maxPods, 'prod-eu1');
  // WHEN
  const cdkChanged = cdkDiff(heads.listener, 'WorkerStack-prod-eu1');
  const cdkRolled = cdkDiff(heads.kubelet, 'WorkerStack-edge-ap1');
  const cdkSame = cdkDiff(heads.maxPods, 'WorkerStack-prod-eu1');
  // THEN
  const ids = (c: ClusterReview) =>
    sorted([...c.template!.resources.map((x) => x.logicalId), ...c.template!.outputs.map((o) => o.name)]);
  const lines = (c: ClusterReview) =>
    sorted(
      c
        .template!.text.split('\n')
        .map(plainText)
        .filter((l) => /^\[[-+~]\] /.test(l)),
    );
  expect(ids(changed).length).toBeGreaterThanOrEqual(3);
  expect(sorted(cdkChanged!.map((x) => x.id))).toEqual(ids(changed));
  expect(lines(changed)).toEqual(sorted(cdkChanged!.map((x) => x.line)));
  expect(rolled.template!.outputs.map((o) => o.name)).toEqual(['ConfigChecksum']);
  expect(sorted(cdkRolled!.map((x) => x.id))).toEqual(ids(rolled));
  // An output is named as cdk diff names it: its construct path, then its logical id.
  expect(lines(rolled)).toEqual(sorted(cdkRolled!.map((x) => x.line)));
  expect(lines(rolled)).toContainEqual(expect.stringMatching(/^\[~\] Output ConfigChecksum ConfigChecksum: /));
  expect(cdkSame).toBeNull();
  expect(same.template!.resources).toEqual([]);
  expect(same.status).toBe('unchanged');
}, 180_000);
