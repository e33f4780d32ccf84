import * as fs from 'node:fs';
import * as path from 'node:path';
import { clusterReferenceMarkdown } from '../../lib/cluster/reference';
import { runCli } from '../../lib/cli/program';
import { REPO } from '../helpers/clusters';

const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');

test('README opens with the three commands: synthesize the examples, run the tests, the playground', () => {
  // GIVEN
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)![1];
  // WHEN
  const commands = firstBlock.split('\n').filter(Boolean).map((l) => l.replace(/\s+#.*$/, '').trim());
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

test('the field reference in the README is the one generated from the schema', () => {
  // GIVEN
  const m = /<!-- reference:start -->\n([\s\S]*?)<!-- reference:end -->/.exec(readme);
  // THEN (regenerate with: npx worker-stacks schema --markdown)
  expect(m?.[1]).toBe(clusterReferenceMarkdown());
});

test('every `npx worker-stacks` command line in the README names a real command and only flags it accepts', async () => {
  // GIVEN the command lines the README shows (comments and shell continuations dropped)
  const lines = [...readme.matchAll(/^npx worker-stacks (\S+)([^#\n]*)/gm)].map((m) => ({ command: m[1], rest: m[2] }));
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
    if (!sub || !new RegExp(`^ {2}${sub}\\b`, 'm').test(help.get(command)!.split('Commands:')[1] ?? '')) return help.get(command)!;
    const key = `${command} ${sub}`;
    if (!help.has(key)) help.set(key, await read([command, sub]));
    return help.get(key)!;
  };

  // THEN every flag a README line uses is in that command's help
  for (const { command, rest } of lines) {
    const text = await helpOf(command, rest);
    for (const flag of rest.match(/(?<![\w-])--?[a-z][\w-]*/g) ?? []) {
      expect({ command, flag, known: text.includes(flag.replace(/^--no-/, '--')) }).toEqual({ command, flag, known: true });
    }
  }
});

test('the README documents every command of the CLI', async () => {
  // GIVEN the commands the CLI lists in its help
  let text = '';
  await runCli(['--help'], { out: (t) => (text += t), err: (t) => (text += t) });
  const listed = [...text.split('Commands:')[1].matchAll(/^ {2}(\w[\w-]*)/gm)].map((m) => m[1]).filter((c) => c !== 'help');

  // THEN each has at least one README example
  expect(listed.length).toBeGreaterThanOrEqual(8);
  for (const command of listed) expect({ command, documented: readme.includes(`npx worker-stacks ${command}`) }).toEqual({ command, documented: true });
});
