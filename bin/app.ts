#!/usr/bin/env node
// The CDK app: `npx cdk synth` / `cdk deploy WorkerStack-<cluster>` / `cdk diff`.
import * as path from 'node:path';
import { loadValidClusters } from '../lib/platform/files/load-clusters';
import { listTemplates } from '../lib/model/cloudconfig/templates';
import { DEFAULT_TEMPLATES_DIR, templateDirectory } from '../lib/platform/files/template-directory';
import { terminalText } from '../lib/adapters/cli/terminal-text';
import { formatProblem, UsageError, WorkerStacksError } from '../lib/core/errors';
import { PROJECT_ROOT } from '../lib/core/paths';
import { appInputDirs } from '../lib/engines/stacks/app';
import { synthesizeFleet } from '../lib/engines/synthesis/synth-fleet';
import { FileChannelStore } from '../lib/engines/channels';
import { imageResolver } from '../lib/model/channel/image-pins';

try {
  const { clustersDir, templatesDir } = appInputDirs(process.env, {
    clustersDir: path.join(PROJECT_ROOT, 'clusters'),
    templatesDir: DEFAULT_TEMPLATES_DIR,
  });
  // Every object is validated before the app exists: an invalid fleet synthesizes nothing.
  // A pool on an image channel synthesizes with the release the daemon (or `channels refresh`) recorded as pinned.
  const clusters = loadValidClusters(clustersDir, {
    templates: listTemplates(templateDirectory(templatesDir)),
    relativeTo: process.cwd(),
    images: imageResolver(new FileChannelStore({ clustersDir }).loadSync().channels),
  });
  // All or nothing: a fleet cdk-nag refuses writes no assembly, and each refusal names its file and field.
  const synth = synthesizeFleet({ clusters, templatesDir, nag: process.env.WORKER_STACKS_NAG !== 'false' });
  if (synth.output.length) process.stderr.write(terminalText(`${synth.output.join('\n')}\n`));
  if (synth.problems.length) {
    process.stderr.write(terminalText(`${synth.problems.map(formatProblem).join('\n')}\n`));
    process.stderr.write(
      'nothing was synthesized: fix the objects above (`npx worker-stacks validate` names the same)\n',
    );
    process.exitCode = 1;
  }
} catch (e) {
  if (e instanceof UsageError) {
    // One line: the variable, what is wrong, the fix (the CDK CLI adds only its own "exited with error" line).
    process.stderr.write(terminalText(`error: ${e.message.split('\n')[0]}; fix: ${e.hint}\n`));
    // The exit code, not process.exit(): the process ends when stderr is written out (a pipe may hold it back).
    process.exitCode = 2;
  } else if (e instanceof WorkerStacksError) {
    process.stderr.write(terminalText(`${e.message}\n`));
    process.exitCode = 1;
  } else {
    throw e;
  }
}
