/**
 * @module eventually — poll a condition on the wall clock until it holds, for tests against a real apiserver:
 * {@link eventually} for any condition, {@link waitFor} for "this object satisfies a predicate".
 *
 * Unit tests should not poll: they drive a `ManualClock`. Tests against a cluster wait on an apiserver
 * and controllers whose timing is not theirs (Gomega's `Eventually` in controller-runtime's world). This
 * is the project's one polling loop: the test environment's start-up waits and the project's own
 * integration tests use it too.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { KubeClient } from '../client/kube-client.ts'
import type { ResourceType } from '../client/resource.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import { isNotFound } from '../transport/api-error.ts'

/**
 * Default time to wait for a condition. A controller reacting to a change on a loopback apiserver
 * takes milliseconds; 30 s leaves room for a loaded CI machine (Gomega's 1 s default is routinely
 * raised in envtest suites for that reason).
 */
export const DEFAULT_EVENTUALLY_TIMEOUT_MS = 30_000

/** Default pause between two checks: prompt enough to notice a change, cheap for the apiserver. */
export const DEFAULT_EVENTUALLY_INTERVAL_MS = 100

/** Longest part of a failed check's message quoted in the timeout error. */
const MAX_LAST_ERROR_CHARS = 300

/** Longest part of the last seen object quoted in a {@link waitFor} timeout error. */
const MAX_LAST_SEEN_CHARS = 500

/** Options for {@link eventually}. */
export interface EventuallyOptions {
  /** Give up after this long; default {@link DEFAULT_EVENTUALLY_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Pause between two checks; default {@link DEFAULT_EVENTUALLY_INTERVAL_MS}. */
  intervalMs?: number
  /** What is awaited, for the timeout error (a function is called only then). */
  what?: string | (() => string)
  /** Aborting stops the wait with `EDGEOP_ERR_ABORTED`. */
  signal?: AbortSignal
}

/**
 * Calls `check` until it returns something other than `undefined` or `false`, and returns that value
 * (so it serves a boolean condition and a lookup alike). A check that throws counts as "not yet"; its
 * message is quoted if the wait times out. Rejects with `EDGEOP_ERR_TIMEOUT` after `timeoutMs`.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  options: EventuallyOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_EVENTUALLY_TIMEOUT_MS
  const intervalMs = options.intervalMs ?? DEFAULT_EVENTUALLY_INTERVAL_MS
  if (!(timeoutMs >= 0) || !(intervalMs > 0))
    throw new EdgeopError(
      'EDGEOP_ERR_INVALID',
      `eventually: timeoutMs must be >= 0 and intervalMs > 0 (got ${timeoutMs}, ${intervalMs})`,
      { step: 'eventually' },
    )
  const end = performance.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    if (options.signal?.aborted)
      throw new EdgeopError('EDGEOP_ERR_ABORTED', 'eventually: aborted', { step: 'eventually' })
    try {
      const value = await check()
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>
      lastError = undefined
    } catch (err) {
      lastError = err
    }
    if (performance.now() >= end) {
      const what = typeof options.what === 'function' ? options.what() : (options.what ?? 'condition')
      const last =
        lastError === undefined
          ? ''
          : ` (last check failed: ${errorMessage(lastError).slice(0, MAX_LAST_ERROR_CHARS)})`
      throw new EdgeopError('EDGEOP_ERR_TIMEOUT', `not reached within ${timeoutMs} ms: ${what}${last}`, {
        step: 'eventually',
        retryable: true,
        cause: lastError,
      })
    }
    await delay(intervalMs, undefined, { signal: options.signal }).catch(() => undefined)
  }
}

/** Options for {@link waitFor}. */
export interface WaitForOptions extends Omit<EventuallyOptions, 'what'> {
  /** Namespace of a namespaced type; default (also when undefined) the client's default namespace. */
  namespace?: string | undefined
}

/**
 * Polls `GET type/name` until `predicate(object)` is true and returns that object. An object that does
 * not exist yet is "not yet", as is a predicate that throws (so `assert…` calls work as predicates).
 * Rejects with `EDGEOP_ERR_TIMEOUT` quoting the last seen `status` (or "not found").
 *
 * @example
 * const app = await waitFor(client, appServices, 'web', (a) => a.status?.phase === 'Ready', { namespace: ns })
 */
export async function waitFor<T extends KubeObject = KubeObject>(
  client: KubeClient,
  type: ResourceType<T> | ResourceType,
  name: string,
  predicate: (object: T) => boolean,
  options: WaitForOptions = {},
): Promise<T> {
  const namespace = type.namespaced ? (options.namespace ?? client.defaultNamespace) : undefined
  const api = client.resource<T>(type, namespace)
  let last: T | undefined
  return eventually(
    async () => {
      try {
        last = await api.get(name)
      } catch (err) {
        if (!isNotFound(err)) throw err
        last = undefined
        return undefined
      }
      return predicate(last) ? last : undefined
    },
    {
      ...options,
      what: () => {
        const where = `${type.resource}${namespace === undefined ? '' : ` ${namespace}`}/${name}`
        const seen =
          last === undefined
            ? 'not found'
            : `last status ${JSON.stringify((last as { status?: unknown }).status ?? null).slice(0, MAX_LAST_SEEN_CHARS)}`
        return `${where} to satisfy the predicate (${seen})`
      },
    },
  )
}
