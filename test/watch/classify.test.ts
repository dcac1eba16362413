/**
 * Failure classification is by error `code` and the Status's structured fields: an error
 * whose message reads like a 410 or a refused connection but carries another code is an
 * ordinary failure, and one that carries the code is classified whatever its message.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { EdgeopError } from '../../src/core/errors.ts'
import type { Status } from '../../src/core/types.ts'
import { ApiError, type ApiErrorInit } from '../../src/transport/api-error.ts'
import { classify, failureOfStatus, midStreamFailure } from '../../src/watch/classify.ts'
import type { FailureInfo } from '../../src/watch/events.ts'

const api = (init: Partial<ApiErrorInit> & { status: number; reason: string }) =>
  new ApiError({ message: '', method: 'GET', path: '/api/v1/pods', ...init })
/** The three flags only, to compare classifications. */
const flags = (f: FailureInfo) => ({
  expired: f.expired,
  tooLargeRv: f.tooLargeRv,
  throttledOrRefused: f.throttledOrRefused,
})
const NONE = { expired: false, tooLargeRv: false, throttledOrRefused: false }
const tooLargeCause = {
  causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
}

test('410 Expired and 410 Gone API errors are expired, whatever their message', () => {
  for (const reason of ['Expired', 'Gone']) {
    const err = api({ status: 410, reason, message: 'nothing about versions here' })
    assert.deepEqual(flags(classify(err)), { ...NONE, expired: true }, reason)
    assert.equal(classify(err).error, err)
  }
})

test('an API error from another copy of the library (a plain object with the code) is classified the same', () => {
  const foreign = { code: 'EDGEOP_ERR_API', status: 410, reason: 'Expired', message: 'x' }
  assert.deepEqual(flags(classify(foreign)), { ...NONE, expired: true })
})

test('a message that reads like 410 / too large / refused does not classify an error without the code', () => {
  const lookalikes: unknown[] = [
    new Error('GET /api/v1/pods: 410 Expired: too old resource version'),
    new EdgeopError('EDGEOP_ERR_WATCH', '410 Gone: Too large resource version: connect ECONNREFUSED'),
    new Error('429 TooManyRequests'),
    'ECONNREFUSED',
    undefined,
  ]
  for (const err of lookalikes) assert.deepEqual(flags(classify(err)), NONE, String(err))
})

test('too large resource version: by the ResourceVersionTooLarge cause on a Timeout or ServerTimeout, not by message', () => {
  const timeout = api({ status: 504, reason: 'Timeout', details: tooLargeCause })
  const serverTimeout = api({ status: 500, reason: 'ServerTimeout', details: tooLargeCause })
  assert.deepEqual(flags(classify(timeout)), { ...NONE, tooLargeRv: true })
  assert.deepEqual(flags(classify(serverTimeout)), { ...NONE, tooLargeRv: true })
  const byMessageOnly = api({
    status: 504,
    reason: 'Timeout',
    message: 'Too large resource version: 12, current: 10',
  })
  assert.deepEqual(flags(classify(byMessageOnly)), NONE)
  const causeOnAnotherStatus = api({ status: 400, reason: 'BadRequest', details: tooLargeCause })
  assert.deepEqual(flags(classify(causeOnAnotherStatus)), NONE)
})

test('429 is throttled and carries Retry-After; other 5xx and 403 are plain failures', () => {
  const busy = classify(api({ status: 429, reason: 'TooManyRequests', retryAfter: 3 }))
  assert.deepEqual(flags(busy), { ...NONE, throttledOrRefused: true })
  assert.equal(busy.retryAfterSeconds, 3)
  assert.deepEqual(flags(classify(api({ status: 429, reason: 'SomethingNew' }))), {
    ...NONE,
    throttledOrRefused: true,
  })
  assert.deepEqual(flags(classify(api({ status: 500, reason: 'InternalError' }))), NONE)
  assert.deepEqual(flags(classify(api({ status: 403, reason: 'Forbidden' }))), NONE)
})

test('network errors: refused (by the cause code) retries the same step; reset and timeouts are plain failures', () => {
  const network = (cause: string) =>
    api({ code: 'EDGEOP_ERR_NETWORK', status: 0, reason: 'NetworkError', cause: { code: cause } })
  assert.deepEqual(flags(classify(network('ECONNREFUSED'))), { ...NONE, throttledOrRefused: true })
  assert.deepEqual(flags(classify(network('ECONNRESET'))), NONE)
  const refusedMessageOnly = api({
    code: 'EDGEOP_ERR_NETWORK',
    status: 0,
    reason: 'NetworkError',
    message: 'connection failed (ECONNREFUSED)',
    cause: new Error('connect ECONNREFUSED 127.0.0.1:6443'),
  })
  assert.deepEqual(flags(classify(refusedMessageOnly)), NONE, 'the cause has no code: not refused')
  const timeout = api({
    code: 'EDGEOP_ERR_TIMEOUT',
    status: 0,
    reason: 'Timeout',
    cause: { code: 'ECONNREFUSED' },
  })
  assert.deepEqual(flags(classify(timeout)), NONE)
})

test('mid-stream: a decode error is a failure (relist); reset, timeout and anything else end the watch cleanly (resume)', () => {
  const decode = new EdgeopError('EDGEOP_ERR_DECODE', 'event 3 is not JSON')
  assert.equal(midStreamFailure(decode)?.error, decode)
  assert.deepEqual(flags(midStreamFailure(decode)!), NONE)
  const reset = api({
    code: 'EDGEOP_ERR_NETWORK',
    status: 0,
    reason: 'NetworkError',
    cause: { code: 'ECONNRESET' },
  })
  assert.equal(midStreamFailure(reset), undefined)
  assert.equal(midStreamFailure(api({ code: 'EDGEOP_ERR_TIMEOUT', status: 0, reason: 'Timeout' })), undefined)
  assert.equal(
    midStreamFailure(new Error('EDGEOP_ERR_DECODE: not JSON')),
    undefined,
    'the code, not the message',
  )
})

test('a watch ERROR Status: by its HTTP code and causes, not its message', () => {
  const status = (s: Partial<Status>) => ({ kind: 'Status', ...s }) as Status
  assert.deepEqual(flags(failureOfStatus(status({ code: 410, reason: 'Expired' }))), {
    ...NONE,
    expired: true,
  })
  const busy = failureOfStatus(status({ code: 429, details: { retryAfterSeconds: 7 } }))
  assert.deepEqual(flags(busy), { ...NONE, throttledOrRefused: true })
  assert.equal(busy.retryAfterSeconds, 7)
  assert.deepEqual(flags(failureOfStatus(status({ code: 504, details: tooLargeCause }))), {
    ...NONE,
    tooLargeRv: true,
  })
  const lookalike = status({
    code: 500,
    message: '410 Gone: Too large resource version',
    reason: 'InternalError',
  })
  assert.deepEqual(flags(failureOfStatus(lookalike)), NONE)
})
