import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { generateCluster } from '../../../bench/generate-fleet';
import { sha256Hex } from '../../../lib/model/cloudconfig/checksum';
import { workerStackName } from '../../../lib/core/naming';
import { Harness } from '../../fakes/harness';

/**
 * The reconciler's reshaping (issue 11) changes how the steps hand each other what they found, never what reaches
 * CloudFormation: the templates the reconciler deploys for the examples and for a generated fleet are byte-identical
 * to those recorded before the reshaping (golden/templates.json, written by the commit before it). A change to the
 * template code changes them on purpose: run with UPDATE_GOLDEN=1 and say why in the commit.
 */

const GOLDEN = path.join(__dirname, 'golden', 'templates.json');
const EXAMPLES = path.join(__dirname, '..', '..', '..', 'clusters');
const GENERATED = 12;

test('the examples and a generated fleet deploy byte-identical templates to those recorded before the reshaping', async () => {
  // GIVEN the example objects and a generated fleet in one clusters directory
  const h = new Harness({ clusters: [] });
  try {
    // The single-pool examples: the node-pools example (clusters/apps-eu1.yaml) had no template before the reshaping.
    const singlePool = (f: string) => !/^ {2}pools:/m.test(fs.readFileSync(path.join(EXAMPLES, f), 'utf8'));
    for (const f of fs.readdirSync(EXAMPLES).filter((x) => x.endsWith('.yaml') && singlePool(x)))
      fs.copyFileSync(path.join(EXAMPLES, f), path.join(h.clustersDir, f));
    for (let i = 0; i < GENERATED; i++) {
      const raw = generateCluster(i) as { metadata: { name: string } };
      fs.writeFileSync(path.join(h.clustersDir, `${raw.metadata.name}.yaml`), stringify(raw));
    }
    const names = fs
      .readdirSync(h.clustersDir)
      .filter((x) => x.endsWith('.yaml'))
      .map((x) => x.replace(/\.yaml$/, ''))
      .sort();

    // WHEN the reconciler applies them all (every account is the credentials' own)
    const { outcomes } = await h.pass(
      { concurrency: 32 },
      h.deps({ identity: { account: async (c) => c?.account ?? '' } }),
    );

    // THEN each stack's live template is the one recorded
    expect([...outcomes.entries()].filter(([, o]) => o.result !== 'applied')).toEqual([]);
    const hashes: Record<string, string> = {};
    for (const name of names) hashes[name] = sha256Hex((await h.cfn.getTemplate(workerStackName(name))) ?? '');
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(GOLDEN, `${JSON.stringify(hashes, null, 2)}\n`);
    expect(hashes).toEqual(JSON.parse(fs.readFileSync(GOLDEN, 'utf8')));
    expect(Object.keys(hashes)).toHaveLength(GENERATED + 3);
  } finally {
    h.cleanup();
  }
}, 180_000);
