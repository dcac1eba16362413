/** @module queue — the rate-limited work queue: dedup, one worker per item, delays, retry policies, metric hooks. */
export { createDelayingQueue, type DelayingQueue, type DelayingQueueOptions } from './delaying-queue.ts'
export { InMemoryQueueMetrics } from './memory-metrics.ts'
export {
  type InFlightProbe,
  type InFlightWork,
  type QueueMetrics,
  WORKQUEUE_METRIC_NAMES,
  type WorkqueueMetricName,
} from './metrics.ts'
export {
  type BucketRateLimiterOptions,
  bucketRateLimiter,
  DEFAULT_BUCKET_BURST,
  DEFAULT_BUCKET_QPS,
  DEFAULT_ITEM_BASE_DELAY_MS,
  DEFAULT_ITEM_MAX_DELAY_MS,
  type DefaultControllerRateLimiterOptions,
  defaultControllerRateLimiter,
  type ItemExponentialOptions,
  itemExponentialRateLimiter,
  itemFastSlowRateLimiter,
  maxOfRateLimiter,
  type RateLimiter,
  withMaxWaitRateLimiter,
} from './rate-limiter.ts'
export {
  createRateLimitingQueue,
  type RateLimitingQueue,
  type RateLimitingQueueOptions,
} from './rate-limiting-queue.ts'
export { createWorkQueue, type GetResult, type WorkQueue, type WorkQueueOptions } from './work-queue.ts'
