/**
 * @module heap-after-gc — the V8 heap used just after the last full GC: the live heap.
 *
 * RSS and `heapUsed` sampled at random moments mix live objects with garbage not yet
 * collected and with the room V8 grows its heap by. Read right after a mark-compact, the heap
 * used is what the process actually keeps, so a leak shows as this rising, while V8 sizing its
 * heap shows as `nodejs_heap_size_total_bytes` rising with this flat.
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'

/** A GC entry's kind (`detail.kind`, Node ≥ 16; the types omit it). */
function gcKind(e: PerformanceEntry): number | undefined {
  return (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind
}

/** What {@link monitorHeapAfterGc} answers. */
export interface HeapAfterGc {
  /** Heap used (bytes) read when the last full GC was reported; undefined before the first. */
  bytes(): number | undefined
  /** Full GCs seen so far. */
  readonly count: number
  /** Stops observing GC; readings keep their last value. */
  stop(): void
}

/**
 * Watches GC performance entries and records the heap used after each full (mark-compact) GC.
 *
 * Guarantees: the value is read when Node delivers the GC entry, at most a few event-loop turns
 * after the GC, so it includes only what was allocated in between; scavenges (young generation)
 * do not update it, since they leave old-generation garbage in place.
 * Does not: trigger a GC. A process that never fills its heap reports nothing.
 *
 * @example
 * const live = monitorHeapAfterGc()
 * live.bytes() // undefined until the first full GC, then e.g. 9_400_000
 */
export function monitorHeapAfterGc(
  // Not process.memoryUsage(): that also reads RSS from /proc, on every full GC, for nothing.
  readHeapUsed: () => number = () => getHeapStatistics().used_heap_size,
): HeapAfterGc {
  let last: number | undefined
  let count = 0
  const observer = new PerformanceObserver((list) => {
    const full = list.getEntries().some((e) => gcKind(e) === constants.NODE_PERFORMANCE_GC_MAJOR)
    if (!full) return
    count++
    last = readHeapUsed()
  })
  observer.observe({ type: 'gc' })
  return {
    bytes: () => last,
    get count() {
      return count
    },
    stop: () => observer.disconnect(),
  }
}
