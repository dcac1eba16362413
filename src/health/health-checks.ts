/**
 * @module health-checks — named checks behind `/healthz` and `/readyz`, answering like kube-apiserver.
 *
 * `/healthz` (liveness) asks "should the kubelet restart me?": the process answers and its event loop
 * is not stuck. `/readyz` (readiness) asks "is this replica doing its job?": informers synced, watches
 * healthy, and — when it leads — its lease renewed. The answer format is kube-apiserver's
 * (`k8s.io/apiserver/pkg/server/healthz`): `ok`, or with `?verbose` (and always on failure) one line
 * per check, `[+]name ok` / `[-]name failed: …`, then `<endpoint> check passed|failed`.
 *
 * The event-loop lag monitor behind the liveness check lives here too; the lag gauge reads the same one.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { type Clock, realClock } from '../core/clock.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'

/**
 * A check: returns when healthy, throws when not (the message is the reason). Answer from memory, fast.
 * A returned string is a detail of a healthy check, shown with `?verbose` (`[+]name ok: detail`).
 */
// biome-ignore lint/suspicious/noConfusingVoidType: checks that return nothing must stay assignable.
export type HealthCheck = () => void | string | Promise<void | string>

/** One check's outcome. */
export interface CheckResult {
  /** The check's name, as in `/healthz/<name>`. */
  name: string
  /** Whether the check passed. */
  ok: boolean
  /** Why it failed, one line. */
  reason?: string
  /** What a passing check added (its returned string). */
  detail?: string
}

/** An HTTP answer (`text/plain`). */
export interface HealthResponse {
  /** 200 when every check passes, 500 when one fails, 404 for an unknown check. */
  status: 200 | 404 | 500
  /** `ok`, or one line per check (with `?verbose`, and always on failure). */
  body: string
}

/**
 * The checks of one endpoint, e.g. `new HealthChecks('readyz')`.
 *
 * Guarantees: checks run in the order added; a thrown value fails only its check; a failure's reason
 * is shown only with `?verbose` or on `/<endpoint>/<name>` (otherwise `reason withheld`, as
 * kube-apiserver, since probe ports are often reachable by more than the kubelet).
 *
 * @example
 * const healthz = new HealthChecks('healthz')
 * healthz.add('ping', ping)
 * await healthz.respond('', new URLSearchParams('verbose')) // { status: 200, body: '[+]ping ok\nhealthz check passed\n' }
 */
export class HealthChecks {
  /** The path served, `/healthz` or `/readyz`. */
  readonly endpoint: string
  readonly #checks = new Map<string, HealthCheck>()

  /** An empty set of checks for `endpoint`; with none it answers 200. */
  constructor(endpoint: string) {
    this.endpoint = endpoint
  }

  /** Adds a check; a name already taken throws `EDGEOP_ERR_INVALID`. Returns a function that removes it. */
  add(name: string, check: HealthCheck): () => void {
    if (this.#checks.has(name) || !/^[\w.-]+$/.test(name)) {
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `${this.endpoint} check name ${JSON.stringify(name)} is taken or invalid`,
        {
          step: 'add health check',
        },
      )
    }
    this.#checks.set(name, check)
    return () => this.#checks.delete(name)
  }

  /** The names of the checks, in order. */
  names(): string[] {
    return [...this.#checks.keys()]
  }

  /** Runs every check not in `exclude`. */
  async run(exclude: readonly string[] = []): Promise<CheckResult[]> {
    const results: CheckResult[] = []
    for (const [name, check] of this.#checks) {
      if (!exclude.includes(name)) results.push(await runOne(name, check))
    }
    return results
  }

  /**
   * The answer to `GET /<endpoint><subpath>?<query>`: `subpath` `''` runs all checks (honouring
   * `verbose` and repeated `exclude`), `'/<name>'` runs one (404 if unknown).
   */
  async respond(subpath: string, query: URLSearchParams): Promise<HealthResponse> {
    if (subpath !== '' && subpath !== '/') {
      const check = this.#checks.get(subpath.slice(1))
      if (check === undefined) return { status: 404, body: 'not found\n' }
      const r = await runOne(subpath.slice(1), check)
      return r.ok
        ? { status: 200, body: 'ok' }
        : { status: 500, body: `internal server error: ${r.reason}\n` }
    }
    const results = await this.run(query.getAll('exclude'))
    const failed = results.some((r) => !r.ok)
    const verbose = query.has('verbose')
    if (!failed && !verbose) return { status: 200, body: 'ok' }
    const lines = results.map((r) =>
      r.ok
        ? `[+]${r.name} ok${r.detail ? `: ${r.detail}` : ''}`
        : `[-]${r.name} failed: ${verbose ? r.reason : 'reason withheld'}`,
    )
    lines.push(`${this.endpoint} check ${failed ? 'failed' : 'passed'}`)
    return { status: failed ? 500 : 200, body: `${lines.join('\n')}\n` }
  }
}

async function runOne(name: string, check: HealthCheck): Promise<CheckResult> {
  try {
    const detail = await check()
    return detail ? { name, ok: true, detail } : { name, ok: true }
  } catch (err) {
    return { name, ok: false, reason: errorMessage(err).replace(/\s*\n\s*/g, ' ') }
  }
}

/** The liveness check that always passes: answering at all proves the process is alive. */
export const ping: HealthCheck = () => {}

/** Event-loop delay resolution: 20 ms, as `monitorEventLoopDelay`'s docs example; finer costs wake-ups. */
export const DEFAULT_EVENT_LOOP_RESOLUTION_MS = 20
/** Lag is the worst delay of the last 10–20 s: one window, rotated when read after 10 s. */
export const DEFAULT_EVENT_LOOP_WINDOW_MS = 10_000

/** The slice of node's `IntervalHistogram` the lag monitor uses (a seam for tests). */
export interface DelayHistogram {
  /** Largest recorded delay between ticks, in nanoseconds. */
  readonly max: number
  /** Starts sampling. */
  enable(): unknown
  /** Stops sampling. */
  disable(): unknown
  /** Forgets the samples so far. */
  reset(): void
}

/** Event-loop lag as seen by probes and metrics. */
export interface EventLoopLag {
  /** Worst lag (seconds beyond the sampling interval) in the current and previous window. */
  seconds(): number
  /** Stops sampling. */
  stop(): void
}

/** Options of {@link monitorEventLoopLag}. */
export interface EventLoopLagOptions {
  /** Sampling resolution in ms. Default {@link DEFAULT_EVENT_LOOP_RESOLUTION_MS}. */
  resolutionMs?: number
  /** A window rotates when read this long after it began. Default {@link DEFAULT_EVENT_LOOP_WINDOW_MS}. */
  windowMs?: number
  /** Time source; inject a ManualClock in tests. */
  clock?: Clock
  /** The sampler; Node's `monitorEventLoopDelay` by default, a fake in tests. */
  histogram?: DelayHistogram
}

/**
 * Samples event-loop delay with `perf_hooks.monitorEventLoopDelay`. Several readers (the `/healthz`
 * check and the lag gauge) may read it without resetting each other: a window rotates only when read
 * `windowMs` after it began, and a read reports the worse of the current and the previous window.
 */
export function monitorEventLoopLag(options: EventLoopLagOptions = {}): EventLoopLag {
  const resolution = options.resolutionMs ?? DEFAULT_EVENT_LOOP_RESOLUTION_MS
  const windowMs = options.windowMs ?? DEFAULT_EVENT_LOOP_WINDOW_MS
  const clock = options.clock ?? realClock
  const h = options.histogram ?? monitorEventLoopDelay({ resolution })
  h.enable()
  let start = clock.monotonic()
  let previousMax = 0
  return {
    seconds() {
      if (clock.monotonic() - start >= windowMs) {
        previousMax = h.max
        h.reset()
        start = clock.monotonic()
      }
      return Math.max(0, Math.max(previousMax, h.max) / 1e9 - resolution / 1000)
    },
    stop: () => h.disable(),
  }
}

/**
 * A stalled event loop fails liveness: 5 s of lag is far above a GC pause or decoding a large list
 * (hundreds of ms) and well inside the kubelet's default liveness budget (3 failures × 10 s period).
 */
export const DEFAULT_EVENT_LOOP_STALL_MS = 5_000

/** Fails while the event loop's recent worst lag exceeds `thresholdMs`. */
export function eventLoopCheck(
  lag: Pick<EventLoopLag, 'seconds'>,
  thresholdMs: number = DEFAULT_EVENT_LOOP_STALL_MS,
): HealthCheck {
  return () => {
    const s = lag.seconds()
    if (s * 1000 > thresholdMs)
      throw new Error(`event loop lagged ${s.toFixed(3)}s (limit ${thresholdMs / 1000}s)`)
  }
}

/**
 * Watch failures in a row before readiness fails: 3, about 6 s of the watcher's 0.8 s → 30 s backoff.
 * One failure is routine (a dropped connection); three in a row mean the apiserver is unreachable.
 */
export const DEFAULT_WATCH_FAILURE_THRESHOLD = 3

/** What {@link informersCheck} reads from an informer (a `SharedInformer` fits). */
export interface InformerReadiness {
  /** What the informer watches, for the failing check's reason. */
  readonly describe: string
  /** Whether it has synced, and its watch's consecutive failures and last error. */
  health(): {
    synced: boolean
    consecutiveFailures: number
    lastError: string | undefined
    /** Set while the informer serves a restored cache snapshot the server has not confirmed yet (epoch ms). */
    servingFromSnapshotSince?: number | undefined
    /** `restored` while serving a snapshot (ready: it serves), `synced` once caught up. */
    syncState?: string
    /** While restored: when the snapshot was written (epoch ms). */
    snapshotTakenAt?: number | undefined
  }
}

/**
 * Readiness of informers: fails while any has neither synced nor restored a snapshot, or its watch has
 * failed `failureThreshold` times in a row; the reason names each such informer (and its last error). A
 * passing check names the informers serving a restored cache snapshot (state `restored`), since when and
 * the snapshot's age (shown with `?verbose`).
 */
export function informersCheck(
  informers: () => Iterable<InformerReadiness>,
  failureThreshold: number = DEFAULT_WATCH_FAILURE_THRESHOLD,
  clock: Pick<Clock, 'now'> = realClock,
): HealthCheck {
  return () => {
    const problems: string[] = []
    const restored: string[] = []
    for (const i of informers()) {
      const h = i.health()
      if (h.servingFromSnapshotSince !== undefined) {
        const age =
          h.snapshotTakenAt === undefined
            ? ''
            : `, snapshot ${Math.round((clock.now() - h.snapshotTakenAt) / 1000)} s old`
        restored.push(
          `${i.describe} restored since ${new Date(h.servingFromSnapshotSince).toISOString()}${age}`,
        )
      }
      const failing = h.consecutiveFailures >= failureThreshold
      if ((h.synced || h.syncState === 'restored') && !failing) continue
      const why = failing ? `${h.consecutiveFailures} watch failures in a row` : 'not synced'
      problems.push(`${i.describe}: ${why}${h.lastError ? ` (last error: ${h.lastError})` : ''}`)
    }
    if (problems.length > 0) throw new Error(problems.join('; '))
    if (restored.length > 0) return `serving from cache snapshot: ${restored.join('; ')}`
  }
}

/**
 * Readiness of leadership: the elector's own health check (client-go `HealthzAdaptor`; edgeop's
 * `LeaderElector.check()` fits). A standby passes; a process that believes it leads but has not renewed
 * within its renew deadline plus tolerance fails with the elector's error.
 */
export function leaderCheck(elector: { check(): Error | undefined }): HealthCheck {
  return () => {
    const err = elector.check()
    if (err) throw err
  }
}
