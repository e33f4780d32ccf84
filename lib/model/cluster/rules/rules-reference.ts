import { CelTwin } from './cluster-rule';
import { CLUSTER_RULES } from './rule-registry';

/** What the reference says of a rule's CEL twin. */
function celCell(cel: CelTwin): string {
  if (cel === 'crd') return 'yes';
  return 'partly' in cel ? `partly: ${cel.partly}` : `no: ${cel.none}`;
}

/**
 * The table of named rules in docs/reference.md ("Rules beyond the types"), generated from the registry so that the
 * two cannot drift (a test compares them; regenerate with `npx worker-stacks schema --rules`).
 */
export function clusterRulesMarkdown(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = CLUSTER_RULES.map(
    (r) => `| \`${r.id}\` | ${r.paths.map((p) => `\`${p}\``).join(', ')} | ${cell(r.says)} | ${cell(celCell(r.cel))} |`,
  );
  return (
    ['| rule | fields | what it requires | the API server too (CEL) |', '| --- | --- | --- | --- |', ...rows].join(
      '\n',
    ) + '\n'
  );
}
