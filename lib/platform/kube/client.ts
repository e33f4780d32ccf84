import * as http from 'node:http';
import * as https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, WorkerStacksError } from '../../core/errors';

/**
 * A small JSON client for the Kubernetes API. `@kubernetes/client-node` reads the kubeconfig (files, in-cluster
 * service account, exec plugins, token refresh) and applies credentials to each request; the requests themselves are
 * plain HTTPS with one keep-alive agent, so a status code (409, 410) and a watch stream are handled here, where the
 * store needs them, not behind a generated API's exceptions.
 */
export interface KubeClientOptions {
  /** A kubeconfig file. @default $KUBECONFIG, ~/.kube/config, or the in-cluster service account */
  readonly kubeconfig?: string;
  /** A context of that kubeconfig. @default its current context */
  readonly context?: string;
  /** Per-request timeout (not for watches, which run until the server ends them). @default 30000 */
  readonly timeoutMs?: number;
}

/** The API server's answer to a request. */
export interface KubeResponse<T = unknown> {
  readonly statusCode: number;
  readonly body: T;
}

/** Loads the kubeconfig through client-node (lazily: a file-store run never loads it). */
export function loadKubeConfig(opts: KubeClientOptions = {}): KubeConfig {
  // client-node 1.x is an ES module; Node 20.19+ requires it synchronously, and only here (a file-store run never loads it).
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a static import would load it on every run
  const k8s = require('@kubernetes/client-node') as typeof import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  if (opts.context) kc.setCurrentContext(opts.context);
  currentCluster(kc, opts.kubeconfig);
  return kc;
}

/** The kubeconfig's current cluster; without one, an error that says which kubeconfig and context. */
function currentCluster(kc: KubeConfig, file?: string): NonNullable<ReturnType<KubeConfig['getCurrentCluster']>> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new WorkerStacksError(
      `no cluster in the kubeconfig${file ? ` ${file}` : ''} (context ${kc.getCurrentContext() || 'none'})`,
      {
        hint: 'pass --kubeconfig <file>, set KUBECONFIG, or run in a pod with a service account',
      },
    );
  }
  return cluster;
}

/** The field manager of every write this client makes (docs/kubernetes.md). */
export const FIELD_MANAGER = 'worker-stacks';

export class KubeClient {
  public readonly server: string;
  private agent?: https.Agent | http.Agent;
  private readonly timeoutMs: number;
  /** Requests sent, by method (GET counts the watches too): tests and the bench count writes with it. */
  public readonly requests: Record<string, number> = {};
  /** The namespace of the kubeconfig's current context (or the pod's), for `--namespace` unset. */
  public readonly defaultNamespace: string;

  constructor(
    private readonly kc: KubeConfig,
    opts: Pick<KubeClientOptions, 'timeoutMs'> = {},
  ) {
    this.server = currentCluster(kc).server.replace(/\/$/, '');
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    const ctx = kc.getContextObject(kc.getCurrentContext());
    this.defaultNamespace = ctx?.namespace || 'default';
  }

  public static fromOptions(opts: KubeClientOptions = {}): KubeClient {
    return new KubeClient(loadKubeConfig(opts), opts);
  }

  /** One JSON request; a non-2xx answer is a KubeApiError (the caller decides what a 404 or 409 means). */
  public async request<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
    accept = 'application/json',
  ): Promise<KubeResponse<T>> {
    const res = await this.send(method, path, body, contentType, this.timeoutMs, undefined, accept);
    const text = await readAll(res);
    const parsed = text ? safeJson(text) : undefined;
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const s = (parsed ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(
        status,
        s.reason ?? http.STATUS_CODES[status] ?? 'Unknown',
        s.message ?? text.slice(0, 300),
        `${method} ${path}`,
      );
    }
    return { statusCode: status, body: parsed as T };
  }

  /**
   * A streaming GET (a watch): each JSON line goes to `onLine`; resolves when the server or `signal` ends the stream.
   * A non-2xx answer rejects with KubeApiError before any line.
   */
  public async stream(path: string, onLine: (obj: unknown) => void, signal: AbortSignal): Promise<void> {
    const res = await this.send('GET', path, undefined, 'application/json', 0, signal);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const text = await readAll(res);
      const s = (safeJson(text) ?? {}) as { reason?: string; message?: string };
      throw new KubeApiError(
        status,
        s.reason ?? http.STATUS_CODES[status] ?? 'Unknown',
        s.message ?? text.slice(0, 300),
        `watch ${path}`,
      );
    }
    await new Promise<void>((resolve, reject) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
          const line = buf.slice(0, i).trim();
          buf = buf.slice(i + 1);
          if (line) {
            const obj = safeJson(line);
            if (obj !== undefined) onLine(obj);
          }
        }
      });
      res.on('end', resolve);
      res.on('close', resolve);
      res.on('error', (e) => (signal.aborted ? resolve() : reject(e)));
    });
  }

  /** Closes idle keep-alive sockets (a CLI command then exits at once). */
  public close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  private async send(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
    timeoutMs: number,
    signal?: AbortSignal,
    accept = 'application/json',
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.server + path);
    this.requests[method] = (this.requests[method] ?? 0) + 1;
    const opts: https.RequestOptions = { method, headers: { accept: 'application/json' } };
    // Credentials (tokens that an exec plugin or a projected service-account token refreshes) are applied per request.
    await this.kc.applyToHTTPSOptions(opts);
    const secure = url.protocol === 'https:';
    this.agent ??= secure
      ? new https.Agent({
          keepAlive: true,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          rejectUnauthorized: opts.rejectUnauthorized,
          servername: opts.servername,
        })
      : new http.Agent({ keepAlive: true });
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    // The API server names the field manager of a write without fieldManager after the user agent (up to its first
    // slash): the daemon's own writes (status, finalizers, pause and retry) show as `worker-stacks` in managedFields.
    const headers: http.OutgoingHttpHeaders = {
      ...(opts.headers as http.OutgoingHttpHeaders),
      accept,
      'user-agent': FIELD_MANAGER,
    };
    if (payload) {
      headers['content-type'] = contentType;
      headers['content-length'] = payload.length;
    }
    if (opts.auth) headers.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    return new Promise((resolve, reject) => {
      const req = (secure ? https : http).request(url, { method, headers, agent: this.agent, signal }, resolve);
      if (timeoutMs > 0)
        req.setTimeout(timeoutMs, () =>
          req.destroy(
            new WorkerStacksError(`${method} ${path}: no answer from ${this.server} in ${timeoutMs} ms`, {
              hint: 'check that the API server is reachable',
            }),
          ),
        );
      req.on('error', reject);
      req.end(payload);
    });
  }
}

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (d: string) => (text += d));
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
