import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';
import { GO_TOOLS, goTool, runOk } from './tools';

// The tools the chart, alert and kubectl tests run are the versions scripts/kube/build-*.sh pin, built from the Go
// module proxy (and stamped with their version, as their own release builds are).

const pinned = (script: string, variable: string) =>
  fs
    .readFileSync(path.join(REPO, 'scripts', 'kube', script), 'utf8')
    .match(new RegExp(`${variable}="\\$\\{${variable}:-([^}]+)\\}"`))![1];

test.each([
  ['kubectl', ['version', '--client'], /^Client Version: v1\.37\.2$/m, pinned('build-kubectl.sh', 'KUBE_VERSION')],
  ['helm', ['version', '--short'], /^v3\.22\.0$/m, pinned('build-helm.sh', 'HELM_VERSION')],
  ['promtool', ['--version'], /^promtool, version 3\.16\.0 /m, pinned('build-promtool.sh', 'PROM_MODULE_VERSION')],
] as const)('%s is the pinned build, where the build script puts it', (name, args, version, pin) => {
  // WHEN
  const out = runOk(goTool(name), args);
  // THEN the binary says its version, and the test looks for it under the version its script pins
  expect(out).toMatch(version);
  expect(GO_TOOLS[name].path.split(path.sep)).toContain(pin);
});
