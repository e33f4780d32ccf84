import { ImageResolver } from '../channel/image-pins';
import { configProblems } from '../cloudconfig/config-problems';
import { RenderedConfig, renderPools } from '../cloudconfig/render';
import { primaryPool } from './pools/pools';
import { Problem, TemplateError } from '../../core/errors';
import { WorkerCluster } from './schema/schema';
import { validateCluster } from './validate';
import { TemplateSource } from '../cloudconfig/template-source';

/**
 * validate → render: the one way an object becomes a cluster and its node config. `validate`, `render`, `status`,
 * the CDK app and the reconciler all derive through here, so an object one of them refuses, they all refuse, with
 * the same file, field path and message.
 */
export type Derivation =
  | {
      readonly cluster: WorkerCluster;
      /** The config of the first pool (the only one of a single-pool cluster). */
      readonly config: RenderedConfig;
      /** Every pool's config, by pool name. */
      readonly configs: ReadonlyMap<string, RenderedConfig>;
      readonly problems?: undefined;
      readonly stage?: undefined;
    }
  | {
      readonly cluster?: WorkerCluster;
      readonly config?: undefined;
      readonly configs?: undefined;
      readonly problems: readonly Problem[];
      readonly stage: 'validate' | 'render';
    };

export interface DeriveOptions {
  /** The object's file (or Kubernetes path), as problems name it. */
  readonly file: string;
  /** Where the templates come from (lib/platform/files/template-directory.ts for a directory). */
  readonly templateSource: TemplateSource;
  /**
   * The template names of templateSource (listTemplates), listed by the caller: deriving reads no directory listing,
   * and a caller that derives many objects lists the templates once.
   */
  readonly templates: ReadonlySet<string>;
  /** The image channels' pins. @default none: a pool that names a channel is refused */
  readonly images?: ImageResolver;
}

export function derive(raw: unknown, opts: DeriveOptions): Derivation {
  const v = validateCluster(raw, {
    file: opts.file,
    templates: opts.templates,
    templateSource: opts.templateSource,
    images: opts.images,
  });
  if (!v.cluster) return { problems: v.problems, stage: 'validate' };
  const r = renderCluster(v.cluster, opts.file, opts.templateSource);
  return 'problems' in r
    ? { cluster: v.cluster, problems: r.problems, stage: 'render' }
    : { cluster: v.cluster, config: r.config, configs: r.configs };
}

/** Renders a validated cluster's node config; a template that does not render is a problem of spec.cloudConfig.template. */
export function renderCluster(
  cluster: WorkerCluster,
  file: string,
  templates: TemplateSource,
):
  | { readonly config: RenderedConfig; readonly configs: ReadonlyMap<string, RenderedConfig> }
  | { readonly problems: readonly Problem[] } {
  try {
    const configs = renderPools(cluster, templates);
    const config = configs.get(primaryPool(cluster.spec).name);
    if (!config) throw new Error(`${cluster.metadata.name}: no config for its first pool`);
    // Rendered but not fit for the node (a NodeConfig nodeadm would take with a setting dropped, a user data EC2 refuses).
    const problems = configProblems(cluster, configs, file, templates.formatScripts);
    return problems.length ? { problems } : { config, configs };
  } catch (e) {
    if (!(e instanceof TemplateError)) throw e;
    return { problems: [renderProblem(e, file)] };
  }
}

export function renderProblem(e: TemplateError, file: string): Problem {
  return { file, path: 'spec.cloudConfig.template', message: `does not render: ${e.message.replace(/\n\s*/g, ' ')}` };
}
