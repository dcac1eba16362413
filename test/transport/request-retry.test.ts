import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type AttemptOutcome,
  type AttemptState,
  DEFAULT_MAX_RETRIES,
  decideRetry,
  type RetryDecision,
} from '../../src/transport/request-retry.ts'

const first: AttemptState = { attempt: 0, refreshedCredentials: false }
const last: AttemptState = { attempt: DEFAULT_MAX_RETRIES, refreshedCredentials: false }
const status = (s: number, retryAfter?: string | string[]): AttemptOutcome => ({
  kind: 'response',
  status: s,
  retryAfter,
})
const lost = (errorCode: string | undefined): AttemptOutcome => ({ kind: 'transport', errorCode })
const retry = (afterMs: number): RetryDecision => ({ action: 'retry', afterMs })
const GIVE_UP: RetryDecision = { action: 'give-up' }
const REFRESH: RetryDecision = { action: 'refresh-credentials' }

/** [name, state, verb, outcome, expected]: client-go's rules (rest/with_retry.go, rest/request.go). */
const TABLE: [string, AttemptState, string, AttemptOutcome, RetryDecision][] = [
  // 429 and 5xx: only with an integer Retry-After, any verb, at most DEFAULT_MAX_RETRIES times.
  ['429 with Retry-After: 3', first, 'GET', status(429, '3'), retry(3000)],
  ['503 with Retry-After: 0, a write', first, 'POST', status(503, '0'), retry(0)],
  ['500 with Retry-After, DELETE', first, 'DELETE', status(500, '2'), retry(2000)],
  ['504 with Retry-After as a list (first value counts)', first, 'PUT', status(504, ['1', '9']), retry(1000)],
  [
    '429 with Retry-After at the 10th retry',
    { ...first, attempt: 9 },
    'PATCH',
    status(429, '1'),
    retry(1000),
  ],
  ['429 with Retry-After after 10 retries', last, 'GET', status(429, '1'), GIVE_UP],
  ['429 with maxRetries 0', { ...first, maxRetries: 0 }, 'GET', status(429, '1'), GIVE_UP],
  ['429 without Retry-After', first, 'GET', status(429), GIVE_UP],
  ['503 with an HTTP-date Retry-After', first, 'GET', status(503, 'Wed, 21 Oct 2026 07:28:00 GMT'), GIVE_UP],
  ['503 with a fractional Retry-After', first, 'GET', status(503, '1.5'), GIVE_UP],
  ['500 without Retry-After', first, 'GET', status(500), GIVE_UP],
  // Other 4xx: never, even with Retry-After.
  ['404 with Retry-After', first, 'GET', status(404, '1'), GIVE_UP],
  ['409 Conflict', first, 'PUT', status(409), GIVE_UP],
  ['403 Forbidden', first, 'GET', status(403), GIVE_UP],
  // 401: once, by refreshing credentials, whatever the verb or retry count.
  ['401 first time', first, 'GET', status(401), REFRESH],
  ['401 first time on a write, retries used up', { ...last }, 'POST', status(401), REFRESH],
  ['401 after a refresh', { ...first, attempt: 1, refreshedCredentials: true }, 'GET', status(401), GIVE_UP],
  // Lost connections: GET (and so watch starts) only, 1 s later, within the same budget.
  ['GET after ECONNRESET', first, 'GET', lost('ECONNRESET'), retry(1000)],
  ['GET after a probable EOF (undici socket closed)', first, 'GET', lost('UND_ERR_SOCKET'), retry(1000)],
  ['GET after an HTTP/2 GOAWAY', first, 'GET', lost('ERR_HTTP2_GOAWAY_SESSION'), retry(1000)],
  ['GET after EPIPE, retries used up', last, 'GET', lost('EPIPE'), GIVE_UP],
  ['PUT after ECONNRESET', first, 'PUT', lost('ECONNRESET'), GIVE_UP],
  ['POST after ECONNRESET', first, 'POST', lost('ECONNRESET'), GIVE_UP],
  ['DELETE after UND_ERR_SOCKET', first, 'DELETE', lost('UND_ERR_SOCKET'), GIVE_UP],
  // Anything else: never.
  ['GET after ECONNREFUSED', first, 'GET', lost('ECONNREFUSED'), GIVE_UP],
  ['GET after a connect timeout', first, 'GET', lost('UND_ERR_CONNECT_TIMEOUT'), GIVE_UP],
  ['GET after a headers timeout', first, 'GET', lost('UND_ERR_HEADERS_TIMEOUT'), GIVE_UP],
  ['GET after a TLS failure', first, 'GET', lost('DEPTH_ZERO_SELF_SIGNED_CERT'), GIVE_UP],
  ['GET after an error without a code', first, 'GET', lost(undefined), GIVE_UP],
]

for (const [name, state, verb, outcome, expected] of TABLE) {
  test(`retry policy: ${verb} ${name} → ${expected.action}`, () => {
    assert.deepEqual(decideRetry(state, verb, outcome), expected)
  })
}

test('retry policy: the budget is maxRetries retries, i.e. maxRetries + 1 attempts', () => {
  const decisions = Array.from({ length: 12 }, (_, attempt) =>
    decideRetry({ attempt, refreshedCredentials: false }, 'GET', status(429, '0')),
  )
  assert.equal(decisions.filter((d) => d.action === 'retry').length, DEFAULT_MAX_RETRIES)
  assert.equal(DEFAULT_MAX_RETRIES, 10)
})
