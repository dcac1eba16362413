/**
 * The batch span processor on a manual clock: bounded queue that drops and counts, full batches at
 * once, the schedule for the rest, one export at a time, failed batches dropped and counted.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import type { SpanData } from '../../src/tracing/span.ts'
import { type DropReason, SpanBatcher } from '../../src/tracing/span-batcher.ts'

const span = (n: number): SpanData => ({
  name: `s${n}`,
  kind: 'internal',
  context: { traceId: '1'.repeat(32), spanId: n.toString(16).padStart(16, '0'), sampled: true },
  parentSpanId: undefined,
  links: [],
  attributes: {},
  startMs: n,
  endMs: n + 1,
  error: undefined,
})

function setup(options: { maxQueueSize?: number; maxExportBatchSize?: number; fail?: boolean } = {}) {
  const clock = new ManualClock()
  const batches: string[][] = []
  const drops: [number, DropReason][] = []
  let release: (() => void) | undefined
  let hold = false
  const b = new SpanBatcher(
    async (spans) => {
      batches.push(spans.map((s) => s.name))
      if (hold) await new Promise<void>((r) => (release = r))
      if (options.fail) throw new Error('collector down')
    },
    {
      clock,
      scheduledDelayMs: 1000,
      ...options,
      onDrop: (n, reason) => void drops.push([n, reason]),
    },
  )
  return {
    b,
    clock,
    batches,
    drops,
    hold: () => (hold = true),
    release: () => {
      hold = false
      release?.()
    },
  }
}

test('a span waits for the schedule; nothing is sent before it', async () => {
  const t = setup()
  t.b.add(span(1))
  t.b.add(span(2))
  await t.clock.advance(999)
  assert.deepEqual(t.batches, [])
  await t.clock.advance(1)
  await t.b.flush()
  assert.deepEqual(t.batches, [['s1', 's2']])
  assert.deepEqual(t.b.stats(), { queued: 0, exported: 2, dropped: 0 })
})

test('a full batch goes at once, in batches of maxExportBatchSize', async () => {
  const t = setup({ maxExportBatchSize: 2 })
  for (let i = 1; i <= 5; i++) t.b.add(span(i))
  await t.b.flush()
  assert.deepEqual(t.batches, [['s1', 's2'], ['s3', 's4'], ['s5']])
  assert.equal(t.clock.pending, 0, 'flush cancels the schedule')
})

test('a full queue drops and counts instead of growing; exports run one at a time', async () => {
  const t = setup({ maxQueueSize: 3, maxExportBatchSize: 3 })
  t.hold()
  for (let i = 1; i <= 3; i++) t.b.add(span(i)) // a full batch: its export starts and hangs
  await new Promise((r) => setImmediate(r))
  assert.deepEqual(t.batches, [['s1', 's2', 's3']])
  for (let i = 4; i <= 8; i++) t.b.add(span(i))
  assert.deepEqual(t.b.stats(), { queued: 3, exported: 0, dropped: 2 })
  assert.deepEqual(t.drops, [
    [1, 'queue_full'],
    [1, 'queue_full'],
  ])
  assert.equal(t.batches.length, 1, 'the second batch waits for the first export')
  t.release()
  await t.b.flush()
  assert.deepEqual(t.batches, [
    ['s1', 's2', 's3'],
    ['s4', 's5', 's6'],
  ])
  assert.deepEqual(t.b.stats(), { queued: 0, exported: 6, dropped: 2 })
})

test('a failed export drops its batch and counts it; flush never rejects', async () => {
  const t = setup({ fail: true })
  t.b.add(span(1))
  t.b.add(span(2))
  await t.b.flush()
  assert.deepEqual(t.drops, [[2, 'export_failed']])
  assert.deepEqual(t.b.stats(), { queued: 0, exported: 0, dropped: 2 })
})

test('shutdown exports what is queued; later spans are dropped', async () => {
  const t = setup()
  t.b.add(span(1))
  await t.b.shutdown()
  t.b.add(span(2))
  assert.deepEqual(t.batches, [['s1']])
  assert.deepEqual(t.drops, [[1, 'queue_full']])
  assert.equal(t.clock.pending, 0, 'no timer keeps the process alive')
})
