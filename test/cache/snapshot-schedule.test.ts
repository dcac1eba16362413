/** When a snapshot is written: quiet time, minimum interval, and a never-quiet stream. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  SNAPSHOT_MIN_INTERVAL_MS,
  SNAPSHOT_QUIET_MS,
  snapshotDueAt,
} from '../../src/cache/snapshot-schedule.ts'

const T = { quietMs: SNAPSHOT_QUIET_MS, minIntervalMs: SNAPSHOT_MIN_INTERVAL_MS }

test('nothing changed: no write is due', () => {
  assert.equal(snapshotDueAt({}, T), undefined)
  assert.equal(snapshotDueAt({ lastWriteAt: 5, lastChangeAt: 3 }, T), undefined)
})

test('first write: quiet time after the last change', () => {
  assert.equal(snapshotDueAt({ dirtySince: 100, lastChangeAt: 100 }, T), 100 + SNAPSHOT_QUIET_MS)
  assert.equal(snapshotDueAt({ dirtySince: 100, lastChangeAt: 4_000 }, T), 4_000 + SNAPSHOT_QUIET_MS)
})

test('a quiet change soon after a write waits for the minimum interval (flash wear)', () => {
  const s = { lastWriteAt: 10_000, dirtySince: 20_000, lastChangeAt: 20_000 }
  assert.equal(snapshotDueAt(s, T), 10_000 + SNAPSHOT_MIN_INTERVAL_MS)
})

test('a stream that is never quiet is still written, once per minimum interval', () => {
  // Changes every second since t=0, the last at t=1,000,000: not quiet, but dirty for long.
  const s = { dirtySince: 0, lastChangeAt: 1_000_000 }
  assert.equal(snapshotDueAt(s, T), SNAPSHOT_MIN_INTERVAL_MS)
  const after = { lastWriteAt: 300_000, dirtySince: 300_001, lastChangeAt: 1_000_000 }
  assert.equal(snapshotDueAt(after, T), 600_001)
})

test('writes per hour are bounded by the minimum interval whatever the event rate', () => {
  // Drive the pure function as a driver would: an event every 100 ms for one hour.
  let s: { dirtySince?: number; lastChangeAt?: number; lastWriteAt?: number } = {}
  let writes = 0
  for (let now = 0; now <= 3_600_000; now += 100) {
    s = { ...s, dirtySince: s.dirtySince ?? now, lastChangeAt: now }
    const due = snapshotDueAt(s, T)
    if (due !== undefined && due <= now) {
      writes++
      s = { ...s, dirtySince: undefined, lastWriteAt: now }
    }
  }
  // The first write after 5 min of changes, then one per interval (each a tick later than the last).
  assert.ok(writes <= 3_600_000 / SNAPSHOT_MIN_INTERVAL_MS, `${writes} writes`)
  assert.ok(writes >= 3_600_000 / SNAPSHOT_MIN_INTERVAL_MS - 1, `${writes} writes`)
})
