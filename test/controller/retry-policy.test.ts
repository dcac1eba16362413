/**
 * The retry policies as pure functions: an error, a failure history and a time in, a decision out.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { TerminalError } from '../../src/controller/reconciler.ts'
import {
  classifyError,
  clientGoRetryPolicy,
  DEFAULT_PARK_AFTER_MS,
  defaultRetryPolicy,
  FORBIDDEN_RETRY_DELAY_MS,
} from '../../src/controller/retry-policy.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { ApiError } from '../../src/transport/api-error.ts'

const api = (
  status: number,
  reason: string,
  extra: { retryAfter?: number; code?: 'EDGEOP_ERR_NETWORK' } = {},
) =>
  new ApiError({
    status,
    reason,
    message: 'm',
    method: 'PATCH',
    path: '/apis/apps/v1/namespaces/shop/deployments/web',
    ...extra,
  })
const T0 = 1_700_000_000_000
const first = { attempts: 1, firstFailureAt: T0 }
/** Randomness pinned to the top of the jitter interval (just below 1), so jitter is visible. */
const high = () => 0.999

test('errors are classified by the API error predicates, through wrapping causes', () => {
  const cases: [unknown, string][] = [
    [api(409, 'Conflict'), 'conflict'],
    [api(429, 'TooManyRequests'), 'transient'],
    [api(503, 'ServiceUnavailable'), 'transient'],
    [api(500, 'InternalError'), 'transient'],
    [api(504, 'Timeout'), 'transient'],
    [api(0, 'NetworkError', { code: 'EDGEOP_ERR_NETWORK' }), 'transient'],
    [api(403, 'Forbidden'), 'forbidden'],
    [api(401, 'Unauthorized'), 'forbidden'],
    [api(422, 'Invalid'), 'invalid'],
    [api(400, 'BadRequest'), 'invalid'],
    [new TerminalError('bad spec', { cause: api(503, 'ServiceUnavailable') }), 'terminal'],
    [new EdgeopError('EDGEOP_ERR_RECONCILE', 'wrapped', { cause: api(403, 'Forbidden') }), 'forbidden'],
    [api(404, 'NotFound'), 'unknown'],
    [api(501, 'NotImplemented'), 'unknown'],
    [new Error('plain'), 'unknown'],
    ['a string', 'unknown'],
  ]
  for (const [err, want] of cases)
    assert.equal(classifyError(err), want, String((err as Error).message ?? err))
})

test('F3: a child write refused with 4xx is classified by who can fix it: the object (invalid), a grant (forbidden), or time (transient)', () => {
  const refused = (status: number, reason: string, message: string, causes?: { reason: string }[]) =>
    new ApiError({
      status,
      reason,
      message,
      method: 'POST',
      path: '/api/v1/namespaces/t1/secrets',
      ...(causes ? { details: { causes } } : {}),
    })
  const cases: [ApiError, string][] = [
    // The user fixes the object: its spec, or the source the child is derived from.
    [refused(422, 'Invalid', 'Secret "s" is invalid: data[x]: Invalid value'), 'invalid'],
    [refused(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728'), 'invalid'],
    [
      refused(
        403,
        'Forbidden',
        'admission webhook "policy.example.com" denied the request: label team required',
      ),
      'invalid',
    ],
    [
      refused(
        403,
        'Forbidden',
        "secrets \"s\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: no",
      ),
      'invalid',
    ],
    // An installer fixes the grant.
    [
      refused(
        403,
        'Forbidden',
        'secrets is forbidden: User "op" cannot create resource "secrets" in API group "" in the namespace "t1"',
      ),
      'forbidden',
    ],
    // Time fixes it: the namespace goes away (and the key's next event or retry sees that).
    [
      refused(
        403,
        'Forbidden',
        'secrets "s" is forbidden: unable to create new content in namespace t1 because it is being terminated',
        [{ reason: 'NamespaceTerminating' }],
      ),
      'transient',
    ],
  ]
  for (const [err, want] of cases) assert.equal(classifyError(err), want, err.message)
})

test('conflict: an immediate requeue (10 ms, jitter 0.1) for 5 conflicts, then exponential', () => {
  const p = defaultRetryPolicy({ random: high })
  const d = (attempts: number) => p.decide(api(409, 'Conflict'), { attempts, firstFailureAt: T0 }, T0)
  for (let n = 1; n <= 5; n++) {
    const r = d(n)
    assert.ok(r.action === 'retry' && r.delayMs >= 10 && r.delayMs < 11, JSON.stringify(r))
  }
  const sixth = d(6)
  assert.ok(sixth.action === 'retry' && sixth.delayMs >= 800 && sixth.delayMs < 1600, JSON.stringify(sixth))
  const seventh = d(7)
  assert.ok(
    seventh.action === 'retry' && seventh.delayMs >= 1600 && seventh.delayMs < 3200,
    JSON.stringify(seventh),
  )
})

test('transient: exponential from 800 ms (the reflector backoff) with upward jitter in [d, 2d), capped at 1000 s before jitter', () => {
  const low = defaultRetryPolicy({ random: () => 0 })
  const hi = defaultRetryPolicy({ random: high })
  const err = api(503, 'ServiceUnavailable')
  for (const [attempts, d] of [
    [1, 800],
    [2, 1600],
    [4, 6400],
    [30, 1_000_000],
  ] as const) {
    assert.deepEqual(low.decide(err, { attempts, firstFailureAt: T0 }, T0), { action: 'retry', delayMs: d })
    const j = hi.decide(err, { attempts, firstFailureAt: T0 }, T0)
    assert.ok(j.action === 'retry' && j.delayMs > d * 1.99 && j.delayMs < 2 * d, JSON.stringify(j))
  }
  const none = defaultRetryPolicy({ random: high, jitter: 0 })
  assert.deepEqual(none.decide(err, first, T0), { action: 'retry', delayMs: 800 })
  const quick = defaultRetryPolicy({ random: () => 0, transientBaseDelayMs: 5 })
  assert.deepEqual(quick.decide(err, { attempts: 3, firstFailureAt: T0 }, T0), {
    action: 'retry',
    delayMs: 20,
  })
})

test('unknown: exponential from 5 ms (client-go per-item), jittered', () => {
  const p = defaultRetryPolicy({ random: () => 0 })
  for (const [attempts, d] of [
    [1, 5],
    [3, 20],
  ] as const)
    assert.deepEqual(p.decide(new Error('boom'), { attempts, firstFailureAt: T0 }, T0), {
      action: 'retry',
      delayMs: d,
    })
})

test('transient: never sooner than the Retry-After a 429 asked for', () => {
  const p = defaultRetryPolicy({ random: () => 0 })
  assert.deepEqual(p.decide(api(429, 'TooManyRequests', { retryAfter: 7 }), first, T0), {
    action: 'retry',
    delayMs: 7000,
  })
})

test('forbidden and unauthorized: the slow delay, whatever the attempt, with jitter', () => {
  const p = defaultRetryPolicy({ random: () => 0 })
  for (const err of [api(403, 'Forbidden'), api(401, 'Unauthorized')])
    for (const attempts of [1, 2, 10])
      assert.deepEqual(p.decide(err, { attempts, firstFailureAt: T0 }, T0), {
        action: 'retry',
        delayMs: FORBIDDEN_RETRY_DELAY_MS,
      })
  const j = defaultRetryPolicy({ random: high }).decide(api(403, 'Forbidden'), first, T0)
  assert.ok(j.action === 'retry' && j.delayMs > FORBIDDEN_RETRY_DELAY_MS)
  assert.deepEqual(
    defaultRetryPolicy({ random: () => 0, forbiddenDelayMs: 500 }).decide(api(403, 'Forbidden'), first, T0),
    {
      action: 'retry',
      delayMs: 500,
    },
  )
})

test('invalid and terminal: parked at once (no_retry), before any budget', () => {
  const p = defaultRetryPolicy()
  for (const err of [api(422, 'Invalid'), api(400, 'BadRequest'), new TerminalError('bad')])
    assert.deepEqual(p.decide(err, first, T0), { action: 'park', reason: 'no_retry' })
})

test('parking: after maxAttempts consecutive failures, or when the first is parkAfterMs old', () => {
  const err = api(503, 'ServiceUnavailable')
  const p = defaultRetryPolicy({ maxAttempts: 3, random: () => 0 })
  assert.equal(p.decide(err, { attempts: 2, firstFailureAt: T0 }, T0).action, 'retry')
  assert.deepEqual(p.decide(err, { attempts: 3, firstFailureAt: T0 }, T0), {
    action: 'park',
    reason: 'attempts',
  })
  const budget = defaultRetryPolicy({ random: () => 0 })
  assert.equal(
    budget.decide(err, { attempts: 40, firstFailureAt: T0 }, T0 + DEFAULT_PARK_AFTER_MS - 1).action,
    'retry',
  )
  assert.deepEqual(budget.decide(err, { attempts: 40, firstFailureAt: T0 }, T0 + DEFAULT_PARK_AFTER_MS), {
    action: 'park',
    reason: 'time_budget',
  })
  const forbidden = defaultRetryPolicy({ maxAttempts: 2 })
  assert.deepEqual(forbidden.decide(api(403, 'Forbidden'), { attempts: 2, firstFailureAt: T0 }, T0), {
    action: 'park',
    reason: 'attempts',
  })
})

test('invalid options are one clear error', () => {
  assert.throws(() => defaultRetryPolicy({ jitter: -1 }), /retry policy jitter must be ≥ 0, got -1/)
})

test('clientGoRetryPolicy: every error but a TerminalError retries 5 ms · 2^(n−1) ≤ 1000 s, no jitter, never parks', () => {
  const p = clientGoRetryPolicy()
  for (const err of [api(403, 'Forbidden'), api(422, 'Invalid'), api(409, 'Conflict'), new Error('x')]) {
    assert.deepEqual(p.decide(err, first, T0), { action: 'retry', delayMs: 5 })
    assert.deepEqual(p.decide(err, { attempts: 3, firstFailureAt: T0 }, T0 + 10 * DEFAULT_PARK_AFTER_MS), {
      action: 'retry',
      delayMs: 20,
    })
    assert.deepEqual(p.decide(err, { attempts: 64, firstFailureAt: T0 }, T0), {
      action: 'retry',
      delayMs: 1_000_000,
    })
  }
  assert.deepEqual(p.decide(new TerminalError('bad'), first, T0), { action: 'park', reason: 'no_retry' })
})
