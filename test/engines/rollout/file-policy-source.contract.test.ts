import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { FilePolicySource, POLICY_DIR } from '../../../lib/engines/rollout/policy-source';
import { tempDir } from '../../helpers/clusters';
import { policySourceContract, UserPolicy } from './policy-source-contract';

/** The file store's policies under the policy-source contract: a user writes `rollout-policies/<name>.yaml` and deletes it. */
policySourceContract('file', async () => {
  const dir = tempDir('policy-contract');
  const policies = path.join(dir, 'clusters', POLICY_DIR);
  fs.mkdirSync(policies, { recursive: true });
  return {
    source: new FilePolicySource({ clustersDir: path.join(dir, 'clusters'), relativeTo: dir }),
    async put(raw: UserPolicy) {
      // Written as an editor saves: a temp file renamed over the old one.
      const file = path.join(policies, `${raw.metadata.name}.yaml`);
      fs.writeFileSync(`${file}.tmp`, stringify(raw));
      fs.renameSync(`${file}.tmp`, file);
    },
    async remove(name: string) {
      fs.rmSync(path.join(policies, `${name}.yaml`));
    },
    sourceOf: (name: string) => `clusters/${POLICY_DIR}/${name}.yaml`,
    async dispose() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
