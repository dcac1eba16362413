/**
 * @module manager-options — what a {@link Manager} is built from: the client, its servers, leader election,
 * shutdown and start-up bounds, the clock and the process monitors.
 */
import type { KubeClient } from '../client/kube-client.ts'
import type { Clock } from '../core/clock.ts'
import type { Logger } from '../core/log.ts'
import type { EventLoopLag } from '../health/health-checks.ts'
import type { ResourceLock } from '../leader/lock.ts'
import type { HeapAfterGc } from '../metrics/heap-after-gc.ts'
import type { MetricsRegistry } from '../metrics/metrics-registry.ts'
import type { SecureMetricsOptions } from '../server/ops-server.ts'
import type { Tracer } from '../tracing/tracer.ts'

/** Leader election settings. */
export interface LeaderElectionOptions {
  /** Lease name (`--leader-election-id`); also the `name` label of `leader_election_master_status`. */
  name: string
  /** Namespace of the Lease. */
  namespace: string
  /** Default `<hostname>_<random>` (client-go convention). Ignored when `lock` is given. */
  identity?: string
  /** How long a lease is valid without renewal. Default the elector's (15 s). */
  leaseDurationMs?: number
  /** How long the leader keeps trying to renew before giving up. Default the elector's (10 s). */
  renewDeadlineMs?: number
  /** Wait between attempts to acquire or renew. Default the elector's (2 s); also the {@link Shard}'s period. */
  retryPeriodMs?: number
  /**
   * Shard instead of electing one leader: `name` names a ring, every replica holds its own Lease
   * `<name>-<id>` and runs the controllers on its share of the objects ({@link Manager.shard}).
   */
  sharding?: boolean
  /**
   * Where the leader record lives. Default: a `LeaseLock` on `namespace/name` through the manager's
   * client. Tests pass an in-memory lock.
   */
  lock?: ResourceLock
}

/** Starts the process monitors that run while {@link Manager.run} does (a seam for tests). */
export interface ProcessMonitorFactories {
  /** Default: `monitorEventLoopLag({ clock })` (Node's `monitorEventLoopDelay`). */
  eventLoopLag?: (clock: Clock) => EventLoopLag
  /** Default: `monitorHeapAfterGc()` (a `PerformanceObserver` on GC entries). */
  heapAfterGc?: () => HeapAfterGc
}

/** Options of {@link Manager}. */
export interface ManagerOptions {
  /** The client informers, discovery and the default Lease lock use. */
  client: KubeClient
  /** The registry metrics go to; pass the one the client's request observer writes to. */
  registry?: MetricsRegistry
  /** Default {@link defaultLogger}: warnings and errors as JSON lines on stderr. */
  logger?: Logger
  /** `"0"` disables; default `:8080`. */
  metricsBindAddress?: string
  /** `"0"` disables; default `:8081`. */
  healthProbeBindAddress?: string
  /**
   * Serve `/metrics` over HTTPS to scrapers the apiserver authenticates and authorizes (a
   * `TokenReview` and a `SubjectAccessReview` through `client`, which needs `create` on both); `{}`
   * serves a self-signed certificate. Absent: plain HTTP to anyone (controller-runtime's default).
   */
  secureMetrics?: Pick<SecureMetricsOptions, 'certDir' | 'certName' | 'keyName' | 'reloadIntervalMs'>
  /** Absent: no leader election (every replica runs the controllers: node agents). */
  leaderElection?: LeaderElectionOptions
  /** How long in-flight reconciles may take once stopping. Default {@link DEFAULT_SHUTDOWN_GRACE_PERIOD_MS}. */
  shutdownGracePeriodMs?: number
  /** How long `run` waits for the caches. Default {@link DEFAULT_CACHE_SYNC_TIMEOUT_MS}. */
  cacheSyncTimeoutMs?: number
  /**
   * Time source of the informers, the elector, the controllers built by {@link Manager.add}, the
   * grace period, start-up checks and the event-loop monitor. Default: real time.
   */
  clock?: Clock
  /** The process monitors. Default: Node's. */
  monitors?: ProcessMonitorFactories
  /**
   * The namespaces the {@link Manager.factory}'s informers watch when their spec names none
   * (controller-runtime's `cache.Options.DefaultNamespaces`, `--namespace`). Default: all.
   */
  namespaces?: readonly string[]
  /**
   * Workers of each controller {@link Manager.add} builds from options that set none
   * (`--max-concurrent-reconciles`). Default: the controller's (1).
   */
  maxConcurrentReconciles?: number
  /** Traces the reconciles of every controller {@link Manager.add} is given that has no tracer of its own. Default: none. */
  tracer?: Tracer
}
