/**
 * @module failure-handler — what a controller does with a failed reconcile: the retry policy decides on the
 * key's failure history, the key is retried after a delay or parked, `onFailure` is told, the failure is logged.
 */
import { forbiddenPermission, formatRbacPermission } from '../client/forbidden-permission.ts'
import type { Clock } from '../core/clock.ts'
import { definedProps } from '../core/defined-props.ts'
import { errorMessage } from '../core/errors.ts'
import { quoteInput } from '../core/quote-input.ts'
import { TokenBucket } from '../core/token-bucket.ts'
import type { ControllerObserver, ReconcileOutcome } from '../metrics/controller-observer.ts'
import { DEFAULT_BUCKET_BURST, DEFAULT_BUCKET_QPS, DEFAULT_ITEM_MAX_DELAY_MS } from '../queue/rate-limiter.ts'
import type { RateLimitingQueue } from '../queue/rate-limiting-queue.ts'
import { ErrorStacks } from './error-stacks.ts'
import { MAX_PARKED_MESSAGE_CHARS, type ParkedKeys } from './parked-keys.ts'
import { isTerminalError, type ReconcileContext, type ReconcileRequest } from './reconciler.ts'
import {
  classifyError,
  type ErrorClass,
  type FailureHistory,
  FINALIZER_RETRY_INTERVAL_MS,
  type ParkReason,
  type RetryPolicy,
} from './retry-policy.ts'

/** What {@link ControllerOptions.onFailure} is told about a failed reconcile. */
export interface FailureReport {
  /** The class of the error. */
  errorClass: ErrorClass
  /** Consecutive failures of the key, this one included. */
  attempts: number
  /** The error's message, quoted and cut to `MAX_PARKED_MESSAGE_CHARS`. */
  message: string
  /** For `forbidden`: the RBAC rule to grant, on one line (`Role in namespace "shop": - apiGroups: …`). */
  missingPermission?: string
  /** Set when the key was parked: why. */
  parked?: ParkReason
  /**
   * Set for a deleting object retried at the finalizer interval (never parked): how long (ms) since
   * its deletion began. The place to say so in a condition.
   */
  finalizerWaitingMs?: number
}

/** What a {@link FailureHandler} works on: its controller's queue, parked keys and keys in flight. */
export interface FailureHandlerDeps {
  queue: RateLimitingQueue<string>
  parked: ParkedKeys
  /** Keys being reconciled, true for those whose object changed meanwhile (they must not park). */
  processing: ReadonlyMap<string, boolean>
  policy: RetryPolicy
  clock: Clock
  /** Wall ms when the key's object began deletion while finalizers hold it; undefined when it is not deleting. */
  deletingSince(key: string): number | undefined
  /** The controller's observer now (a manager may give it one after construction). */
  observer(): ControllerObserver | undefined
  /** See `ControllerOptions.onFailure`. */
  onFailure:
    | ((request: ReconcileRequest, report: FailureReport, context: ReconcileContext) => Promise<void>)
    | undefined
}

/** One failed reconcile, as the worker saw it. */
export interface Failure {
  key: string
  err: unknown
  /** The controller's stop signal: a failure after it is only logged. */
  stop: AbortSignal
  request: ReconcileRequest
  context: ReconcileContext
  /** Log fields after `error` (the reconcile timeout of a `timeout`). */
  fields: Record<string, unknown>
}

/** The failure histories of one controller's keys, and what it does on each failure. */
export class FailureHandler {
  readonly #deps: FailureHandlerDeps
  readonly #failures = new Map<string, FailureHistory & { lastFailureAt: number }>()
  readonly #stacks = new ErrorStacks()
  /** Spreads every failure retry (client-go's overall bucket). */
  readonly #retryBucket: TokenBucket

  /** A handler with no failures recorded. */
  constructor(deps: FailureHandlerDeps) {
    this.#deps = deps
    this.#retryBucket = new TokenBucket({
      qps: DEFAULT_BUCKET_QPS,
      burst: DEFAULT_BUCKET_BURST,
      clock: deps.clock,
    })
  }

  /** A reconcile of `key` succeeded: its failure history ends. */
  succeeded(key: string): void {
    this.#stacks.forget(key)
    this.#failures.delete(key)
  }

  /**
   * A failed reconcile: the policy decides (on the failure history, at `clock.now()`), the key is
   * retried after the decided delay (and the overall bucket) or parked, `onFailure` is told, the
   * failure is logged, with the throw site the first time this object fails this way.
   */
  async failed(f: Failure): Promise<void> {
    const { key, err, stop, request, context } = f
    const { queue, clock, policy, processing, parked: keys, onFailure: hook } = this.#deps
    // The throw site, the first time this object fails this way (frames only: no message, no cause).
    const stack = err instanceof Error ? this.#stacks.stackFor(key, err) : undefined
    const where = stack === undefined ? {} : { stack }
    const fields = { error: errorMessage(err), ...f.fields, ...where }
    const now = clock.now()
    const h = this.#failures.get(key) ?? { attempts: 0, firstFailureAt: now, lastFailureAt: now }
    h.attempts++
    h.lastFailureAt = now
    this.#failures.set(key, h)
    const errorClass = classifyError(err)
    let decision = policy.decide(err, h, now)
    // A finalizer never parks and never waits longer than the finalizer interval.
    const deletingSince = this.#deps.deletingSince(key)
    let finalizerWaitingMs: number | undefined
    if (
      deletingSince !== undefined &&
      (decision.action === 'park' || decision.delayMs > FINALIZER_RETRY_INTERVAL_MS)
    ) {
      decision = { action: 'retry', delayMs: FINALIZER_RETRY_INTERVAL_MS }
      finalizerWaitingMs = Math.max(0, now - deletingSince)
    }
    const message = quoteInput(errorMessage(err), MAX_PARKED_MESSAGE_CHARS)
    const log = context.log
    const base = { ...fields, errorClass, attempts: h.attempts }
    if (stop.aborted) return log.error('reconcile failed; stopping', base)
    // The object changed during this reconcile: the queue has it again, so it must not park.
    const changed = processing.get(key) === true
    let parked: ParkReason | undefined
    if (decision.action === 'park' && !changed) {
      const stored = keys.park({ key, reason: decision.reason, errorClass, lastError: message, ...h })
      if (stored) {
        parked = decision.reason
        this.#failures.delete(key)
        this.#deps.observer()?.onParkedKeys?.(parked, keys.count(parked))
        log.error('reconcile failed; parked until the object changes', { ...base, reason: parked })
      } else {
        this.#deps.observer()?.onParkOverflow?.()
        if (decision.reason !== 'no_retry') queue.addAfter(key, DEFAULT_ITEM_MAX_DELAY_MS)
        log.error('reconcile failed; cannot park: cap reached', { ...base, reason: decision.reason })
      }
    } else if (decision.action === 'retry') {
      const delayMs = Math.max(decision.delayMs, this.#retryBucket.reserve())
      queue.addAfter(key, delayMs)
      log.error(
        finalizerWaitingMs !== undefined
          ? 'reconcile of a deleting object failed; retrying until its finalizer succeeds'
          : errorClass === 'unknown' && !(err instanceof Error)
            ? 'reconcile threw a non-error value'
            : 'reconcile failed; will retry',
        { ...base, retryInMs: Math.round(delayMs), ...definedProps({ finalizerWaitingMs }) },
      )
    }
    const permission = errorClass === 'forbidden' ? forbiddenPermission(err) : undefined
    const told = errorClass === 'forbidden' || parked !== undefined || finalizerWaitingMs !== undefined
    if (!hook || errorClass === 'terminal' || !told) return
    try {
      await hook(
        request,
        {
          errorClass,
          attempts: h.attempts,
          message,
          ...(permission ? { missingPermission: formatRbacPermission(permission) } : {}),
          ...definedProps({ parked, finalizerWaitingMs }),
        },
        context,
      )
    } catch (hookErr) {
      log.error('onFailure hook failed', { error: errorMessage(hookErr) })
    }
  }
}

/**
 * The outcome of a reconcile that threw: terminal (the reconciler said so) before timeout (the
 * deadline had aborted its signal) before panic (a non-Error was thrown) before a plain error.
 */
export function failureOutcome(err: unknown, timedOut: boolean): ReconcileOutcome {
  if (isTerminalError(err)) return 'terminal_error'
  if (timedOut) return 'timeout'
  return err instanceof Error ? 'error' : 'panic'
}
