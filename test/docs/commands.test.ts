import * as fs from 'node:fs';
import * as path from 'node:path';
import { REPO } from '../helpers/clusters';
import { DOCS, readDoc } from './docs';

/**
 * Every command line the docs show in a shell block, and where it is run. Two kinds are checked line by line
 * elsewhere: each `kubectl` line is run against a real API server by test/ops/kubectl-readme.test.ts, and each
 * `npx worker-stacks` line must name a real command with only flags its help lists (test/adapters/cli/readme.test.ts). Every
 * other line must match one entry here, which names the file that runs it (and a fragment of that file that does),
 * or says why it cannot run on this machine. A new kind of command in the docs fails this test until it is placed.
 */
interface Placement {
  readonly line: RegExp;
  /** The file that runs such a line, and a fragment of it that shows it does; or why nothing here can run it. */
  readonly runBy: { readonly file: string; readonly fragment: string } | { readonly notRun: string };
}

const PLACED: readonly Placement[] = [
  {
    line: /^npx worker-stacks /,
    runBy: { file: 'test/adapters/cli/readme.test.ts', fragment: 'names a real command and only flags it accepts' },
  },
  {
    line: /(^|\| )kubectl /,
    runBy: { file: 'test/ops/kubectl-readme.test.ts', fragment: 'is run by a test of this file' },
  },
  {
    line: /^npm ci && npx cdk synth$/,
    runBy: { file: 'test/engines/stacks/cdk-cli.test.ts', fragment: "cdk(['synth'" },
  },
  { line: /^npm test$/, runBy: { file: '.ci/run', fragment: 'npm test' } },
  {
    line: /^node scripts\/generate-kubelet-config-fields\.js > lib\/model\/cloudconfig\/kubelet-config-fields\.ts$/,
    runBy: {
      file: 'test/model/cloudconfig/kubelet-config-fields.test.ts',
      fragment: "'generate-kubelet-config-fields.js'",
    },
  },
  {
    line: /^npx prettier --write lib\/model\/cloudconfig\/kubelet-config-fields\.ts$/,
    runBy: { notRun: 'formats the regenerated table; npm test runs prettier --check over the repository' },
  },
  {
    line: /^npm run playground$/,
    runBy: { file: 'test/adapters/playground/playground.test.ts', fragment: "'playground', '--steps'" },
  },
  {
    line: /^npx cdk deploy WorkerStacks-Bootstrap-\d{12}-[a-z0-9-]+$/,
    runBy: { file: 'test/engines/stacks/bootstrap-cdk-deploy.test.ts', fragment: "'deploy'" },
  },
  {
    line: /^npx cdk deploy WorkerStacks-Bootstrap-\d{12}-[a-z0-9-]+ -c worker-stacks:trust=/,
    runBy: { file: 'test/engines/stacks/bootstrap-cdk-deploy-trust.test.ts', fragment: 'worker-stacks:trust=' },
  },
  {
    line: /^npx cdk deploy WorkerStack-[a-z0-9-]+$/,
    runBy: {
      notRun:
        'a worker stack deployed by the CDK CLI to a real account; the same template is synthesized by test/engines/stacks/cdk-cli.test.ts and deployed to moto through the reconciler (test/integration/)',
    },
  },
  {
    line: /^npx cdk diff --template \S+ WorkerStack-[a-z0-9-]+$/,
    runBy: { file: 'test/engines/stacks/cdk-cli.test.ts', fragment: "'diff', '--app', outdir, '--template'" },
  },
  {
    line: /^WORKER_STACKS_CLUSTERS=\S+ npx cdk synth -o \S+$/,
    runBy: { file: 'test/engines/review/assembly-review.test.ts', fragment: 'npx cdk synth -o <dir>' },
  },
  {
    line: /^WORKER_STACKS_CLUSTERS=\S+ npx cdk synth$/,
    runBy: { file: 'test/engines/stacks/cdk-cli.test.ts', fragment: "'WORKER_STACKS_CLUSTERS'" },
  },
  {
    line: /^helm (install|upgrade|uninstall) worker-stacks /,
    runBy: { file: 'test/charts/helm-install.test.ts', fragment: "helmArgs(['install', RELEASE, CHART" },
  },
  {
    line: /^bash scripts\/kube\/build(-kubectl|-helm|-promtool)?\.sh$/,
    runBy: { file: '.ci/install-tools', fragment: 'scripts/kube/build' },
  },
  {
    line: /^python3 -m moto\.server -H 127\.0\.0\.1 -p \d+ &$/,
    runBy: { file: 'test/helpers/moto.ts', fragment: "['-m', 'moto.server']" },
  },
  {
    line: /^export AWS_ENDPOINT_URL=http:\/\/127\.0\.0\.1:\d+ AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=[a-z0-9-]+$/,
    runBy: { file: 'test/helpers/moto.ts', fragment: 'AWS_ENDPOINT_URL' },
  },
  {
    line: /^aws cloudformation describe-stacks /,
    runBy: {
      notRun:
        'the AWS CLI against a real account; the outputs it reads are checked on the synthesized template (test/engines/stacks/)',
    },
  },
  {
    line: /^helm upgrade --install aws-node-termination-handler oci:\/\//,
    runBy: { notRun: "another project's chart from a public registry: no network here" },
  },
];

/** The command lines of a document's ```sh and ```bash blocks: continuations joined, comments and blank lines dropped. */
function commandLines(text: string): string[] {
  const out: string[] = [];
  for (const block of text.matchAll(/```(?:sh|bash)\n([\s\S]*?)```/g)) {
    const joined = block[1].replace(/\\\n\s*/g, ' ');
    for (const raw of joined.split('\n')) {
      const line = raw
        .replace(/(^|\s+)#.*$/, '')
        .replace(/\s+/g, ' ')
        .trim();
      if (line) out.push(line);
    }
  }
  return out;
}

test('every command line in the shell blocks of README.md and docs/ is one a test runs, or says why none can', () => {
  // GIVEN the docs' command lines
  const lines = DOCS.flatMap((doc) => commandLines(readDoc(doc)).map((line) => ({ doc, line })));
  expect(lines.length).toBeGreaterThan(50);
  // WHEN each is placed
  const unplaced = lines.filter(({ line }) => !PLACED.some((p) => p.line.test(line)));
  // THEN none is left over
  expect(unplaced).toEqual([]);
});

test('each place a command is run is a file that runs it, and each entry is still used by the docs', () => {
  // GIVEN the docs' command lines
  const lines = DOCS.flatMap((doc) => commandLines(readDoc(doc)));
  for (const { line, runBy } of PLACED) {
    // THEN an entry matches some line (a removed doc line leaves no stale entry)
    expect({ line: String(line), used: lines.some((l) => line.test(l)) }).toEqual({ line: String(line), used: true });
    // AND the file it names has the fragment that runs it
    if ('file' in runBy) {
      // Whitespace is the formatter's: an argument list may be wrapped over several lines.
      const text = fs.readFileSync(path.join(REPO, runBy.file), 'utf8').replace(/\s+/g, ' ');
      const found = text.includes(runBy.fragment.replace(/\s+/g, ' '));
      expect({ file: runBy.file, fragment: runBy.fragment, found }).toEqual({
        file: runBy.file,
        fragment: runBy.fragment,
        found: true,
      });
    } else {
      expect(runBy.notRun.length).toBeGreaterThan(20);
    }
  }
});
