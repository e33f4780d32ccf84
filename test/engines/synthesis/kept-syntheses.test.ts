import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KeptSyntheses } from '../../../lib/engines/synthesis/kept-syntheses';
import type { SynthesizedStack } from '../../../lib/engines/synthesis/synthesize';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kept-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A synthesis as synthesizeStack leaves it: a template and its config object in an assembly directory. */
function synthesis(stackName: string, config: string, opts: { bigTemplate?: boolean } = {}): SynthesizedStack {
  const out = path.join(dir, 'made', stackName);
  fs.mkdirSync(out, { recursive: true });
  const configPath = path.join(out, 'asset.abc.ign');
  fs.writeFileSync(configPath, config);
  const templateBody = JSON.stringify({
    Resources: { R: { Type: 'AWS::SQS::Queue', Properties: { Config: config } } },
  });
  const assets = [{ sourcePath: configPath, bucketName: 'b', objectKey: `k/${config.length}.ign` }];
  if (!opts.bigTemplate) return { stackName, templateBody, assets, durationMs: 12 };
  const templatePath = path.join(out, `${stackName}.template.json`);
  fs.writeFileSync(templatePath, templateBody);
  const templateAsset = { sourcePath: templatePath, bucketName: 'b', objectKey: 'k/template.json' };
  return { stackName, templateBody, assets: [...assets, templateAsset], templateAsset, durationMs: 12 };
}

describe('KeptSyntheses', () => {
  test.each([
    ['a template sent inline', false],
    ['a template sent through S3', true],
  ])(
    'a kept synthesis comes back byte for byte, its files written under the given directory, once: %s',
    (_what, big) => {
      // GIVEN a synthesis kept for its inputs, whose assembly is then removed (as the workflow does)
      const kept = new KeptSyntheses();
      const made = synthesis('WorkerStack-a', 'node config of a '.repeat(100), { bigTemplate: big });
      expect(kept.keep(made, 'fp-1')).toBe(true);
      fs.rmSync(path.join(dir, 'made'), { recursive: true });

      // WHEN the change set's task takes it
      const back = kept.take('WorkerStack-a', 'fp-1', path.join(dir, 'again'))!;

      // THEN the template and every asset are what was synthesized, at new paths, and nothing is left kept
      expect(back.templateBody).toBe(made.templateBody);
      expect(back.assets.map((a) => [a.bucketName, a.objectKey])).toEqual(
        made.assets.map((a) => [a.bucketName, a.objectKey]),
      );
      for (const a of back.assets) expect(path.dirname(a.sourcePath)).toBe(path.join(dir, 'again'));
      expect(fs.readFileSync(back.assets[0].sourcePath, 'utf8')).toBe('node config of a '.repeat(100));
      expect(back.templateAsset?.sourcePath).toBe(big ? back.assets[1].sourcePath : undefined);
      if (big) expect(fs.readFileSync(back.templateAsset!.sourcePath, 'utf8')).toBe(made.templateBody);
      expect(kept.take('WorkerStack-a', 'fp-1', path.join(dir, 'again'))).toBeUndefined();
      expect(kept.size).toBe(0);
    },
  );

  test('a synthesis of other inputs is not given, and is forgotten', () => {
    // GIVEN a synthesis kept for fp-1
    const kept = new KeptSyntheses();
    kept.keep(synthesis('WorkerStack-a', 'one'), 'fp-1');
    // WHEN the stack's inputs are now fp-2
    // THEN nothing is taken, and the stale entry holds no memory
    expect(kept.take('WorkerStack-a', 'fp-2', path.join(dir, 'x'))).toBeUndefined();
    expect(kept.size).toBe(0);
    expect(fs.existsSync(path.join(dir, 'x'))).toBe(false);
  });

  test('a synthesis whose assembly is gone (it was published) is not kept', () => {
    // GIVEN a synthesis whose files publish removed
    const made = synthesis('WorkerStack-a', 'one');
    fs.rmSync(path.join(dir, 'made'), { recursive: true });
    // WHEN it is offered
    const kept = new KeptSyntheses();
    // THEN it is refused, and nothing is held
    expect(kept.keep(made, 'fp-1')).toBe(false);
    expect(kept.size).toBe(0);
  });

  test('the byte bound evicts the least recently kept first; a new synthesis of a stack replaces its old one', () => {
    // GIVEN room for about two syntheses
    const one = new KeptSyntheses({ maxBytes: Number.MAX_SAFE_INTEGER });
    one.keep(synthesis('WorkerStack-probe', 'x'.repeat(50)), 'fp');
    const kept = new KeptSyntheses({ maxBytes: Math.floor(one.size * 2.5) });

    // WHEN three stacks are kept, then the second again with other inputs
    for (const name of ['WorkerStack-a', 'WorkerStack-b', 'WorkerStack-c'])
      expect(kept.keep(synthesis(name, 'x'.repeat(50)), 'fp')).toBe(true);
    kept.keep(synthesis('WorkerStack-b', 'x'.repeat(50)), 'fp-new');

    // THEN the oldest went, and b is held once, for its new inputs
    expect(kept.take('WorkerStack-a', 'fp', path.join(dir, 'a'))).toBeUndefined();
    expect(kept.size).toBeLessThanOrEqual(Math.floor(one.size * 2.5));
    expect(kept.take('WorkerStack-b', 'fp', path.join(dir, 'b'))).toBeUndefined();
    kept.keep(synthesis('WorkerStack-b', 'x'.repeat(50)), 'fp-new');
    expect(kept.take('WorkerStack-b', 'fp-new', path.join(dir, 'b'))).toBeDefined();
    expect(kept.take('WorkerStack-c', 'fp', path.join(dir, 'c'))).toBeDefined();
  });
});
