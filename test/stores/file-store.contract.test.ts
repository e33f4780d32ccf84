import * as fs from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import { FileStore } from '../../lib/stores/file-store';
import { tempDir } from '../helpers/clusters';
import { storeContract, UserObject } from './store-contract';

/** The file store under the store contract: a user writes `<name>.yaml` files and deletes them. */
storeContract('file', async () => {
  const dir = tempDir('file-contract');
  return {
    store: new FileStore({ clustersDir: dir, relativeTo: dir }),
    async put(raw: UserObject) {
      // Written as an editor saves: a temp file renamed over the old one.
      const file = path.join(dir, `${raw.metadata.name}.yaml`);
      fs.writeFileSync(`${file}.tmp`, stringify(raw));
      fs.renameSync(`${file}.tmp`, file);
    },
    async remove(name: string) {
      fs.rmSync(path.join(dir, `${name}.yaml`));
    },
    async dispose() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});
