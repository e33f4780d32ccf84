import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as url from 'node:url';
import { REPO } from '../helpers/clusters';

// The layer rules (.dependency-cruiser.cjs, `npm run lint:layers`) can fail: each breach below, added to a tiny tree
// that passes, is reported by the rule meant for it, and by no other.
// (layers-move: leave this file alone. The paths below are the fixture's, already in the layered layout.)

const CONFIG = path.join(REPO, '.dependency-cruiser.cjs');

/** A tree that keeps every rule: one file per layer, each importing the one below. */
const CLEAN: Record<string, string> = {
  'lib/core/errors.ts': 'export class AppError extends Error {}\n',
  'lib/model/cluster/schema.ts':
    "import { AppError } from '../../core/errors';\nexport const schema = (): AppError => new AppError();\n",
  'lib/engines/rollout/report.ts':
    "import { schema } from '../../model/cluster/schema';\nexport const report = () => schema();\n",
  'lib/engines/rollout/index.ts': "export { report } from './report';\n",
  'lib/adapters/cli/program.ts':
    "import { report } from '../../engines/rollout';\nexport const run = () => report();\n",
  'bin/app.ts': "import { run } from '../lib/adapters/cli/program';\nrun();\n",
  'test/helpers/fixture.ts': 'export const fixture = 1;\n',
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'commonjs', moduleResolution: 'node10', strict: true },
    include: ['lib', 'bin', 'test'],
  }),
};

interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
}

/** depcruise's own CLI module (what its bin runs after parsing flags), run on each tree in turn in one process. */
const CLI = path.join(REPO, 'node_modules', 'dependency-cruiser', 'src', 'cli', 'index.mjs');

/**
 * Cruises each tree (the clean one plus `changes`) with the project's rules, as `depcruise lib bin --config
 * .dependency-cruiser.cjs --output-type json` in its directory, and returns each tree's violations. One node process
 * runs depcruise's CLI module on every tree: a process per tree cost ~1.3 s of CPU each, mostly loading depcruise.
 */
function cruiseAll(trees: readonly Record<string, string>[]): Violation[][] {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  try {
    const dirs = trees.map((changes, i) => {
      const dir = path.join(root, String(i));
      for (const [file, text] of Object.entries({ ...CLEAN, ...changes })) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      return dir;
    });
    const script = `
      const { default: cli } = await import(${JSON.stringify(url.pathToFileURL(CLI).href)});
      for (const dir of JSON.parse(process.argv[1])) {
        process.chdir(dir);
        // Its exit code counts the violations; an error (a config it cannot read, say) writes no result.
        await cli(['lib', 'bin'], { config: ${JSON.stringify(CONFIG)}, outputType: 'json', outputTo: 'result.json' });
        if (!(await import('node:fs')).existsSync('result.json')) process.exit(2);
      }`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(dirs)], {
      encoding: 'utf8',
    });
    if (run.status === 2 || run.error) throw new Error(`depcruise failed: ${run.stderr || run.error}`);
    return dirs.map((dir) => {
      const result = JSON.parse(fs.readFileSync(path.join(dir, 'result.json'), 'utf8')) as {
        summary: { violations: { rule: { name: string }; from: string; to: string }[] };
      };
      return result.summary.violations
        .map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }))
        .sort((a, b) => (a.rule + a.from < b.rule + b.from ? -1 : 1));
    });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

test('a tree that keeps the layers passes', () => {
  // GIVEN one file per layer, each importing the layer below WHEN cruised THEN nothing is reported
  expect(cruised[0]).toEqual([]);
});

const BREACHES: { breach: string; changes: Record<string, string>; expected: Violation[] }[] = [
  {
    breach: 'an upward import (the model imports an engine)',
    changes: {
      'lib/model/cluster/schema.ts':
        "import { AppError } from '../../core/errors';\nimport { words } from '../../engines/rollout/words';\nexport const schema = (): AppError => new AppError(words);\n",
      'lib/engines/rollout/words.ts': "export const words = 'in waves';\n",
    },
    expected: [
      {
        rule: 'no-upward-import:model/cluster',
        from: 'lib/model/cluster/schema.ts',
        to: 'lib/engines/rollout/words.ts',
      },
    ],
  },
  {
    breach: 'an upward `import type` (a type in the wrong layer is a concept in the wrong layer)',
    changes: {
      'lib/core/errors.ts':
        "import type { Cli } from '../adapters/cli/types';\nexport class AppError extends Error {}\nexport type C = Cli;\n",
      'lib/adapters/cli/types.ts': 'export type Cli = string;\n',
    },
    expected: [{ rule: 'no-upward-import:core', from: 'lib/core/errors.ts', to: 'lib/adapters/cli/types.ts' }],
  },
  {
    breach: 'an import up a tier inside a layer (rollout imports the reconciler)',
    changes: {
      'lib/engines/rollout/report.ts':
        "import { wiring } from '../reconciler/runtime/wiring';\nexport const report = () => wiring;\n",
      'lib/engines/reconciler/runtime/wiring.ts':
        "import { schema } from '../../../model/cluster/schema';\nexport const wiring = schema;\n",
    },
    expected: [
      {
        rule: 'no-upward-import:engines/rollout',
        from: 'lib/engines/rollout/report.ts',
        to: 'lib/engines/reconciler/runtime/wiring.ts',
      },
    ],
  },
  {
    breach: 'an import up a tier inside the reconciler (a task imports the workflows it is composed into)',
    changes: {
      'lib/engines/reconciler/tasks/render.ts':
        "import { APPLY } from '../compose/workflow';\nexport const render = () => APPLY;\n",
      'lib/engines/reconciler/compose/workflow.ts':
        "import { schema } from '../../../model/cluster/schema';\nexport const APPLY = schema;\n",
      'lib/engines/rollout/report.ts':
        "import { render } from '../reconciler/tasks/render';\nexport const report = () => render;\n",
    },
    expected: [
      {
        rule: 'no-upward-import:engines/reconciler/tasks',
        from: 'lib/engines/reconciler/tasks/render.ts',
        to: 'lib/engines/reconciler/compose/workflow.ts',
      },
      {
        rule: 'no-upward-import:engines/rollout',
        from: 'lib/engines/rollout/report.ts',
        to: 'lib/engines/reconciler/tasks/render.ts',
      },
    ],
  },
  {
    breach: 'a file beside the tier folders of a layer (lib/engines/reconciler/x.ts has no tier)',
    changes: {
      'lib/engines/reconciler/loose.ts':
        "import { schema } from '../../model/cluster/schema';\nexport const loose = schema;\n",
      'bin/app.ts':
        "import { run } from '../lib/adapters/cli/program';\nimport { loose } from '../lib/engines/reconciler/loose';\nrun();\nloose();\n",
    },
    expected: [{ rule: 'in-a-layer', from: 'lib/engines/reconciler/loose.ts', to: 'lib/model/cluster/schema.ts' }],
  },
  {
    breach: 'an adapter reaching into an engine past its front door (lib/engines/<engine>/index.ts)',
    changes: {
      'lib/adapters/cli/program.ts':
        "import { report } from '../../engines/rollout';\nimport { words } from '../../engines/rollout/words';\nexport const run = () => report() && words;\n",
      'lib/engines/rollout/words.ts': "export const words = 'in waves';\n",
    },
    expected: [
      {
        rule: 'through-the-front-door',
        from: 'lib/adapters/cli/program.ts',
        to: 'lib/engines/rollout/words.ts',
      },
    ],
  },
  {
    breach: 'the model reading a file (issue 34: model/ is free of file I/O)',
    changes: {
      'lib/model/cluster/schema.ts':
        "import * as fs from 'node:fs';\nimport { AppError } from '../../core/errors';\nexport const schema = (): AppError => new AppError(fs.readFileSync('x', 'utf8'));\n",
    },
    expected: [{ rule: 'no-file-io-in-model', from: 'lib/model/cluster/schema.ts', to: 'fs' }],
  },
  {
    breach: 'the model reading a file with fs/promises',
    changes: {
      'lib/model/cluster/schema.ts':
        "import { readFile } from 'fs/promises';\nimport { AppError } from '../../core/errors';\nexport const schema = (): AppError => new AppError(String(readFile));\n",
    },
    expected: [{ rule: 'no-file-io-in-model', from: 'lib/model/cluster/schema.ts', to: 'fs/promises' }],
  },
  {
    breach: 'the model running a process',
    changes: {
      'lib/model/cluster/schema.ts':
        "import { execFileSync } from 'node:child_process';\nimport { AppError } from '../../core/errors';\nexport const schema = (): AppError => new AppError(String(execFileSync));\n",
    },
    expected: [{ rule: 'no-file-io-in-model', from: 'lib/model/cluster/schema.ts', to: 'child_process' }],
  },
  {
    breach: 'two files that import each other',
    changes: {
      'lib/engines/rollout/a.ts':
        "import type { B } from './b';\nimport { report } from './report';\nexport interface A { b?: B }\nexport const a = report;\n",
      'lib/engines/rollout/b.ts': "import type { A } from './a';\nexport interface B { a?: A }\n",
    },
    // (one report per cycle, at the edge where the cruise closed it)
    expected: [{ rule: 'no-circular', from: 'lib/engines/rollout/a.ts', to: 'lib/engines/rollout/b.ts' }],
  },
  {
    breach: 'a file nothing imports and that imports nothing',
    changes: { 'lib/engines/review/dead.ts': 'export const dead = 1;\n' },
    expected: [{ rule: 'no-orphans', from: 'lib/engines/review/dead.ts', to: 'lib/engines/review/dead.ts' }],
  },
  {
    breach: 'production code importing a test helper',
    changes: {
      'lib/adapters/cli/program.ts':
        "import { report } from '../../engines/rollout';\nimport { fixture } from '../../../test/helpers/fixture';\nexport const run = () => report() && fixture;\n",
    },
    expected: [{ rule: 'not-to-test', from: 'lib/adapters/cli/program.ts', to: 'test/helpers/fixture.ts' }],
  },
  {
    breach: 'a concern folder outside the layer folders',
    changes: {
      'lib/cluster/load.ts': "import { schema } from '../model/cluster/schema';\nexport const load = schema;\n",
      'bin/app.ts':
        "import { run } from '../lib/adapters/cli/program';\nimport { load } from '../lib/cluster/load';\nrun();\nload();\n",
    },
    expected: [{ rule: 'in-a-layer', from: 'lib/cluster/load.ts', to: 'lib/model/cluster/schema.ts' }],
  },
];

/** The clean tree's violations, then each breach's, in BREACHES order. */
let cruised: Violation[][];
beforeAll(() => {
  cruised = cruiseAll([{}, ...BREACHES.map((b) => b.changes)]);
}, 120_000);

test.each(BREACHES.map((b, i) => ({ ...b, i })))('$breach is reported', ({ i, expected }) => {
  // GIVEN the clean tree with one breach WHEN cruised with the project's rules THEN exactly that breach is reported
  expect(cruised[i + 1]).toEqual(expected);
});
