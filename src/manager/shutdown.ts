/**
 * @module shutdown — turns SIGTERM/SIGINT into an AbortSignal, and bounds the drain by a grace period.
 *
 * The manager's stop sequence (controller-runtime `engageStopProcedure`, one shared deadline):
 * 1. the first signal aborts the signal returned by {@link onShutdownSignals}; the manager stops handing
 *    out new keys (queues shut down; readiness may fail from here on);
 * 2. in-flight reconciles get their context's AbortSignal and may finish, all within
 *    {@link DEFAULT_SHUTDOWN_GRACE_PERIOD_MS} ({@link withGracePeriod});
 * 3. the Lease is released (only now: no reconcile of this leader can still write);
 * 4. informers stop (their watches close), then the manager's stop hooks run (e.g. flushing events);
 * 5. the HTTP endpoints close, and the process exits 0 — or 1 when the grace period ran out.
 *
 * A second signal during any of this exits at once (`128 + signal number`, the shell convention), for
 * the operator who pressed Ctrl-C twice and the kubelet's SIGKILL that would follow anyway.
 */
import { constants } from 'node:os'
import { type Clock, realClock } from '../core/clock.ts'
import { EdgeopError } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'

/** controller-runtime `GracefulShutdownTimeout` default: 30 s (also the kubelet's default termination grace). */
export const DEFAULT_SHUTDOWN_GRACE_PERIOD_MS = 30_000
/** The signals a container runtime (SIGTERM) and a terminal (SIGINT) send to ask for a stop. */
export const DEFAULT_SHUTDOWN_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT']

/** The slice of `process` that delivers signals (a seam for tests). */
export interface SignalSource {
  /** Registers `listener` for `event`, as `process.on` does. */
  on(event: NodeJS.Signals, listener: () => void): unknown
}

/** Options of {@link onShutdownSignals}. */
export interface ShutdownSignalOptions {
  /** Default {@link DEFAULT_SHUTDOWN_SIGNALS}. */
  signals?: readonly NodeJS.Signals[]
  /** Default `process`. */
  process?: SignalSource
  /** Called at once on the second signal. Default `process.exit`. */
  exit?: (code: number) => void
  /** Where the first and second signals are logged. */
  logger?: Logger
}

/**
 * Listens for shutdown signals for the rest of the process's life.
 *
 * Guarantees: the returned signal aborts on the first of `signals`, with that signal's name
 * (e.g. `'SIGTERM'`) as `signal.reason`; any later one calls `exit(128 + number)` synchronously.
 * Installing the listeners replaces Node's default "exit on SIGINT/SIGTERM", so call it once, early.
 *
 * @example
 * const signal = onShutdownSignals({ logger })
 * await manager.run(signal) // drains, then returns
 * process.exit(0)
 */
export function onShutdownSignals(options: ShutdownSignalOptions = {}): AbortSignal {
  const source = options.process ?? process
  const exit = options.exit ?? ((code: number) => process.exit(code))
  const logger = options.logger ?? noopLogger
  const controller = new AbortController()
  for (const name of options.signals ?? DEFAULT_SHUTDOWN_SIGNALS) {
    source.on(name, () => {
      if (!controller.signal.aborted) {
        logger.info('shutting down; send the signal again to exit at once', { signal: name })
        controller.abort(name)
        return
      }
      logger.warn('second shutdown signal: exiting at once', { signal: name })
      exit(128 + (constants.signals[name] ?? 0))
    })
  }
  return controller.signal
}

/**
 * Waits for `promise` at most `ms`: resolves with its value, or rejects with `EDGEOP_ERR_TIMEOUT`
 * ("did not finish within the grace period of …") when the time runs out first. `ms < 0` waits forever;
 * `ms = 0` accepts only work that has already finished (controller-runtime's semantics). The timer is
 * cancelled when `promise` settles; `promise` itself keeps running.
 *
 * @example
 * await withGracePeriod(Promise.all(workers), options.shutdownGracePeriodMs)
 */
export function withGracePeriod<T>(promise: Promise<T>, ms: number, clock: Clock = realClock): Promise<T> {
  if (ms < 0) return promise
  return new Promise<T>((resolve, reject) => {
    const cancel = clock.setTimer(
      () =>
        reject(
          new EdgeopError('EDGEOP_ERR_TIMEOUT', `did not finish within the grace period of ${ms} ms`, {
            step: 'graceful shutdown',
          }),
        ),
      ms,
    )
    promise.then(
      (v) => {
        cancel()
        resolve(v)
      },
      (err: unknown) => {
        cancel()
        reject(err)
      },
    )
  })
}
