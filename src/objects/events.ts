/**
 * @module events — Kubernetes Events (events.k8s.io/v1) that cannot flood the API server.
 *
 * Repeats of the same event (same object, type, reason, action and note) are folded
 * into one Event whose `series.count` grows, written at most once per
 * {@link DEFAULT_SERIES_FLUSH_MS}; each object has a token bucket
 * ({@link DEFAULT_EVENT_BURST} events, one more every {@link DEFAULT_EVENT_REFILL_MS}) so
 * a failing object cannot spam (client-go `EventSourceObjectSpamFilter`). Recording
 * never blocks or fails a reconcile: writes are asynchronous and failures are logged.
 */

import { randomBytes } from 'node:crypto'
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES } from '../client/resource.ts'
import { type CancelTimer, type Clock, realClock } from '../core/clock.ts'
import { definedProps } from '../core/defined-props.ts'
import { errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { TokenBucket } from '../core/token-bucket.ts'
import type { KubeEvent, KubeObject, ObjectReference } from '../core/types.ts'

/** client-go spam filter burst: 25 events per object. */
export const DEFAULT_EVENT_BURST = 25
/** client-go spam filter refill: one token per 5 minutes (qps 1/300). */
export const DEFAULT_EVENT_REFILL_MS = 300_000
/** A repeat within 30 minutes joins the series (client-go events/v1 isomorphic-event window). */
export const DEFAULT_SERIES_WINDOW_MS = 30 * 60_000
/** Accumulated repeats are written at most this often per series. */
export const DEFAULT_SERIES_FLUSH_MS = 60_000
/**
 * A series not observed for 6 minutes is finished: its count is written and it is
 * forgotten, so a repeat after that starts a new Event (client-go `tools/events`
 * `finishTime`). Without it the recorder remembers every distinct event for ever.
 */
export const DEFAULT_SERIES_FINISH_MS = 6 * 60_000
/** At most this many series and per-object buckets are remembered; the oldest go first (client-go `maxLruCacheEntries`). */
export const MAX_REMEMBERED_EVENTS = 4096
/** Notes are capped at 1 KiB by the API. */
const MAX_NOTE = 1024

/** Options of {@link EventRecorder}. */
export interface EventRecorderOptions {
  /** `reportingController`, e.g. `platform.example.com/appservice-operator`. */
  controller: string
  /** `reportingInstance`, e.g. the pod name. */
  instance: string
  /** Distinct events per object before throttling. Default {@link DEFAULT_EVENT_BURST}. */
  burst?: number
  /** One more event per object every this many ms. Default {@link DEFAULT_EVENT_REFILL_MS}. */
  refillMs?: number
  /** A repeat within this long joins the series. Default {@link DEFAULT_SERIES_WINDOW_MS}. */
  seriesWindowMs?: number
  /** Accumulated repeats are written at most this often. Default {@link DEFAULT_SERIES_FLUSH_MS}. */
  seriesFlushMs?: number
  /** A series without repeats for this long is forgotten. Default {@link DEFAULT_SERIES_FINISH_MS}. */
  seriesFinishMs?: number
  /** Time source; inject a ManualClock in tests. */
  clock?: Clock
  /** Where failed writes (warn) and rate-limited events (debug) are logged; events are best effort. */
  logger?: Logger
}

interface Series {
  namespace: string
  name: string | undefined
  count: number
  written: number
  lastObserved: number
  firstSeen: number
  timer: CancelTimer | undefined
  pending: Promise<void> | undefined
}

/**
 * Records events about objects.
 *
 * Guarantees: at most one API write per distinct event per flush interval; at most
 * `burst` distinct events per object before the bucket throttles; never throws; bounded
 * memory (a series is forgotten {@link DEFAULT_SERIES_FINISH_MS} after it was last
 * observed, and at most 4,096 ({@link MAX_REMEMBERED_EVENTS}) series and buckets are kept).
 * Does not guarantee: delivery (events are best-effort, as in Kubernetes).
 */
export class EventRecorder {
  readonly #client: KubeClient
  readonly #o: Required<Omit<EventRecorderOptions, 'clock' | 'logger'>>
  readonly #clock: Clock
  readonly #log: Logger
  readonly #series = new Map<string, Series>()
  readonly #buckets = new Map<string, TokenBucket>()
  readonly #writes = new Set<Promise<void>>()
  #lastSweep = Number.NEGATIVE_INFINITY

  /** A recorder writing `events.k8s.io/v1` Events through `client`; starts no timer until an event repeats. */
  constructor(client: KubeClient, options: EventRecorderOptions) {
    this.#client = client
    this.#clock = options.clock ?? realClock
    this.#log = options.logger ?? noopLogger
    this.#o = {
      controller: options.controller,
      instance: options.instance,
      burst: options.burst ?? DEFAULT_EVENT_BURST,
      refillMs: options.refillMs ?? DEFAULT_EVENT_REFILL_MS,
      seriesWindowMs: options.seriesWindowMs ?? DEFAULT_SERIES_WINDOW_MS,
      seriesFlushMs: options.seriesFlushMs ?? DEFAULT_SERIES_FLUSH_MS,
      seriesFinishMs: options.seriesFinishMs ?? DEFAULT_SERIES_FINISH_MS,
    }
  }

  /** A recorder with the same options writing through `client` (a member cluster's: its events stay there). */
  forClient(client: KubeClient): EventRecorder {
    return new EventRecorder(client, { ...this.#o, clock: this.#clock, logger: this.#log })
  }

  /** Series and per-object buckets remembered now (bounded: at most 4,096, {@link MAX_REMEMBERED_EVENTS}). */
  get remembered(): { series: number; buckets: number } {
    return { series: this.#series.size, buckets: this.#buckets.size }
  }

  /** Records an event about `regarding`. Returns at once. */
  event(
    regarding: KubeObject,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
  ): void {
    const uid = regarding.metadata.uid ?? `${regarding.metadata.namespace}/${regarding.metadata.name}`
    const key = [uid, type, reason, action, note].join('\u0000')
    const now = this.#clock.now()
    this.#forgetFinished(now)
    const s = this.#series.get(key)
    if (s && now - s.firstSeen < this.#o.seriesWindowMs) {
      s.count++
      s.lastObserved = now
      s.timer ??= this.#clock.setTimer(() => this.#flushSeries(s), this.#o.seriesFlushMs)
      return
    }
    if (s) this.#finish(key, s) // past the window: a new Event
    if (!this.#bucket(uid).tryTake()) {
      this.#log.debug('event dropped by the per-object rate limit', {
        reason,
        object: regarding.metadata.name,
      })
      return
    }
    const namespace = regarding.metadata.namespace || 'default'
    const series: Series = {
      namespace,
      name: undefined,
      count: 1,
      written: 0,
      lastObserved: now,
      firstSeen: now,
      timer: undefined,
      pending: undefined,
    }
    this.#series.set(key, series)
    for (const [k, old] of this.#series) {
      if (this.#series.size <= MAX_REMEMBERED_EVENTS) break
      this.#finish(k, old)
    }
    const body: KubeEvent = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        // Time + random: unique across processes (several node agents report on one object at once).
        name: `${regarding.metadata.name}.${now.toString(16)}${randomBytes(4).toString('hex')}`,
        namespace,
      },
      eventTime: microTime(now),
      reportingController: this.#o.controller,
      reportingInstance: this.#o.instance,
      action,
      reason,
      regarding: objectReference(regarding),
      note: note.length > MAX_NOTE ? `${note.slice(0, MAX_NOTE - 3)}...` : note,
      type,
    }
    series.pending = this.#track(
      this.#client
        .resource<KubeEvent>(CORE_TYPES.events, namespace)
        .create(body)
        .then((created) => {
          series.name = created.metadata.name
          series.written = 1
        }),
      reason,
    )
  }

  /** Waits for every write in flight and flushes pending series counts (for shutdown and tests). */
  async flush(): Promise<void> {
    for (const s of this.#series.values()) {
      if (s.timer) {
        s.timer()
        this.#flushSeries(s)
      }
    }
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes])
  }

  /**
   * Forgets series not observed for `seriesFinishMs` and buckets that have refilled
   * (a full bucket is what a new one would be). Runs at most once per flush interval.
   */
  #forgetFinished(now: number): void {
    if (now - this.#lastSweep < this.#o.seriesFlushMs) return
    this.#lastSweep = now
    for (const [key, s] of this.#series)
      if (now - s.lastObserved >= this.#o.seriesFinishMs) this.#finish(key, s)
    for (const [uid, b] of this.#buckets) if (b.tokens() >= this.#o.burst) this.#buckets.delete(uid)
  }

  /** Writes what a series has not written yet, and forgets it. */
  #finish(key: string, s: Series): void {
    if (s.timer) {
      s.timer()
      this.#flushSeries(s)
    }
    this.#series.delete(key)
  }

  #flushSeries(s: Series): void {
    s.timer = undefined
    const write = async (): Promise<void> => {
      await s.pending
      if (!s.name || s.count === s.written) return
      const count = s.count
      await this.#client
        .resource(CORE_TYPES.events, s.namespace)
        .patch(s.name, { series: { count, lastObservedTime: microTime(s.lastObserved) } }, 'merge')
      s.written = count
    }
    s.pending = this.#track(write(), 'series')
  }

  #bucket(uid: string): TokenBucket {
    let b = this.#buckets.get(uid)
    if (!b) {
      b = new TokenBucket({ qps: 1000 / this.#o.refillMs, burst: this.#o.burst, clock: this.#clock })
      this.#buckets.set(uid, b)
      for (const old of this.#buckets.keys()) {
        if (this.#buckets.size <= MAX_REMEMBERED_EVENTS) break
        this.#buckets.delete(old)
      }
    }
    return b
  }

  #track(p: Promise<void>, what: string): Promise<void> {
    const tracked = p.catch((err: unknown) =>
      this.#log.warn('recording an event failed', { event: what, error: errorMessage(err) }),
    )
    this.#writes.add(tracked)
    void tracked.finally(() => this.#writes.delete(tracked))
    return tracked
  }
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

function objectReference(o: KubeObject): ObjectReference {
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    ...definedProps({
      namespace: o.metadata.namespace || undefined,
      uid: o.metadata.uid || undefined,
      resourceVersion: o.metadata.resourceVersion || undefined,
    }),
  }
}
