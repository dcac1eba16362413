import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { monitorHeapAfterGc } from '../../src/metrics/heap-after-gc.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { processMetrics } from '../../src/metrics/process-metrics.ts'

// `gc()` without starting the test runner with --expose-gc: the flag applies to contexts made after it.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as (o?: { type: 'major' | 'minor' }) => void
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

test('the live heap is read after a full GC, not after a scavenge, and exported once known', async () => {
  let reads = 0
  const live = monitorHeapAfterGc(() => 1000 + reads++)
  const r = new MetricsRegistry()
  processMetrics(r, { heapAfterGc: live })
  try {
    const line = () =>
      r
        .render()
        .split('\n')
        .find((l) => l.startsWith('nodejs_heap_size_used_after_major_gc_bytes '))
    gc({ type: 'minor' })
    await turns(20)
    assert.equal(live.bytes(), undefined, 'a scavenge says nothing about the old generation')
    assert.equal(line(), 'nodejs_heap_size_used_after_major_gc_bytes 0', '0 before the first full GC')
    gc({ type: 'major' })
    for (let i = 0; i < 200 && live.count === 0; i++) await turns(1)
    assert.equal(live.count, 1)
    assert.equal(live.bytes(), 1000)
    assert.equal(line(), 'nodejs_heap_size_used_after_major_gc_bytes 1000')
  } finally {
    live.stop()
  }
})

test('by default it reads the real heap used, below the heap total', async () => {
  const live = monitorHeapAfterGc()
  try {
    gc({ type: 'major' })
    for (let i = 0; i < 200 && live.count === 0; i++) await turns(1)
    const bytes = live.bytes()
    assert.ok(bytes !== undefined && bytes > 1e6 && bytes <= process.memoryUsage().heapTotal, String(bytes))
  } finally {
    live.stop()
  }
})
