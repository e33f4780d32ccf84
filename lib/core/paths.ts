import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The project's root (where package.json is), found from this file whether it
 * runs as TypeScript from lib/ or as the precompiled JavaScript in build/lib/:
 * templates, examples and the code fingerprint are always read from the sources.
 */
export const PROJECT_ROOT = findRoot(__dirname);

function findRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'cloudconfig'))) return dir;
    if (path.dirname(dir) === dir)
      throw new Error(`no worker-stacks project (package.json beside cloudconfig/) above ${from}`);
  }
}
