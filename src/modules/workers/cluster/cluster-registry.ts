import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomically } from '../../../common/atomic-write.js';
import { PlatformError } from '../../../common/errors.js';
import type { BackupServer, ClusterService, ServiceAddresses } from '../manager-hooks.js';
import type { ClusterNodeView, ClusterSummary, ClusterView, WorkerInfo } from '../cluster-view.js';

/** A joined node as `DATA_DIR/cluster-nodes.json` keeps it. */
export interface ClusterNodeRecord {
  /** `host:port` of the node's admin API. */
  id: string;
  host: string;
  port: number;
  /** The node's X-Cluster-Secret when it differs from ours; null = ours (the shared CLUSTER_SECRET). */
  secret: string | null;
  joined_at: string;
}

/** A node as `GET status` (cluster.members) and `GET cluster/nodes` show it; the secret never leaves. */
export interface ClusterRegistryOptions {
  /** Where joined nodes persist (mode 0600: it may hold secrets). */
  filePath: string;
  /** Our manager secret: sent to nodes joined without a secret of their own. */
  ownSecret: string;
  /** Per request to a node (verify, poll); the original used 5 s. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  now?: () => Date;
  /** Called when the set of healthy remote HTTP workers changes (nginx `backup` servers). */
  onBackupsChanged?: (backups: BackupServer[]) => unknown;
  log?: (line: string) => void;
}

interface NodeState extends ClusterNodeRecord {
  healthy: boolean;
  last_seen: string | null;
  last_poll: string | null;
  last_error: string | null;
  workers: WorkerInfo[];
  /** Where the node's registry and MCP transport listen (null: a manager that does not say). */
  services: ServiceAddresses | null;
}

interface StoredNodes {
  version: 1;
  nodes: ClusterNodeRecord[];
}

/** What `GET cluster/verify` answers: `instance` lets a manager notice that it is asked to join itself. */
export interface VerifyAnswer {
  status: 'ok';
  instance: string;
}

/**
 * The nodes this manager joined: a join verifies the node with its secret
 * (`GET cluster/verify`), every node is polled for its workers (`GET workers`), the healthy HTTP workers of
 * healthy nodes become nginx `backup` servers, a node that fails a poll is unhealthy and its workers drop out.
 * Nodes persist in a file, so a restarted manager keeps its cluster. HTTP and time are injectable.
 */
export class ClusterRegistry implements ClusterView {
  /** A random id per manager process, answered by `cluster/verify`. */
  readonly instance = randomBytes(8).toString('hex');
  private readonly nodesById = new Map<string, NodeState>();
  private readonly fetch: typeof fetch;
  private readonly now: () => Date;
  private readonly timeoutMs: number;
  private lastBackups = '[]';
  private polling: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly options: ClusterRegistryOptions) {
    this.fetch = options.fetch ?? globalThis.fetch;
    this.now = options.now ?? (() => new Date());
    this.timeoutMs = options.timeoutMs ?? 5_000;
  }

  /** Reads the persisted nodes (none when the file does not exist); they stay unhealthy until polled. */
  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.options.filePath, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    let stored: StoredNodes;
    try {
      stored = JSON.parse(text) as StoredNodes;
      if (!Array.isArray(stored.nodes)) throw new Error('no "nodes" list');
    } catch (error) {
      throw new Error(`${this.options.filePath} is not a cluster node list (${(error as Error).message})`);
    }
    for (const node of stored.nodes) this.nodesById.set(node.id, unpolled(node));
  }

  /** Polls every node now and then every `intervalMs`. */
  start(intervalMs: number): void {
    this.stop();
    void this.pollAll();
    this.timer = setInterval(() => void this.pollAll(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * Verifies `host:port` with the secret (the given one, else ours), stores it and polls it once. A node that
   * rejects the secret or does not answer is not stored. Joining a known node again updates its secret.
   */
  async join(input: { host: string; port: number; secret?: string }): Promise<ClusterNodeView> {
    const record: ClusterNodeRecord = {
      id: nodeId(input.host, input.port),
      host: input.host,
      port: input.port,
      secret: input.secret && input.secret !== this.options.ownSecret ? input.secret : null,
      joined_at: this.now().toISOString(),
    };
    const answer = await this.verify(record);
    if (answer.instance === this.instance)
      throw new PlatformError('CONFLICT', `${record.id} is this manager itself: join another node`);
    const known = this.nodesById.get(record.id);
    const node: NodeState = known
      ? { ...known, secret: record.secret }
      : { ...unpolled(record), healthy: true, last_seen: this.now().toISOString() };
    this.nodesById.set(record.id, node);
    await this.save();
    this.options.log?.(`cluster: joined ${record.id}`);
    await this.pollNode(node);
    await this.publishBackups();
    return view(node);
  }

  /** Forgets a node (its workers leave the backups at once). */
  async leave(id: string): Promise<void> {
    if (!this.nodesById.delete(id)) throw new PlatformError('NOT_FOUND', `no cluster node ${id}`);
    await this.save();
    this.options.log?.(`cluster: left ${id}`);
    await this.publishBackups();
  }

  /** One poll of every node (a poll still running is joined, not doubled). */
  pollAll(): Promise<void> {
    this.polling ??= (async () => {
      try {
        await Promise.all([...this.nodesById.values()].map((node) => this.pollNode(node)));
        await this.publishBackups();
      } finally {
        this.polling = null;
      }
    })();
    return this.polling;
  }

  summary(): ClusterSummary {
    const members = this.nodes();
    return { nodes: members.length, healthy_nodes: members.filter((node) => node.healthy).length, members };
  }

  nodes(): ClusterNodeView[] {
    return [...this.nodesById.values()].map(view);
  }

  /** The workers of healthy nodes, each tagged with its node's id. */
  remoteWorkers(): WorkerInfo[] {
    return [...this.nodesById.values()].filter((node) => node.healthy).flatMap((node) => node.workers);
  }

  /**
   * The upstreams' `backup` servers: healthy, running HTTP workers of healthy nodes, and those nodes' registry and
   * MCP transport, all at their node's host. A service that listens on loopback only is left out when the node was
   * joined by another address (it cannot be reached from here).
   */
  backups(): BackupServer[] {
    const servers = new Map<string, BackupServer>();
    for (const node of this.nodesById.values()) {
      if (!node.healthy) continue;
      for (const worker of node.workers)
        if (worker.type === 'http' && worker.state === 'running' && worker.healthy)
          servers.set(nodeId(node.host, worker.port), { host: node.host, port: worker.port });
      for (const [service, listen] of Object.entries(node.services ?? {}) as [
        ClusterService,
        { host: string; port: number },
      ][])
        if (!isLoopback(listen.host) || isLoopback(node.host))
          servers.set(`${service} ${nodeId(node.host, listen.port)}`, { host: node.host, port: listen.port, service });
    }
    return [...servers.values()].sort(
      (a, b) => (a.service ?? '').localeCompare(b.service ?? '') || a.host.localeCompare(b.host) || a.port - b.port,
    );
  }

  private async verify(node: ClusterNodeRecord): Promise<VerifyAnswer> {
    const response = await this.request(node, 'cluster/verify');
    if (response.status === 401 || response.status === 403)
      throw new PlatformError('FORBIDDEN', `${node.id} rejected the secret (CLUSTER_SECRET differs between the nodes)`);
    if (response.status !== 200)
      throw new PlatformError(
        'CLUSTER_NODE_UNREACHABLE',
        `${node.id} answered ${response.status} to cluster/verify: is it a worker manager?`,
      );
    const body = (await response.json().catch(() => null)) as Partial<VerifyAnswer> | null;
    if (body?.status !== 'ok' || typeof body.instance !== 'string')
      throw new PlatformError('CLUSTER_NODE_UNREACHABLE', `${node.id} is not a worker manager (unexpected answer)`);
    return body as VerifyAnswer;
  }

  private async pollNode(node: NodeState): Promise<void> {
    node.last_poll = this.now().toISOString();
    try {
      const response = await this.request(node, 'workers');
      if (response.status !== 200) throw new Error(`GET workers answered ${response.status}`);
      const workers = (await response.json()) as WorkerInfo[];
      if (!Array.isArray(workers)) throw new Error('GET workers did not answer a list');
      // Only the node's own workers: its cluster's workers are reached through that cluster, not re-exported.
      node.workers = workers
        .filter((worker) => worker.node === 'local')
        .map((worker) => ({ ...worker, node: node.id }));
      node.services = await this.services(node);
      if (!node.healthy) this.options.log?.(`cluster: ${node.id} is healthy`);
      node.healthy = true;
      node.last_seen = this.now().toISOString();
      node.last_error = null;
    } catch (error) {
      if (node.healthy) this.options.log?.(`cluster: ${node.id} failed: ${(error as Error).message}`);
      node.healthy = false;
      node.workers = [];
      node.services = null;
      node.last_error = (error as Error).message;
    }
  }

  /** The node's registry and MCP addresses; a manager without the route (an older version) has none to offer. */
  private async services(node: NodeState): Promise<ServiceAddresses | null> {
    const response = await this.request(node, 'cluster/services');
    if (response.status === 404) return null;
    if (response.status !== 200) throw new Error(`GET cluster/services answered ${response.status}`);
    const body = (await response.json()) as Partial<ServiceAddresses> | null;
    const valid = (listen: unknown): listen is { host: string; port: number } =>
      typeof (listen as { host?: unknown })?.host === 'string' &&
      Number.isInteger((listen as { port?: unknown }).port) &&
      (listen as { port: number }).port > 0;
    return valid(body?.registry) && valid(body?.mcp) ? { registry: body.registry, mcp: body.mcp } : null;
  }

  /** GET on a node's admin API with its secret; an unreachable node is a CLUSTER_NODE_UNREACHABLE error. */
  private async request(node: ClusterNodeRecord, path: string): Promise<Response> {
    const host = node.host.includes(':') ? `[${node.host}]` : node.host;
    try {
      return await this.fetch(`http://${host}:${node.port}/api/${path}`, {
        headers: { 'x-cluster-secret': node.secret ?? this.options.ownSecret },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new PlatformError(
        'CLUSTER_NODE_UNREACHABLE',
        `${node.id} does not answer (${cause}): is its manager running, MANAGER_HOST reachable from here and the port open?`,
      );
    }
  }

  private async publishBackups(): Promise<void> {
    const backups = this.backups();
    const key = JSON.stringify(backups);
    if (key === this.lastBackups) return;
    this.lastBackups = key;
    await this.options.onBackupsChanged?.(backups);
  }

  private save(): Promise<void> {
    const stored: StoredNodes = {
      version: 1,
      nodes: [...this.nodesById.values()].map(({ id, host, port, secret, joined_at }) => ({
        id,
        host,
        port,
        secret,
        joined_at,
      })),
    };
    this.saving = this.saving
      .catch(() => undefined)
      .then(() => writeFileAtomically(this.options.filePath, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 }));
    return this.saving;
  }
}

export function nodeId(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function unpolled(record: ClusterNodeRecord): NodeState {
  return { ...record, healthy: false, last_seen: null, last_poll: null, last_error: null, workers: [], services: null };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function view(node: NodeState): ClusterNodeView {
  return {
    id: node.id,
    host: node.host,
    port: node.port,
    healthy: node.healthy,
    joined_at: node.joined_at,
    last_seen: node.last_seen,
    last_poll: node.last_poll,
    last_error: node.last_error,
    workers: node.workers,
  };
}
