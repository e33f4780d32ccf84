#!/usr/bin/env node
// The CDK app: `npx cdk synth` / `cdk deploy WorkerStack-<cluster>` / `cdk diff`.
import * as path from 'node:path';
import { loadValidClusters } from '../lib/cluster/load';
import { DEFAULT_TEMPLATES_DIR, listTemplates } from '../lib/cloudconfig/templates';
import { WorkerStacksError } from '../lib/errors';
import { PROJECT_ROOT } from '../lib/paths';
import { buildFleetApp } from '../lib/stacks/app';

const root = PROJECT_ROOT;
const clustersDir = path.resolve(process.env.WORKER_STACKS_CLUSTERS ?? path.join(root, 'clusters'));
const templatesDir = path.resolve(process.env.WORKER_STACKS_TEMPLATES ?? DEFAULT_TEMPLATES_DIR);

try {
  // Every object is validated before the app exists: an invalid fleet synthesizes nothing.
  const clusters = loadValidClusters(clustersDir, { templates: listTemplates(templatesDir), relativeTo: process.cwd() });
  buildFleetApp({ clusters, templatesDir, nag: process.env.WORKER_STACKS_NAG !== 'false' }).app.synth();
} catch (e) {
  if (e instanceof WorkerStacksError) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
