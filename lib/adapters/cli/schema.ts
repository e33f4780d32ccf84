import { clusterJsonSchema, clusterReferenceMarkdown } from '../../model/cluster/reference';
import { EXIT, Io } from './context';

/** `worker-stacks schema`: the cluster object's JSON Schema, or its markdown field reference. */
export function schemaCommand(io: Io, opts: { markdown?: boolean } = {}): number {
  io.out(opts.markdown ? clusterReferenceMarkdown() : JSON.stringify(clusterJsonSchema(), undefined, 2) + '\n');
  return EXIT.ok;
}
