/**
 * @module queue-drain — takes every ready item out of a work queue (get, then done), in order.
 */
import type { WorkQueue } from '../../src/queue/index.ts'

/**
 * Gets and marks done every item `q` holds right now and returns them in the order they came out.
 * `each` runs for every item before its `done` (e.g. to `forget` it in a rate limiter). Throws if the
 * queue reports shutdown while it still claims to hold items: a drain never stops short silently.
 */
export async function drainQueue<T>(q: WorkQueue<T>, each?: (item: T) => void): Promise<T[]> {
  const out: T[] = []
  while (q.len() > 0) {
    const next = await q.get()
    if (next.shutdown) throw new Error(`the queue reported shutdown with ${q.len()} items still queued`)
    out.push(next.item)
    each?.(next.item)
    q.done(next.item)
  }
  return out
}
