import * as fs from 'node:fs';
import * as path from 'node:path';
import * as render from '../../../lib/model/cloudconfig/render';
import * as load from '../../../lib/model/cluster/load';
import * as validation from '../../../lib/model/cluster/validate';
import { DerivedCache } from '../../../lib/model/cluster/derived-cache';
import * as synthesis from '../../../lib/engines/synthesis/synthesize';
import { assemblyDir } from '../../../lib/engines/synthesis/assembly-dir';
import { Harness } from '../../fakes/harness';
import { DEFAULT_TEMPLATES_DIR } from '../../../lib/platform/files/template-directory';

/**
 * The daemon's fast path: an unchanged object is neither parsed, rendered nor synthesized again; anything that
 * feeds the template — the spec, the code, a config template — still re-deploys.
 */

// Every render goes through renderPools (one call renders every pool of a cluster; renderConfig is its inner step).
const renders = jest.spyOn(render, 'renderPools');
const synths = jest.spyOn(synthesis, 'synthesizeStack');
const parses = jest.spyOn(load, 'parseClusterYaml');
const validations = jest.spyOn(validation, 'validateCluster');
let h: Harness;
let templatesDir: string;

beforeEach(() => {
  h = new Harness();
  // A private copy of the templates, so that this test can edit one.
  templatesDir = path.join(h.dir, 'cloudconfig');
  fs.cpSync(DEFAULT_TEMPLATES_DIR, templatesDir, { recursive: true });
  renders.mockClear();
  synths.mockClear();
});
afterEach(() => h.cleanup());

/** Deps of one long-running daemon process: the derived cache lives as long as the process. */
const daemonDeps = (code = 'code-v1') => h.deps({ derived: new DerivedCache(), templatesDir, code });

test('an unchanged fleet: the second pass renders, synthesizes and writes nothing', async () => {
  // GIVEN a cluster applied by a first pass
  const deps = daemonDeps();
  expect((await h.pass({}, deps)).outcomes.get('staging-us1')?.result).toBe('applied');
  const writes = h.statusWrites;
  renders.mockClear();
  synths.mockClear();

  // WHEN the same process runs another pass
  const second = await h.pass({}, deps);

  // THEN the cluster is unchanged at the cost of a file read: no render, no synthesis, no write anywhere
  expect(second.outcomes.get('staging-us1')?.result).toBe('unchanged');
  expect(renders).not.toHaveBeenCalled();
  expect(synths).not.toHaveBeenCalled();
  expect(h.statusWrites).toBe(writes);
  expect(h.cfn.count('createChangeSet')).toBe(1);
  expect(h.publisher.uploads).toHaveLength(1);
});

test('a restarted process: an unchanged cluster is not parsed, validated, rendered or synthesized; an edited one is', async () => {
  // GIVEN a cluster applied by one process
  expect((await h.pass({}, daemonDeps())).outcomes.get('staging-us1')?.result).toBe('applied');
  const writes = h.statusWrites;
  for (const spy of [parses, validations, renders, synths]) spy.mockClear();

  // WHEN a new process (new store, new caches) runs its first pass
  const restarted = await h.pass({}, daemonDeps());

  // THEN the cluster is unchanged without any of the work its bytes would need: the state file remembered them
  expect(restarted.outcomes.get('staging-us1')?.result).toBe('unchanged');
  for (const spy of [parses, validations, renders, synths]) expect(spy).not.toHaveBeenCalled();
  expect(h.statusWrites).toBe(writes);

  // WHEN the object is edited and yet another process runs
  h.edit('staging-us1', (raw) => (raw.spec.pool.maxSize = (raw.spec.pool.maxSize as number) + 1));
  const edited = await h.pass({}, daemonDeps());

  // THEN the new bytes are parsed, validated, rendered, synthesized and applied
  expect(edited.outcomes.get('staging-us1')?.result).toBe('applied');
  expect([parses, validations, renders, synths].map((spy) => spy.mock.calls.length)).toEqual([1, 1, 1, 1]);
});

test.each([
  [
    'the cluster spec',
    (d: ReturnType<typeof daemonDeps>) => (
      h.edit('staging-us1', (raw) => (raw.spec.pool.maxSize = (raw.spec.pool.maxSize as number) + 1)),
      d
    ),
    'applied',
  ],
  [
    'a config template',
    (d: ReturnType<typeof daemonDeps>) => (
      fs.appendFileSync(path.join(templatesDir, '_shared', 'sysctl.conf.hbs'), 'vm.swappiness = 1\n'),
      d
    ),
    'applied',
  ],
  ['the code (a new release of the daemon)', () => daemonDeps('code-v2'), 'no-changes'],
])('a change to %s goes through synthesis and a change set again', async (_what, change, expected) => {
  // GIVEN a cluster applied and then found unchanged by the same process
  let deps = daemonDeps();
  await h.pass({}, deps);
  expect((await h.pass({}, deps)).outcomes.get('staging-us1')?.result).toBe('unchanged');
  synths.mockClear();
  const changeSets = h.cfn.count('createChangeSet');

  // WHEN what feeds the template changes, and the next pass runs
  deps = change(deps);
  const after = await h.pass({}, deps);

  // THEN it was synthesized and sent to CloudFormation again (a code change with the same template changes nothing there)
  expect(after.outcomes.get('staging-us1')?.result).toBe(expected);
  expect(synths).toHaveBeenCalledTimes(1);
  expect(h.cfn.count('createChangeSet')).toBe(changeSets + 1);
});

test('the work dir holds no assembly once a reconcile has ended, applied or failed at synthesis', async () => {
  // GIVEN a daemon's deps and its work dir
  const deps = daemonDeps();
  const workDir = deps.workDir;

  // WHEN a cluster is applied, looking at the work dir around the steps
  const seen: Record<string, boolean> = {};
  const look = (when: string) => (task: string) =>
    void (seen[`${when} ${task}`] = fs.existsSync(assemblyDir(workDir, 'staging-us1')));
  const hooks = { before: look('before'), after: look('after') };
  expect((await h.pass({ hooks }, deps)).outcomes.get('staging-us1')?.result).toBe('applied');
  // THEN its assembly (template, config object, manifests) was there for publish, gone before the change set, the
  // execution and the (possibly long) roll that later reconciles record, and is gone at the end
  expect(synths).toHaveBeenCalledTimes(1);
  expect(seen).toMatchObject({
    'after synthesize': true,
    'before publish': true,
    'after publish': false,
    'before change-set': false,
    'after execute': false,
    'before record-execution': false,
  });
  expect(fs.existsSync(assemblyDir(workDir, 'staging-us1'))).toBe(false);

  // WHEN a synthesis fails half-way (after the asset was written)
  h.edit('staging-us1', (raw) => (raw.spec.pool.maxSize = (raw.spec.pool.maxSize as number) + 1));
  synths.mockImplementationOnce((cluster, opts) => {
    fs.mkdirSync(path.join(assemblyDir(opts.workDir, cluster.metadata.name), 'partial'), { recursive: true });
    throw new Error('synthesis failed');
  });
  const failed = await h.pass({}, deps);
  // THEN the failure is recorded and nothing is left behind either
  expect(failed.outcomes.get('staging-us1')?.result).toBe('failed');
  expect(fs.existsSync(assemblyDir(workDir, 'staging-us1'))).toBe(false);
});

test('an assembly that cannot be removed is reported, and the reconcile still ends as it would have', async () => {
  // GIVEN a work dir whose cluster directories cannot be removed (a busy mount, say)
  const deps = daemonDeps();
  // The module object itself (an `import * as` namespace cannot be spied on); lib/ reads through it.
  const fsModule: typeof fs = jest.requireActual('node:fs');
  const rm = fsModule.rmSync;
  const busy = jest.spyOn(fsModule, 'rmSync').mockImplementation((p, o) => {
    if (String(p) === assemblyDir(deps.workDir, 'staging-us1'))
      throw Object.assign(new Error('EBUSY: resource busy or locked'), { code: 'EBUSY' });
    rm(p, o);
  });
  try {
    // WHEN the cluster is applied
    const out = await h.pass({}, deps);
    // THEN it is applied all the same, with a warning that names the directory
    expect(out.outcomes.get('staging-us1')?.result).toBe('applied');
    expect(
      h.log.entries.some(
        (e) => e.level === 'warn' && /could not remove the assembly of staging-us1.*EBUSY/.test(e.msg ?? ''),
      ),
    ).toBe(true);
  } finally {
    busy.mockRestore();
  }
});
