/**
 * Defaults and validation of the election timing, and the record ↔ Lease spec mapping.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { isEdgeopError } from '../../src/core/errors.ts'
import { formatMicroTime, leaseSpecToRecord, recordKey, recordToLeaseSpec } from '../../src/leader/record.ts'
import { jitteredRetry, leaseDurationSeconds, resolveTiming } from '../../src/leader/timing.ts'

test('defaults are client-go’s: 15 s / 10 s / 2 s, jitter 1.2', () => {
  assert.deepEqual(resolveTiming(), {
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    jitterFactor: 1.2,
  })
})

for (const [options, message] of [
  [{ leaseDurationMs: 10_000 }, /leaseDurationMs \(10000\) must be greater than renewDeadlineMs \(10000\)/],
  [
    { renewDeadlineMs: 2400 },
    /renewDeadlineMs \(2400\) must be greater than retryPeriodMs × jitterFactor \(2000 × 1.2 = 2400\)/,
  ],
  [
    { retryPeriodMs: 9000 },
    /renewDeadlineMs \(10000\) must be greater than retryPeriodMs × jitterFactor \(9000 × 1.2 = 10800\)/,
  ],
  [
    { jitterFactor: 0.5, retryPeriodMs: 10_000 },
    /renewDeadlineMs \(10000\) must be greater than retryPeriodMs \(10000\)/,
  ],
  [{ retryPeriodMs: 0 }, /retryPeriodMs must be a finite number > 0, got 0/],
  [{ leaseDurationMs: Number.NaN }, /leaseDurationMs must be a finite number > 0, got NaN/],
  [{ renewDeadlineMs: -1 }, /renewDeadlineMs must be a finite number > 0, got -1/],
  [{ jitterFactor: Infinity }, /jitterFactor must be a finite number > 0, got Infinity/],
  [
    { leaseDurationMs: 900, renewDeadlineMs: 500, retryPeriodMs: 100 },
    /leaseDurationMs \(900\) must be at least 1000/,
  ],
  [
    { leaseDurationMs: 3500, renewDeadlineMs: 3200, retryPeriodMs: 500 },
    /leaseDurationMs \(3500\) is written to the Lease as 3 s \(whole seconds\), which must be greater than renewDeadlineMs \(3200\)/,
  ],
] as const) {
  test(`invalid timing is refused, naming the value: ${JSON.stringify(options)}`, () => {
    assert.throws(
      () => resolveTiming(options),
      (e: unknown) => isEdgeopError(e, 'EDGEOP_ERR_INVALID') && message.test((e as Error).message),
    )
  })
}

test('every value is configurable; the Lease gets whole seconds; jitter is retry·(1 + r·factor)', () => {
  const t = resolveTiming({
    leaseDurationMs: 3500,
    renewDeadlineMs: 2000,
    retryPeriodMs: 500,
    jitterFactor: 2,
  })
  assert.equal(leaseDurationSeconds(t), 3)
  assert.equal(
    jitteredRetry(t, () => 0),
    500,
  )
  assert.equal(
    jitteredRetry(t, () => 0.5),
    1000,
  )
})

test('MicroTime: RFC 3339 UTC with exactly six fractional digits', () => {
  const ms = Date.UTC(2026, 10, 29, 10, 0, 0, 123)
  assert.equal(formatMicroTime(ms), '2026-11-29T10:00:00.123000Z')
  assert.equal(formatMicroTime(ms + 0.456), '2026-11-29T10:00:00.123456Z')
  assert.equal(formatMicroTime(Date.UTC(2026, 0, 1)), '2026-01-01T00:00:00.000000Z')
})

test('record ↔ Lease spec: every field, holderIdentity even when empty; missing fields read as empty/0', () => {
  const record = {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: '2026-11-29T10:00:00.123456Z',
    renewTime: '2026-11-29T10:00:00.123456Z',
    leaderTransitions: 4,
  }
  const spec = recordToLeaseSpec(record)
  assert.deepEqual(spec, {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: '2026-11-29T10:00:00.123456Z',
    renewTime: '2026-11-29T10:00:00.123456Z',
    leaseTransitions: 4,
  })
  assert.deepEqual(leaseSpecToRecord(spec), record)
  assert.deepEqual(leaseSpecToRecord(undefined), {
    holderIdentity: '',
    leaseDurationSeconds: 0,
    acquireTime: undefined,
    renewTime: undefined,
    leaderTransitions: 0,
  })
  assert.equal(recordKey(record), recordKey({ ...record }))
  assert.notEqual(recordKey(record), recordKey({ ...record, renewTime: '2026-11-29T10:00:00.123457Z' }))
})
