/**
 * @module ring-buffer — the queue's public name for core's FIFO.
 *
 * {@link RingBuffer} moved to `src/core/ring-buffer.ts` so that the informer's handler
 * buffers (cache, which may not import queue) share it; `edgeop/queue` keeps exporting it.
 */
export { RING_BUFFER_MIN_CAPACITY, RingBuffer } from '../core/ring-buffer.ts'
