/** @module queue — the rate-limited work queue: dedup, one worker per item, delays, retry policies, metric hooks. */

export * from './delaying-queue.ts'
export * from './heap.ts'
export * from './memory-metrics.ts'
export * from './metrics.ts'
export * from './rate-limiter.ts'
export * from './rate-limiting-queue.ts'
export * from './ring-buffer.ts'
export * from './work-queue.ts'
