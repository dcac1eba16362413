import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isEdgeopError } from '../../src/core/errors.ts'
import {
  apiErrorFromResponse,
  apiErrorFromStatus,
  hasStatusCause,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isGoneOrExpired,
  isInvalid,
  isNotFound,
  isResourceExpired,
  isTimeout,
  isTooLargeResourceVersion,
  isTooManyRequests,
  isUnauthorized,
  parseRetryAfter,
  suggestsClientDelay,
} from '../../src/transport/api-error.ts'

const status = (code: number, reason: string, extra: object = {}) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message: `msg ${reason}`,
  ...extra,
})

test('a Status body keeps the server reason, details and causes', () => {
  const err = apiErrorFromResponse(
    422,
    status(422, 'Invalid', {
      details: { name: 'x', kind: 'ConfigMap', causes: [{ reason: 'FieldValueRequired', field: 'data' }] },
    }),
    'POST',
    '/api/v1/namespaces/a/configmaps',
  )
  assert.equal(err.code, 'EDGEOP_ERR_API')
  assert.equal(err.status, 422)
  assert.equal(err.reason, 'Invalid')
  assert.deepEqual(err.causes, [{ reason: 'FieldValueRequired', field: 'data' }])
  assert.equal(err.message, 'POST /api/v1/namespaces/a/configmaps: 422 Invalid: msg Invalid')
  assert.ok(isInvalid(err) && !isNotFound(err))
  assert.ok(hasStatusCause(err, 'FieldValueRequired'))
  assert.equal(err.retryable, false)
  assert.ok(isEdgeopError(err, 'EDGEOP_ERR_API'))
})

test('generic mapping of non-Status bodies follows client-go (409 depends on the verb)', () => {
  const rows: [number, string, string][] = [
    [400, 'GET', 'BadRequest'],
    [401, 'GET', 'Unauthorized'],
    [403, 'GET', 'Forbidden'],
    [404, 'GET', 'NotFound'],
    [409, 'POST', 'AlreadyExists'],
    [409, 'PUT', 'Conflict'],
    [422, 'PUT', 'Invalid'],
    [429, 'GET', 'TooManyRequests'],
    [500, 'GET', 'InternalError'],
    [502, 'GET', 'InternalError'],
    [503, 'GET', 'ServiceUnavailable'],
    [504, 'GET', 'Timeout'],
    [410, 'GET', ''],
  ]
  for (const [code, method, reason] of rows) {
    const err = apiErrorFromResponse(code, '<html>bad gateway</html>', method, '/x')
    assert.equal(err.reason, reason, `${code} ${method}`)
    assert.ok(hasStatusCause(err, 'UnexpectedServerResponse'))
  }
  assert.ok(isAlreadyExists(apiErrorFromResponse(409, '', 'POST', '/x')))
  assert.ok(isConflict(apiErrorFromResponse(409, '', 'PUT', '/x')))
  assert.ok(!isAlreadyExists(apiErrorFromResponse(409, '', 'PUT', '/x')))
})

test('predicates: reason wins; code counts only for unknown reasons', () => {
  assert.ok(isNotFound(apiErrorFromResponse(404, status(404, 'NotFound'), 'GET', '/x')))
  assert.ok(isNotFound(apiErrorFromResponse(404, status(404, 'SomethingNew'), 'GET', '/x')))
  assert.ok(!isNotFound(apiErrorFromResponse(404, status(404, 'Forbidden'), 'GET', '/x')))
  assert.ok(isForbidden(apiErrorFromResponse(403, status(403, 'Forbidden'), 'GET', '/x')))
  assert.ok(isUnauthorized(apiErrorFromResponse(401, '', 'GET', '/x')))
  assert.ok(isTooManyRequests(apiErrorFromResponse(429, status(429, 'Weird'), 'GET', '/x')))
  assert.ok(
    isTooManyRequests(apiErrorFromResponse(429, status(429, 'NotFound'), 'GET', '/x')),
    '429 regardless of reason',
  )
  assert.ok(!isNotFound(new Error('NotFound')), 'not an ApiError')
  assert.ok(!isNotFound(undefined))
})

test('410: Expired and Gone are distinct reasons; both mean relist', () => {
  const expired = apiErrorFromStatus(status(410, 'Expired') as never, 'GET', '/api/v1/pods')
  const gone = apiErrorFromStatus(status(410, 'Gone') as never, 'GET', '/api/v1/pods')
  assert.ok(isResourceExpired(expired) && !isGone(expired) && isGoneOrExpired(expired))
  assert.ok(isGone(gone) && !isResourceExpired(gone) && isGoneOrExpired(gone))
  const generic410 = apiErrorFromResponse(410, 'gone', 'GET', '/x')
  assert.ok(isGone(generic410), 'unknown reason + 410 code counts as Gone')
})

test('kubernetes/kubernetes#92537: too large resource version is recognised by cause and by legacy message', () => {
  const byCause = apiErrorFromResponse(
    504,
    status(504, 'Timeout', {
      details: { causes: [{ reason: 'ResourceVersionTooLarge' }], retryAfterSeconds: 1 },
    }),
    'GET',
    '/x',
  )
  assert.ok(isTimeout(byCause) && isTooLargeResourceVersion(byCause))
  const legacy = apiErrorFromResponse(
    504,
    status(504, 'Timeout', { message: 'Too large resource version: 12, current: 10' }),
    'GET',
    '/x',
  )
  assert.ok(isTooLargeResourceVersion(legacy))
  assert.ok(!isTooLargeResourceVersion(apiErrorFromResponse(504, status(504, 'Timeout'), 'GET', '/x')))
})

test('Retry-After: integer seconds only, header wins over the body; retryability', () => {
  assert.equal(parseRetryAfter('7'), 7)
  assert.equal(parseRetryAfter(['3']), 3)
  assert.equal(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT'), undefined)
  assert.equal(parseRetryAfter('1.5'), undefined)
  const e = apiErrorFromResponse(
    429,
    status(429, 'TooManyRequests', { details: { retryAfterSeconds: 9 } }),
    'GET',
    '/x',
    '2',
  )
  assert.equal(e.retryAfter, 2)
  assert.equal(e.retryable, true)
  assert.equal(suggestsClientDelay(e), 9)
  assert.equal(suggestsClientDelay(apiErrorFromResponse(500, status(500, 'ServerTimeout'), 'GET', '/x')), 0)
  assert.equal(apiErrorFromResponse(404, '', 'GET', '/x').retryable, false)
  assert.equal(apiErrorFromResponse(503, '', 'GET', '/x').retryable, true)
})

test('retryOnConflict re-runs the read-modify-write on 409 only, up to its attempts', async () => {
  const { retryOnConflict } = await import('../../src/client/retry-on-conflict.ts')
  let n = 0
  const conflict = apiErrorFromResponse(409, '', 'PUT', '/x')
  assert.equal(await retryOnConflict(async () => (++n < 3 ? Promise.reject(conflict) : 'ok')), 'ok')
  assert.equal(n, 3)
  n = 0
  const alwaysConflict = async () => {
    n++
    throw conflict
  }
  await assert.rejects(retryOnConflict(alwaysConflict, { attempts: 4, delayMs: 0 }), (e) => e === conflict)
  assert.equal(n, 4)
  n = 0
  const broken = async () => {
    n++
    throw new Error('boom')
  }
  await assert.rejects(retryOnConflict(broken), /boom/)
  assert.equal(n, 1, 'other errors are not retried')
})
