import type { ImageFamily } from '../cluster/schema/pool-schema';
import { NodeConfig } from './node-config';
import type { TemplateSource } from './template-source';

/** Where a pool's nodes send their CloudFormation signal (constant for a pool), and how long they wait to be up. */
export interface SignalTarget {
  readonly region: string;
  readonly stackName: string;
  readonly logicalId: string;
  /** spec.cloudConfig.values.nodeReadyTimeoutSeconds, the pool's own over the cluster's. */
  readonly timeoutSeconds: number;
}

/** What the small user data needs to fetch and verify the big config. */
export interface BootstrapProps {
  /** SHA-256 (hex) of the big config's bytes. */
  readonly checksum: string;
  /** `s3://bucket/key` in every stack; tests use an `http://127.0.0.1:…` URL to run the real boot tools offline. */
  readonly source: string;
  /** The stored bytes as text, for a format whose user data carries the config itself (eks-al2023's NodeConfig part). */
  readonly config?: string;
  /** For a format whose user data carries the node's signal (eks-al2023's signal part): the pool's signal target. */
  readonly signal?: SignalTarget;
  /** For a format whose user data renders scripts of its own (eks-al2023's signal part): where they come from. */
  readonly formatScripts?: TemplateSource;
}

/**
 * One node-config format: how a node configuration becomes the bytes stored in S3, how those bytes read back (for
 * reviews), and the small user data that makes a node fetch and verify them. A new format is one module implementing
 * this plus one entry in `formats.ts`, where the compiler insists every format name has its module.
 */
export interface NodeConfigFormat {
  /** Extension of the stored object and of the config asset (`ign`, `yaml`). */
  readonly extension: string;
  /** Content-Type of the stored object. */
  readonly contentType: string;
  /** Deterministic: the same node config, the same text. */
  serialize(config: NodeConfig): string;
  /** The inverse of `serialize` (files and units; order is normalized by the caller). Throws on bytes of another format. */
  parse(text: string): Omit<NodeConfig, 'format'>;
  /** The small user data: names the content-addressed object, embeds its checksum, refuses other bytes (fail closed). */
  userData(props: BootstrapProps): string;
  /**
   * Checks of the stored bytes stricter than the node agent's own (nodeadm: nodeconfig-rules.ts); validate reports each
   * finding against the object's field that made it. @default none (Ignition and cloud-config are checked by their
   * real tools in tests)
   */
  check?(text: string): ReadonlyArray<{ readonly rule: string; readonly path: string; readonly message: string }>;
  /** Most bytes the user data may have: @default LIMITS.smallUserDataBytes (a bootstrap only); EC2's 16 KB for one that carries the config. */
  readonly userDataBudget?: number;
  /**
   * The machine image families whose boot reads this format's user data: a pool that states another
   * (spec.pool.imageFamily) is refused (rule image-family, config-problems.ts).
   */
  readonly imageFamilies: readonly ImageFamily[];
  /** Its nodes join an EKS cluster with the node role: the shared stack lets that role in (access entry) unless aws-auth. */
  readonly joinsEks?: boolean;
  /**
   * Its nodes send no CloudFormation signal when they are up: a pool of it that waits on signals is refused (rule
   * signals-sent, config-problems.ts), since its creation and every roll would wait out the timeout and roll back.
   * @default false (the node config signals)
   */
  readonly sendsNoSignal?: boolean;
}
