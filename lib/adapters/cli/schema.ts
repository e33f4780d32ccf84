import { clusterJsonSchema, clusterReferenceMarkdown } from '../../model/cluster/reference';
import { clusterRulesMarkdown } from '../../model/cluster/rules/rules-reference';
import { EXIT, Io } from './context';
import { defaultTemplates } from '../../platform/files/template-directory';

/** `worker-stacks schema`: the cluster object's JSON Schema, its markdown field reference, or its named rules. */
export function schemaCommand(io: Io, opts: { markdown?: boolean; rules?: boolean } = {}): number {
  if (opts.rules) io.out(clusterRulesMarkdown());
  else
    io.out(
      opts.markdown
        ? clusterReferenceMarkdown(defaultTemplates())
        : JSON.stringify(clusterJsonSchema(), undefined, 2) + '\n',
    );
  return EXIT.ok;
}
