import type { WorkerMetricsView } from './metrics-collector.js';
import type { WorkerRecord, WorkerType } from './worker-manager.js';

/**
 * What the manager shows of a worker and of the other nodes of its cluster. These shapes sit between the manager
 * process, which reports them, and the cluster registry, which polls them from the other nodes, so that neither of
 * the two imports the other.
 */
/** A worker as the admin API shows it: the record plus type, node, uptime and metrics. */
export interface WorkerInfo extends WorkerRecord {
  worker_type: WorkerType;
  node: string;
  uptime: number | null;
  metrics: WorkerMetricsView;
}

/** A remote node's workers and health, as the cluster poller (cluster/cluster-registry.ts) last saw them. */
export interface ClusterView {
  summary(): ClusterSummary;
  remoteWorkers(): WorkerInfo[];
}

export interface ClusterNodeView {
  id: string;
  host: string;
  port: number;
  healthy: boolean;
  joined_at: string;
  last_seen: string | null;
  last_poll: string | null;
  last_error: string | null;
  /** The node's own workers as its last successful poll reported them (empty while it is unhealthy). */
  workers: WorkerInfo[];
}

export interface ClusterSummary {
  nodes: number;
  healthy_nodes: number;
  members: ClusterNodeView[];
}
