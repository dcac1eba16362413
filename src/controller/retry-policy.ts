/**
 * @module retry-policy — what to do after a failed reconcile, by the class of its error: a pure
 * decision from (error, failure history, now).
 *
 * client-go and controller-runtime retry every error the same way (per-item 5 ms → 1000 s, no
 * jitter, forever). That retries a missing RBAC grant as eagerly as a 503, retries an invalid
 * object that cannot succeed, and makes every object that failed together retry together.
 * {@link defaultRetryPolicy} classifies instead; {@link clientGoRetryPolicy} keeps the old behaviour.
 */

import { DEFAULT_CONFLICT_RETRY } from '../client/retry-on-conflict.ts'
import { DEFAULT_BACKOFF_JITTER } from '../core/backoff.ts'
import { EdgeopError } from '../core/errors.ts'
import { DEFAULT_ITEM_BASE_DELAY_MS, DEFAULT_ITEM_MAX_DELAY_MS } from '../queue/rate-limiter.ts'
import {
  hasStatusCause,
  isBadRequest,
  isConflict,
  isForbidden,
  isInvalid,
  isRequestEntityTooLarge,
  isTooManyRequests,
  isUnauthorized,
  suggestsClientDelay,
} from '../transport/api-error.ts'
import { isTerminalError } from './reconciler.ts'

/**
 * What kind of failure a reconcile had:
 * - `conflict`: 409, someone wrote first; a fresh read usually succeeds at once;
 * - `transient`: 429, 5xx, server/client timeouts, connection failures: the server or the path to it
 *   is busy; a 403 `NamespaceTerminating` too (the namespace goes away by itself);
 * - `forbidden`: 401, or a 403 of the authorizer: a credential or an RBAC grant is missing, a person
 *   (the installer) has to act, and no watched object shows it;
 * - `invalid`: 400, 413, 422, or a 403 of an admission webhook or policy: the request is wrong and
 *   stays wrong until the user changes what it is made from (the object, or a source a mapped watch
 *   sees), and that change re-arms the key;
 * - `terminal`: a {@link TerminalError}: the reconciler says retrying cannot help;
 * - `unknown`: anything else (a plain Error, a 404, a thrown non-Error).
 */
export type ErrorClass = 'conflict' | 'transient' | 'forbidden' | 'invalid' | 'terminal' | 'unknown'

/** How many `cause` links {@link classifyError} follows to find an API error inside a wrapper. */
const MAX_CAUSE_DEPTH = 5

/**
 * A 403 written by admission, not by the authorizer: an admission webhook's denial (kube-apiserver
 * `admission webhook "<name>" denied the request`) or a ValidatingAdmissionPolicy's (`… denied request`).
 */
const ADMISSION_DENIAL =
  /admission webhook "[^"]*" denied the request|ValidatingAdmissionPolicy '[^']*' .*denied request/

function classifyOne(err: unknown): ErrorClass {
  if (isTerminalError(err)) return 'terminal'
  if (isConflict(err)) return 'conflict'
  if (isForbidden(err)) {
    // The namespace is being deleted (kube-apiserver's NamespaceLifecycle admission says so in a cause).
    if (hasStatusCause(err, 'NamespaceTerminating')) return 'transient'
    if (ADMISSION_DENIAL.test(String((err as { message?: unknown }).message))) return 'invalid'
    return 'forbidden'
  }
  if (isUnauthorized(err)) return 'forbidden'
  if (isInvalid(err) || isBadRequest(err) || isRequestEntityTooLarge(err)) return 'invalid'
  if (isTooManyRequests(err)) return 'transient'
  const e = err as { code?: unknown; retryable?: unknown } | null
  if (typeof e?.code === 'string' && e.code.startsWith('EDGEOP_ERR_') && e.retryable === true)
    return 'transient' // 5xx but 501, ServerTimeout, EDGEOP_ERR_NETWORK, EDGEOP_ERR_TIMEOUT (api-error.ts)
  return 'unknown'
}

/**
 * The class of `err`: the first link of its `cause` chain (up to {@link MAX_CAUSE_DEPTH}) that is
 * not `unknown`, so a reconciler may wrap an API error in its own.
 */
export function classifyError(err: unknown): ErrorClass {
  let e = err
  for (let i = 0; i < MAX_CAUSE_DEPTH && e !== undefined && e !== null; i++) {
    const c = classifyOne(e)
    if (c !== 'unknown') return c
    e = (e as { cause?: unknown }).cause
  }
  return 'unknown'
}

/** One key's consecutive failures, the one being decided on included. */
export interface FailureHistory {
  /** Consecutive failures (≥ 1). */
  attempts: number
  /** Wall time (ms, on the controller's clock) of the first of them. */
  firstFailureAt: number
}

/**
 * Why a key stopped retrying (the `reason` label of `edgeop_controller_parked_keys`):
 * - `no_retry`: its error cannot be fixed by retrying (`invalid`, `terminal`);
 * - `attempts`: it failed `maxAttempts` times in a row;
 * - `time_budget`: it has been failing for `parkAfterMs`.
 */
export type ParkReason = 'no_retry' | 'attempts' | 'time_budget'

/** A policy's answer: retry after `delayMs`, or park (no retry until the object changes or a person asks). */
export type RetryDecision = { action: 'retry'; delayMs: number } | { action: 'park'; reason: ParkReason }

/** A retry policy. `decide` must be pure (randomness injected at construction) and never throw. */
export interface RetryPolicy {
  /** Names the policy in logs and docs, e.g. `classified`, `client-go`. */
  readonly name: string
  /** What to do after `err`, the `history.attempts`-th consecutive failure, at wall time `now`. */
  decide(err: unknown, history: FailureHistory, now: number): RetryDecision
}

/**
 * Slow retry of a 401/403: 30 s (then jittered). Nothing the operator does fixes a missing grant; a
 * person or a GitOps sync does, in minutes. 30 s is kube-apiserver's
 * `--authorization-webhook-cache-unauthorized-ttl` default: with a webhook authorizer, retrying
 * sooner cannot see a new grant anyway. With RBAC alone a grant is seen within a second, so recovery
 * comes at most one delay after it.
 */
export const FORBIDDEN_RETRY_DELAY_MS = 30_000
/**
 * Conflicts retry as client-go's `retry.DefaultRetry` (kubernetes/client-go `util/retry/util.go`):
 * 10 ms, jitter 0.1, for 5 consecutive conflicts; after that as `transient` (a conflict that keeps
 * coming back is contention, or a stale cache that a pause lets catch up).
 */
export const CONFLICT_RETRY = DEFAULT_CONFLICT_RETRY
/**
 * Upward jitter of controller retries: 1.0, a delay d becomes a value in [d, 2d) (client-go
 * `wait.Jitter` with the reflector's factor, core's `DEFAULT_BACKOFF_JITTER`). Objects that failed
 * together (an API server restart fails them all) then retry spread over the interval, not together.
 */
export const DEFAULT_RETRY_JITTER = DEFAULT_BACKOFF_JITTER
/**
 * Time budget: a key failing for 1 h in a row is parked. An hour of retries is well past every
 * transient cause this runtime knows (a control-plane upgrade, an etcd leader change, a webhook
 * restart); past it, the failure needs a person, who finds the key in `/debug/parked`.
 */
export const DEFAULT_PARK_AFTER_MS = 3_600_000

/**
 * A deleting object whose reconcile keeps failing (its finalizer cannot finish) is retried at least
 * every 5 min, forever, and never parked: the object cannot go away until the finalizer succeeds, and
 * nobody looks at a parked deletion. The normal backoff runs first; once it would wait longer, or the
 * policy would park, the key retries at this interval. 5 min: a thousand stuck deletions cost about
 * 3 requests per second, and a dependency that comes back is seen within minutes (the
 * `EdgeopObjectsStuckTerminating` alert fires once the oldest deletion has waited 30 min).
 */
export const FINALIZER_RETRY_INTERVAL_MS = 300_000

/**
 * First delay of a `transient` failure: 800 ms, doubling. A 429, a 5xx, a timeout or a lost
 * connection says the server or the path to it is busy or down; client-go's reflector
 * (`tools/cache/reflector.go`, backoff 800 ms → 30 s) and kube-rs's watcher (`DefaultBackoff`) wait
 * this long after the same failures on the watch path. At the 5 ms per-item delay every failing
 * object retried about 8 times in a 2 s burst of 5xx answers (the chaos soak measured a new
 * leader's first pass pushing the whole fleet past 40 req/s that way).
 */
export const TRANSIENT_BASE_DELAY_MS = 800

/** Options of {@link defaultRetryPolicy}. */
export interface ClassifiedRetryOptions {
  /** First delay of an `unknown` error (the reconciler's own). Default `DEFAULT_ITEM_BASE_DELAY_MS` (5 ms, client-go). */
  baseDelayMs?: number
  /** First delay of a `transient` error. Default {@link TRANSIENT_BASE_DELAY_MS}. */
  transientBaseDelayMs?: number
  /** Cap of the transient and unknown delays before jitter. Default `DEFAULT_ITEM_MAX_DELAY_MS` (1000 s, client-go). */
  maxDelayMs?: number
  /** Delay of a 401/403 before jitter. Default {@link FORBIDDEN_RETRY_DELAY_MS}. */
  forbiddenDelayMs?: number
  /** Upward jitter fraction. Default {@link DEFAULT_RETRY_JITTER}; 0 disables. */
  jitter?: number
  /** Park after this many consecutive failures. Default: no limit (the time budget decides). */
  maxAttempts?: number
  /** Park when the first of the consecutive failures is this old (ms). Default {@link DEFAULT_PARK_AFTER_MS}; `Infinity` never. */
  parkAfterMs?: number
  /** Randomness in [0, 1) for the jitter. Default `Math.random`. */
  random?: () => number
}

function positive(name: string, value: number): number {
  if (!(value >= 0))
    throw new EdgeopError('EDGEOP_ERR_INVALID', `retry policy ${name} must be ≥ 0, got ${value}`, {
      step: 'configure retry policy',
    })
  return value
}

/** `base · 2^(n−1)` capped at `max` (client-go `ItemExponentialFailureRateLimiter`). */
function exponential(base: number, max: number, attempts: number): number {
  return Math.min(base * 2 ** (attempts - 1), max)
}

/**
 * The default policy, by {@link ErrorClass}:
 * - `conflict`: {@link CONFLICT_RETRY} (10 ms) for the first 5 failures, then as `transient`
 *   (800 ms for the 6th, doubling);
 * - `transient`: exponential {@link TRANSIENT_BASE_DELAY_MS} (800 ms) → 1000 s with jitter, and
 *   never sooner than a `Retry-After` the server sent;
 * - `unknown`: exponential 5 ms → 1000 s with jitter (client-go's per-item delay, jittered);
 * - `forbidden`: {@link FORBIDDEN_RETRY_DELAY_MS} with jitter;
 * - `invalid`, `terminal`: park (`no_retry`) until the object changes.
 * Any retrying key parks once it has failed `maxAttempts` times or for `parkAfterMs`.
 *
 * @example
 * new Controller({ ..., retryPolicy: defaultRetryPolicy({ maxAttempts: 20 }) })
 */
export function defaultRetryPolicy(options: ClassifiedRetryOptions = {}): RetryPolicy {
  const base = positive('baseDelayMs', options.baseDelayMs ?? DEFAULT_ITEM_BASE_DELAY_MS)
  const transient = positive('transientBaseDelayMs', options.transientBaseDelayMs ?? TRANSIENT_BASE_DELAY_MS)
  const max = positive('maxDelayMs', options.maxDelayMs ?? DEFAULT_ITEM_MAX_DELAY_MS)
  const forbidden = positive('forbiddenDelayMs', options.forbiddenDelayMs ?? FORBIDDEN_RETRY_DELAY_MS)
  const jitter = positive('jitter', options.jitter ?? DEFAULT_RETRY_JITTER)
  const maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY
  const budget = positive('parkAfterMs', options.parkAfterMs ?? DEFAULT_PARK_AFTER_MS)
  const random = options.random ?? Math.random
  const jittered = (d: number, j = jitter): number => d + random() * j * d
  return {
    name: 'classified',
    decide(err, history, now) {
      const c = classifyError(err)
      if (c === 'invalid' || c === 'terminal') return { action: 'park', reason: 'no_retry' }
      if (history.attempts >= maxAttempts) return { action: 'park', reason: 'attempts' }
      if (now - history.firstFailureAt >= budget) return { action: 'park', reason: 'time_budget' }
      if (c === 'forbidden') return { action: 'retry', delayMs: jittered(forbidden) }
      if (c === 'conflict' && history.attempts <= CONFLICT_RETRY.attempts)
        return { action: 'retry', delayMs: jittered(CONFLICT_RETRY.delayMs, CONFLICT_RETRY.jitter) }
      const header = (err as { retryAfter?: unknown } | null)?.retryAfter
      const asked = ((typeof header === 'number' ? header : suggestsClientDelay(err)) ?? 0) * 1000
      // A conflict past its quick retries continues as transient from the first transient delay.
      const n = c === 'conflict' ? history.attempts - CONFLICT_RETRY.attempts : history.attempts
      const delay = exponential(c === 'unknown' ? base : transient, max, n)
      return { action: 'retry', delayMs: Math.max(jittered(delay), asked) }
    },
  }
}

/**
 * client-go's and controller-runtime's behaviour: every error but a {@link TerminalError} retries
 * with per-item exponential backoff 5 ms → 1000 s, without jitter, forever; a TerminalError parks
 * (`no_retry`) until the object changes.
 *
 * @example
 * new Controller({ ..., retryPolicy: clientGoRetryPolicy() })
 */
export function clientGoRetryPolicy(): RetryPolicy {
  return {
    name: 'client-go',
    decide: (err, history) =>
      isTerminalError(err)
        ? { action: 'park', reason: 'no_retry' }
        : {
            action: 'retry',
            delayMs: exponential(DEFAULT_ITEM_BASE_DELAY_MS, DEFAULT_ITEM_MAX_DELAY_MS, history.attempts),
          },
  }
}
