import { LineCounter, parseAllDocuments } from 'yaml';
import { Problem } from '../../core/errors';
import { WorkerCluster } from './schema/schema';

/** A valid cluster object and the file it came from. */
export interface LoadedCluster {
  /** The file as shown to the user. */
  readonly file: string;
  readonly cluster: WorkerCluster;
}

/**
 * Parses YAML text into one plain object, or the problems that stop it. The text is given: reading the file (bounded,
 * never blocking) is lib/platform/files/cluster-files.ts's, so the model does no file I/O.
 */
export function parseClusterYaml(text: string, file: string): { raw?: unknown; problems: Problem[] } {
  // prettyErrors is off (one-line messages), so positions come from our own line counter.
  const lines = new LineCounter();
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false, schema: 'core', lineCounter: lines });
  const list = Array.isArray(docs) ? docs : [docs];
  const at = (offset: number | undefined) => {
    if (offset === undefined) return 'at an unknown line';
    const { line, col } = lines.linePos(offset);
    return `at line ${line}, column ${col}`;
  };
  const problems: Problem[] = list.flatMap((doc) =>
    doc.errors.map((e) => ({
      file,
      path: '',
      message: `YAML syntax error ${at(e.pos[0])}: ${e.message.split('\n')[0]}`,
    })),
  );
  // A warning is never ignored: an unknown tag (`!Ref`, `!Sub` from a CloudFormation habit) is resolved by the parser as
  // a plain string and the tag silently dropped, so the object would say something other than what its author wrote.
  problems.push(
    ...list.flatMap((doc) =>
      doc.warnings.map((w) => ({
        file,
        path: '',
        message: `YAML warning ${at(w.pos[0])}: ${w.message.split('\n')[0]}${/tag/i.test(w.message) ? ' (a cluster object is plain YAML: tags such as !Ref or !Sub are not CloudFormation here; write the literal value)' : ''}`,
      })),
    ),
  );
  if (problems.length) return { problems };
  if (list.length !== 1)
    return {
      problems: [
        { file, path: '', message: `holds ${list.length} YAML documents; put exactly one WorkerCluster in each file` },
      ],
    };
  try {
    return { raw: list[0].toJS({ maxAliasCount: 50 }), problems: [] };
  } catch (e) {
    // An alias to an anchor that is not defined (yet), or an alias bomb over maxAliasCount.
    return { problems: [{ file, path: '', message: `YAML error: ${(e as Error).message.split('\n')[0]}` }] };
  }
}
