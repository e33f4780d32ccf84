import * as fs from 'node:fs';
import * as path from 'node:path';
import { clusterReferenceMarkdown } from '../../../lib/model/cluster/reference';
import { defaultTemplates } from '../../../lib/platform/files/template-directory';
import { clusterRulesMarkdown } from '../../../lib/model/cluster/rules/rules-reference';
import { runCli } from '../../../lib/adapters/cli/program';
import { REPO } from '../../helpers/clusters';
import { DOCS, markedBlock, readDoc } from '../../docs/docs';

const readme = readDoc('README.md');
/** README.md and every page of docs/: where the commands a user may type are shown. */
const docs = DOCS.map(readDoc).join('\n');

test('README opens with the three commands: synthesize the examples, run the tests, the playground', () => {
  // GIVEN
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1];
  // WHEN
  const commands = firstBlock
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/\s+#.*$/, '').trim());
  // THEN
  expect(readme.indexOf('```sh')).toBeLessThan(readme.indexOf('\n## '));
  expect(commands).toEqual(['npm ci && npx cdk synth', 'npm test', 'npm run playground']);
});

test('CI runs exactly the test command the README gives', () => {
  // GIVEN
  const ci = fs.readFileSync(path.join(REPO, '.ci', 'run'), 'utf8');
  // THEN
  expect(ci.trim().split('\n').pop()).toBe('npm test');
  expect(ci).toMatch(/^npm ci\b/m);
});

test('the field reference in docs/reference.md is the one generated from the schema, and README links to it', () => {
  // GIVEN
  const block = markedBlock(readDoc(path.join('docs', 'reference.md')), 'reference');
  // THEN (regenerate with: npx worker-stacks schema --markdown)
  expect(block).toBe(clusterReferenceMarkdown(defaultTemplates()));
  // AND README's section of that name (validation messages send users there) leads to it
  const section = readme.slice(readme.indexOf('\n## Cluster object reference\n'));
  expect(section).toMatch(/^\n## Cluster object reference\n[\s\S]*\]\(docs\/reference\.md\)/);
});

test('the table of named rules in docs/reference.md is the one generated from the registry', () => {
  // GIVEN
  const block = markedBlock(readDoc(path.join('docs', 'reference.md')), 'rules');
  // THEN (regenerate with: npx worker-stacks schema --rules)
  expect(block).toBe(clusterRulesMarkdown());
});

test('every `npx worker-stacks` command line in README.md and docs/ names a real command and only flags it accepts', async () => {
  // GIVEN the command lines the docs show (comments, shell continuations and what a pipe feeds dropped)
  const lines = [...docs.matchAll(/^npx worker-stacks (\S+)([^#|\n]*)/gm)].map((m) => ({ command: m[1], rest: m[2] }));
  expect(lines.length).toBeGreaterThan(10);
  const commands = new Set(lines.map((l) => l.command));

  // WHEN each command's --help is read from the real CLI (a subcommand's, for `rollout status` and the like)
  const help = new Map<string, string>();
  const read = async (words: string[]) => {
    let text = '';
    const code = await runCli([...words, '--help'], { out: (t) => (text += t), err: (t) => (text += t) });
    expect({ command: words.join(' '), code }).toEqual({ command: words.join(' '), code: 0 });
    return text;
  };
  for (const command of commands) help.set(command, await read([command]));
  const helpOf = async (command: string, rest: string) => {
    const sub = /^\s+([a-z][\w-]*)/.exec(rest)?.[1];
    if (!sub || !new RegExp(`^ {2}${sub}\\b`, 'm').test(help.get(command)!.split('Commands:')[1] ?? ''))
      return help.get(command)!;
    const key = `${command} ${sub}`;
    if (!help.has(key)) help.set(key, await read([command, sub]));
    return help.get(key)!;
  };

  // THEN every flag a docs line uses is in that command's help
  for (const { command, rest } of lines) {
    const text = await helpOf(command, rest);
    for (const flag of rest.match(/(?<![\w-])--?[a-z][\w-]*/g) ?? []) {
      expect({ command, flag, known: text.includes(flag.replace(/^--no-/, '--')) }).toEqual({
        command,
        flag,
        known: true,
      });
    }
  }
});

test('README.md and docs/ document every command of the CLI', async () => {
  // GIVEN the commands the CLI lists in its help
  let text = '';
  await runCli(['--help'], { out: (t) => (text += t), err: (t) => (text += t) });
  const listed = [...text.split('Commands:')[1].matchAll(/^ {2}(\w[\w-]*)/gm)]
    .map((m) => m[1])
    .filter((c) => c !== 'help');

  // THEN each has at least one example in the docs
  expect(listed.length).toBeGreaterThanOrEqual(8);
  for (const command of listed)
    expect({ command, documented: docs.includes(`npx worker-stacks ${command}`) }).toEqual({
      command,
      documented: true,
    });
});
