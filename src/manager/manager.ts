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
 *
 * Constructing a Manager starts nothing: the process monitors, the probes and metrics it registers,
 * the servers and the informers all begin in `run` and end with it. Time is the injected clock's.
 */
import { InformerFactory } from '../cache/factory.ts'
import type { KubeClient } from '../client/kube-client.ts'
import { Controller } from '../controller/controller.ts'
import type { ControllerOptions } from '../controller/controller-options.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { definedProps } from '../core/defined-props.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import type { KubeObject } from '../core/types.ts'
import {
  eventLoopCheck,
  HealthChecks,
  informersCheck,
  leaderCheck,
  monitorEventLoopLag,
  ping,
} from '../health/health-checks.ts'
import type { LeaderElector } from '../leader/elector.ts'
import { defaultLogger } from '../logging/logger.ts'
import type { ControllerObserver } from '../metrics/controller-observer.ts'
import { monitorHeapAfterGc } from '../metrics/heap-after-gc.ts'
import { informerMetrics } from '../metrics/informer-metrics.ts'
import { leaderElectionMetrics } from '../metrics/leader-election-metrics.ts'
import { MetricsRegistry } from '../metrics/metrics-registry.ts'
import { objectMetrics } from '../metrics/object-metrics.ts'
import { processMetrics } from '../metrics/process-metrics.ts'
import { reconcileMetrics } from '../metrics/reconcile-metrics.ts'
import { workqueueMetrics } from '../metrics/workqueue-metrics.ts'
import type { QueueMetrics } from '../queue/metrics.ts'
import { MetricsAuthFilter } from '../server/metrics-auth.ts'
import { startOpsServer } from '../server/ops-server.ts'
import type { Shard } from '../sharding/shard.ts'
import { DEFAULT_CACHE_SYNC_TIMEOUT_MS, waitForCaches } from './cache-sync.ts'
import { leaderElection } from './leader-election.ts'
import type { ManagerOptions } from './manager-options.ts'
import { DEFAULT_SHUTDOWN_GRACE_PERIOD_MS, withGracePeriod } from './shutdown.ts'

/**
 * The process-wide runtime: register controllers with {@link add} (their reconcile and workqueue
 * metrics are wired there), then {@link run}.
 *
 * Guarantees: the constructor starts nothing (no timer, no observer, no server, no request);
 * `run` may be called once.
 */
export class Manager {
  /** The client given in the options. */
  readonly client: KubeClient
  /** Informers shared by the controllers; started by {@link run}. */
  readonly factory: InformerFactory
  /** Where the runtime's metrics go (and what `/metrics` serves). */
  readonly registry: MetricsRegistry
  /** Liveness checks served at `/healthz`; {@link run} adds `ping` and `event-loop`. */
  readonly healthz = new HealthChecks('healthz')
  /** Readiness checks served at `/readyz`; {@link run} adds `informers` (and `leader-election`). */
  readonly readyz = new HealthChecks('readyz')
  /** The leader elector, when leader election is configured; with sharding, it holds the membership Lease. */
  readonly elector: LeaderElector | undefined
  /** This replica's member of the ring, with `leaderElection.sharding`; run while the membership Lease is held. */
  readonly shard: Shard | undefined
  /** The time source everything the manager runs uses. */
  readonly clock: Clock
  readonly #o: ManagerOptions
  readonly #log: Logger
  readonly #controllers: Controller[] = []
  /** The signal each controller added with one stops on. */
  readonly #until = new WeakMap<Controller, AbortSignal>()
  /** The runs of the controllers started so far (a member cluster's start while leading). */
  readonly #runs: Promise<void>[] = []
  /** Set while the controllers run (leading, or always without leader election). */
  #leading: AbortSignal | undefined
  readonly #onStop: (() => Promise<void> | void)[] = []
  #started = false

  /** Builds the parts; starts nothing. */
  constructor(options: ManagerOptions) {
    this.#o = options
    this.client = options.client
    this.clock = options.clock ?? realClock
    this.registry = options.registry ?? new MetricsRegistry()
    this.#log = options.logger ?? defaultLogger()
    this.factory = new InformerFactory(
      options.client,
      { logger: this.#log, clock: this.clock },
      options.namespaces,
    )
    const le = options.leaderElection
    if (le) {
      const election = leaderElection(le, {
        client: options.client,
        clock: this.clock,
        logger: this.#log,
        registry: this.registry,
      })
      this.elector = election.elector
      this.shard = election.shard
    }
  }

  /**
   * Metrics hooks for a controller named `name`: pass them to its options.
   *
   * @deprecated {@link add} wires the same hooks into every controller that has none; this stays
   * for callers that build their options by hand.
   */
  controllerHooks(
    name: string,
    maxConcurrentReconciles = 1,
  ): { observer: Required<ControllerObserver>; queueMetrics: QueueMetrics } {
    return {
      observer: reconcileMetrics(this.registry, name, maxConcurrentReconciles),
      queueMetrics: workqueueMetrics(this.registry, name),
    }
  }

  /**
   * Registers a controller to run while leading (or always, without leader election), and returns
   * it. Given options, it builds the controller with the manager's clock and logger (the options may
   * override both). Either way the controller's reconcile metrics and workqueue metrics
   * (controller-runtime's names, label `controller`) go to {@link registry}, unless its options
   * brought its own. May be called while running (a member cluster engaged, see `ClusterSet`): the
   * controller then starts at once when leading. With `until`, it stops (and leaves the manager)
   * when `until` aborts.
   *
   * Each controller is added once: a controller already added (the same one, or another of the same
   * name, which labels its metrics and log lines) throws `EDGEOP_ERR_INVALID` naming it, before
   * anything is built or wired. A name is free again once its controller left through `until`.
   */
  add<T extends KubeObject>(
    controller: Controller<T> | ControllerOptions<T>,
    until?: AbortSignal,
  ): Controller<T> {
    // The same controller has its own name too.
    if (this.#controllers.some((x) => x.name === controller.name)) throw alreadyAddedError(controller.name)
    const c =
      controller instanceof Controller
        ? controller
        : new Controller<T>({
            clock: this.clock,
            logger: this.#log,
            ...definedProps({ maxConcurrentReconciles: this.#o.maxConcurrentReconciles }),
            ...controller,
          })
    c.instrument({
      observer: () => reconcileMetrics(this.registry, c.name, c.maxConcurrentReconciles),
      queueMetrics: () => workqueueMetrics(this.registry, c.name),
      tracer: this.#o.tracer,
    })
    const a = c as unknown as Controller
    this.#controllers.push(a)
    if (until) {
      this.#until.set(a, until)
      until.addEventListener('abort', () => this.#controllers.splice(this.#controllers.indexOf(a) >>> 0, 1))
    }
    if (this.#leading) this.#start(a)
    return c
  }

  /** True when `controller` (this object) is added and has not left (its `until` aborted). */
  has<T extends KubeObject>(controller: Controller<T>): boolean {
    return this.#controllers.includes(controller as unknown as Controller)
  }

  /** Runs `c` until leadership ends or its `until` aborts. */
  #start(c: Controller): void {
    const u = this.#until.get(c)
    this.#runs.push(c.run(u ? AbortSignal.any([this.#leading!, u]) : this.#leading!))
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
   * has lacked it twice, {@link UNSERVED_CONFIRM_DELAY_MS} apart, not after the sync timeout;
   * `signal` aborting during start-up (before the caches sync) stops everything started so far and
   * resolves. The stop order is `shutdown.ts`'s: controllers drain, the Lease is released, informers
   * stop, stop hooks run, the servers close, then the process monitors stop. A second call rejects
   * with `EDGEOP_ERR_INVALID`.
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started)
      throw new EdgeopError('EDGEOP_ERR_INVALID', 'a Manager runs once; build a new one', {
        step: 'run manager',
      })
    this.#started = true
    const stopMonitors = this.#startMonitors()
    try {
      await this.#serve(signal)
    } finally {
      stopMonitors()
    }
  }

  /**
   * Starts the event-loop and heap monitors and registers the runtime's checks and metrics.
   * Returns the function that stops the monitors.
   */
  #startMonitors(): () => void {
    const m = this.#o.monitors ?? {}
    const lag = (m.eventLoopLag ?? ((clock) => monitorEventLoopLag({ clock })))(this.clock)
    const heapAfterGc = (m.heapAfterGc ?? (() => monitorHeapAfterGc()))()
    this.healthz.add('ping', ping)
    this.healthz.add('event-loop', eventLoopCheck(lag))
    this.readyz.add(
      'informers',
      informersCheck(() => this.factory.informers, undefined, this.clock),
    )
    processMetrics(this.registry, { eventLoop: lag, heapAfterGc })
    informerMetrics(this.registry, () => this.factory.informers, this.clock)
    objectMetrics(this.registry, () => this.#controllers, this.clock)
    const le = this.#o.leaderElection
    const elector = this.elector
    if (le && elector) {
      leaderElectionMetrics(this.registry, le.name, () => elector.isLeader())
      this.readyz.add('leader-election', leaderCheck(elector))
    }
    return () => {
      lag.stop()
      heapAfterGc.stop()
    }
  }

  /** The servers, the informers and the controllers, from start to the end of the stop sequence. */
  async #serve(signal: AbortSignal): Promise<void> {
    const informers = new AbortController()
    const ops = await startOpsServer({
      registry: this.registry,
      healthz: this.healthz,
      readyz: this.readyz,
      logger: this.#log,
      parked: {
        parked: () => this.#controllers.flatMap((c) => c.parked()),
        retryParked: (key) => this.#controllers.filter((c) => c.retryParked(key)).length,
      },
      metricsBindAddress: this.#o.metricsBindAddress,
      healthProbeBindAddress: this.#o.healthProbeBindAddress,
      ...(this.#o.secureMetrics
        ? {
            secureMetrics: {
              ...this.#o.secureMetrics,
              filter: new MetricsAuthFilter(this.#o.client, { clock: this.clock, logger: this.#log }),
              clock: this.clock,
              logger: this.#log,
            },
          }
        : {}),
    })
    this.#log.info('serving', {
      metrics: ops.metricsAddress ?? 'off',
      ...(this.#o.secureMetrics && ops.metricsAddress ? { metricsScheme: 'https' } : {}),
      probes: ops.healthProbeAddress ?? 'off',
    })
    try {
      this.factory.start(informers.signal)
      for (const i of this.factory.informers) this.#log.info('watching', { informer: i.describe })
      await waitForCaches(
        { client: this.client, factory: this.factory, clock: this.clock, logger: this.#log },
        this.#o.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS,
        signal,
      )
      if (signal.aborted) return
      const restored = this.factory.informers.filter((i) => !i.hasSynced()).map((i) => i.describe)
      // Restored caches serve their snapshot; controllers that did not opt in wait for them to sync.
      if (restored.length > 0)
        this.#log.info('caches ready, some from snapshots not yet caught up', {
          informers: this.factory.informers.length,
          restored: restored.join('; '),
        })
      else this.#log.info('caches synced', { informers: this.factory.informers.length })
      if (this.elector) {
        this.#log.info('waiting for leadership', {
          lease: `${this.#o.leaderElection!.namespace}/${this.#o.leaderElection!.name}`,
          identity: this.elector.identity,
        })
        await this.elector.run(
          {
            onStartedLeading: (s) => {
              this.#log.info('leading: starting controllers')
              return this.#runControllers(s)
            },
            onStoppedLeading: () => this.#log.info('stopped leading'),
          },
          signal,
        )
      } else {
        await this.#runControllers(signal)
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

  /** Runs every controller until `s` aborts; then in-flight reconciles get the grace period. */
  #runControllers(s: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#leading = s
      for (const c of this.#controllers) this.#start(c)
      if (this.shard) this.#runs.push(this.shard.run(s))
      // Controllers started later (member clusters engaged meanwhile) are drained too.
      const all = (async () => {
        for (const p of this.#runs) await p
      })()
      // On abort, in-flight reconciles get the grace period (controller-runtime GracefulShutdownTimeout).
      s.addEventListener(
        'abort',
        () =>
          void withGracePeriod(
            all,
            this.#o.shutdownGracePeriodMs ?? DEFAULT_SHUTDOWN_GRACE_PERIOD_MS,
            this.clock,
          ).then(resolve, reject),
        { once: true },
      )
      all.then(resolve, reject)
    })
  }
}

/** The error of {@link Manager.add} for a controller name already added: what is wrong and how to fix it. */
function alreadyAddedError(name: string): EdgeopError {
  return new EdgeopError(
    'EDGEOP_ERR_INVALID',
    `controller ${JSON.stringify(name)} is added twice: add it once, by manager.add or in runOperator's controllers`,
    { step: 'add controller' },
  )
}
