/**
 * @module manager — runs informers, controllers, leader election, metrics and probes as one process.
 *
 * The lifecycle is controller-runtime's (`pkg/manager`):
 * - caches start on every replica, so a standby takes over with warm caches;
 * - controllers run only while this replica leads (or always, without leader election:
 *   node agents are each their own shard);
 * - on shutdown: controllers stop taking work and in-flight reconciles get the grace
 *   period; then the Lease is released (when held), then informers and the probe/metrics
 *   servers stop;
 * - when leadership is *lost* (renewal failed for the renew deadline), `run` rejects with
 *   `EDGEOP_ERR_LEADER`; the binary exits non-zero so the pod restarts clean.
 */
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { InformerFactory } from '../cache/factory.ts'
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../client/resource.ts'
import type { Controller } from '../controller/controller.ts'
import { realClock, sleep } from '../core/clock.ts'
import { errorMessage, isEdgeopError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import type { Lease } from '../core/types.ts'
import { LeaderElector } from '../leader/elector.ts'
import { LeaseLock } from '../leader/lease-lock.ts'
import {
  eventLoopCheck,
  HealthChecks,
  informersCheck,
  leaderCheck,
  monitorEventLoopLag,
  ping,
} from '../observability/health-checks.ts'
import { monitorHeapAfterGc } from '../observability/heap-after-gc.ts'
import { defaultLogger } from '../observability/logger.ts'
import { MetricsRegistry } from '../observability/metrics-registry.ts'
import { startOpsServer } from '../observability/ops-server.ts'
import {
  informerMetrics,
  leaderElectionMetrics,
  processMetrics,
  reconcileMetrics,
  workqueueMetrics,
} from '../observability/runtime-metrics.ts'
import { findUnserved, UnservedResourcesError } from './served-resources.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS, withGracePeriod } from './shutdown.ts'

/** How long to wait for caches before giving up at start: 2 min (controller-runtime `CacheSyncTimeout`). */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000

/**
 * How long a watched resource must stay missing from discovery before start-up fails: 3 s. A CRD
 * applied in the same `kubectl apply` as the operator is usually served within a second of its
 * creation (it becomes Established, then each apiserver's discovery picks it up); 3 s covers that
 * and still fails in seconds rather than after the cache sync timeout.
 */
export const UNSERVED_CONFIRM_DELAY_MS = 3_000

/** Leader election settings. */
export interface LeaderElectionOptions {
  /** Lease name (`--leader-election-id`). */
  name: string
  namespace: string
  /** Default `<hostname>_<random>` (client-go convention). */
  identity?: string
  leaseDurationMs?: number
  renewDeadlineMs?: number
  retryPeriodMs?: number
}

/** Options of {@link Manager}. */
export interface ManagerOptions {
  client: KubeClient
  /** The registry metrics go to; pass the one the client's request observer writes to. */
  registry?: MetricsRegistry
  /** Default {@link defaultLogger}: warnings and errors as JSON lines on stderr. */
  logger?: Logger
  /** `"0"` disables; default `:8080`. */
  metricsBindAddress?: string
  /** `"0"` disables; default `:8081`. */
  healthProbeBindAddress?: string
  leaderElection?: LeaderElectionOptions
  shutdownGracePeriodMs?: number
  cacheSyncTimeoutMs?: number
}

/**
 * The process-wide runtime. Build controllers with {@link controllerHooks} (metrics wired),
 * register them with {@link add}, then {@link run}.
 */
export class Manager {
  readonly client: KubeClient
  readonly factory: InformerFactory
  readonly registry: MetricsRegistry
  readonly healthz = new HealthChecks('healthz')
  readonly readyz = new HealthChecks('readyz')
  readonly elector: LeaderElector | undefined
  readonly #o: ManagerOptions
  readonly #log: Logger
  readonly #controllers: Controller[] = []
  readonly #onStop: (() => Promise<void> | void)[] = []

  constructor(options: ManagerOptions) {
    this.#o = options
    this.client = options.client
    this.registry = options.registry ?? new MetricsRegistry()
    this.#log = options.logger ?? defaultLogger()
    this.factory = new InformerFactory(options.client, { logger: this.#log })
    const le = options.leaderElection
    if (le) {
      const identity =
        le.identity ?? `${process.env.HOSTNAME || hostname()}_${randomBytes(4).toString('hex')}`
      const lock = new LeaseLock(
        {
          get: (name, o) => options.client.resource<Lease>(CORE_TYPES.leases, le.namespace).get(name, o),
          create: (lease, o) =>
            options.client.resource<Lease>(CORE_TYPES.leases, le.namespace).create(lease, o),
          update: (lease, o) =>
            options.client.resource<Lease>(CORE_TYPES.leases, le.namespace).update(lease, o),
        },
        { namespace: le.namespace, name: le.name, identity },
      )
      this.elector = new LeaderElector({
        lock,
        releaseOnCancel: true,
        logger: this.#log,
        onNewLeader: (id) => this.#log.info('leader observed', { leader: id || '(none)' }),
        ...(le.leaseDurationMs === undefined ? {} : { leaseDurationMs: le.leaseDurationMs }),
        ...(le.renewDeadlineMs === undefined ? {} : { renewDeadlineMs: le.renewDeadlineMs }),
        ...(le.retryPeriodMs === undefined ? {} : { retryPeriodMs: le.retryPeriodMs }),
      })
      leaderElectionMetrics(this.registry, le.name, () => this.elector?.isLeader() ?? false)
      this.readyz.add('leader-election', leaderCheck(this.elector))
    }
    const lag = monitorEventLoopLag()
    this.#onStop.push(() => lag.stop())
    this.healthz.add('ping', ping)
    this.healthz.add('event-loop', eventLoopCheck(lag))
    this.readyz.add(
      'informers',
      informersCheck(() => this.factory.informers),
    )
    const heapAfterGc = monitorHeapAfterGc()
    this.#onStop.push(() => heapAfterGc.stop())
    processMetrics(this.registry, { eventLoop: lag, heapAfterGc })
    informerMetrics(this.registry, () => this.factory.informers)
  }

  /** Metrics hooks for a controller named `name`: pass them to its options. */
  controllerHooks(name: string, maxConcurrentReconciles = 1) {
    return {
      observer: reconcileMetrics(this.registry, name, maxConcurrentReconciles),
      queueMetrics: workqueueMetrics(this.registry, name),
    }
  }

  /** Registers a controller to run while leading (or always, without leader election). */
  add(controller: Controller): void {
    this.#controllers.push(controller)
  }

  /** Runs `fn` when the manager stops (after controllers and informers), e.g. flushing events. */
  onStop(fn: () => Promise<void> | void): void {
    this.#onStop.push(fn)
  }

  /**
   * Runs until `signal` aborts (resolves) or leadership is lost (rejects with
   * `EDGEOP_ERR_LEADER`). Start-up failures (a port in use, caches that never sync) reject.
   *
   * Guarantees: a watched resource that discovery says the server does not serve (a CRD not
   * installed) rejects with {@link UnservedResourcesError} (`EDGEOP_ERR_DISCOVERY`) once discovery
   * has lacked it twice, {@link UNSERVED_CONFIRM_DELAY_MS} apart, not after the sync timeout; `signal` aborting during start-up (before the
   * caches sync) stops everything started so far and resolves.
   */
  async run(signal: AbortSignal): Promise<void> {
    const informers = new AbortController()
    const ops = await startOpsServer({
      registry: this.registry,
      healthz: this.healthz,
      readyz: this.readyz,
      ...(this.#o.metricsBindAddress === undefined ? {} : { metricsBindAddress: this.#o.metricsBindAddress }),
      ...(this.#o.healthProbeBindAddress === undefined
        ? {}
        : { healthProbeBindAddress: this.#o.healthProbeBindAddress }),
    })
    this.#log.info('serving', {
      metrics: ops.metricsAddress ?? 'off',
      probes: ops.healthProbeAddress ?? 'off',
    })
    try {
      this.factory.start(informers.signal)
      for (const i of this.factory.informers) this.#log.info('watching', { informer: i.describe })
      await this.#waitForCaches(signal)
      if (signal.aborted) return
      this.#log.info('caches synced', { informers: this.factory.informers.length })
      const runControllers = (s: AbortSignal): Promise<void> => {
        const all = Promise.all(this.#controllers.map((c) => c.run(s))).then(() => undefined)
        return new Promise<void>((resolve, reject) => {
          // On abort, in-flight reconciles get the grace period (controller-runtime GracefulShutdownTimeout).
          s.addEventListener(
            'abort',
            () =>
              void withGracePeriod(
                all,
                this.#o.shutdownGracePeriodMs ?? DEFAULT_SHUTDOWN_GRACE_PERIOD_MS,
              ).then(resolve, reject),
            { once: true },
          )
          all.then(resolve, reject)
        })
      }
      if (this.elector) {
        this.#log.info('waiting for leadership', {
          lease: `${this.#o.leaderElection!.namespace}/${this.#o.leaderElection!.name}`,
          identity: this.elector.identity,
        })
        await this.elector.run(
          {
            onStartedLeading: (s) => {
              this.#log.info('leading: starting controllers')
              return runControllers(s)
            },
            onStoppedLeading: () => this.#log.info('stopped leading'),
          },
          signal,
        )
      } else {
        await runControllers(signal)
      }
    } finally {
      informers.abort()
      await this.factory.stopped()
      for (const fn of this.#onStop) {
        try {
          await fn()
        } catch (err) {
          this.#log.warn('stop hook failed', { error: errorMessage(err) })
        }
      }
      await ops.close()
      this.#log.info('stopped')
    }
  }

  /**
   * Waits for the caches while discovery checks, in parallel, that every watched resource is
   * served; a missing one ends the wait at once. When discovery cannot be asked (network, RBAC),
   * the wait goes on and the sync timeout reports what failed.
   */
  async #waitForCaches(signal: AbortSignal): Promise<void> {
    const unserved = new AbortController()
    const waited = new AbortController()
    let missing: ResourceType[] = []
    const checking = AbortSignal.any([signal, waited.signal])
    const check = async (): Promise<ResourceType[]> => {
      const first = await findUnserved(this.client.mapper, this.factory.types, checking)
      if (first.length === 0) return first
      // A CRD applied together with the operator may not be in discovery yet: ask again once.
      await sleep(UNSERVED_CONFIRM_DELAY_MS, realClock, checking)
      return findUnserved(this.client.mapper, first, checking)
    }
    void check().then(
      (m) => {
        missing = m
        if (m.length > 0) unserved.abort()
      },
      (err: unknown) => {
        if (!waited.signal.aborted && !signal.aborted)
          this.#log.debug('could not check that watched resources are served', { error: errorMessage(err) })
      },
    )
    try {
      await this.factory.whenSynced(
        AbortSignal.any([signal, unserved.signal]),
        this.#o.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS,
      )
    } catch (err) {
      // An abort is a stop (the caller's signal) or a missing resource (thrown below), not a sync failure.
      if (!isEdgeopError(err, 'EDGEOP_ERR_ABORTED')) throw err
    } finally {
      waited.abort()
    }
    if (!signal.aborted && missing.length > 0) throw new UnservedResourcesError(missing)
  }
}
