/**
 * @module watcher — the driver that runs the list/watch state machine against the server.
 *
 * It is the only part of the engine that does I/O or waits: it executes each
 * command of {@link step}, feeds back what happened, sleeps on one shared
 * {@link Backoff} (list and watch failures share it, kubernetes/kubernetes#118132), honours
 * `Retry-After`, tears down watches that go silent, and reports health. It never
 * exits the process and never stops on its own: only its signal ends it.
 */

import type { WatchStream } from '../client/raw-watch.ts'
import { raceAbort } from '../core/abort.ts'
import { Backoff } from '../core/backoff.ts'
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import type { KubeObject, WatchEvent } from '../core/types.ts'
import { classify, midStreamFailure } from './classify.ts'
import type { Command, Input, ListRequest, WatcherEvent, WatchRequest } from './events.ts'
import type { ListerWatcher } from './lister-watcher.ts'
import { initialState, type Phase, type StateOptions, step, type WatchState } from './state.ts'

/** client-go reflector `minWatchTimeout`: 5 min; the server timeout is drawn from [min, max). */
export const DEFAULT_MIN_WATCH_TIMEOUT_S = 300
/** client-go reflector: max = 2 × min = 10 min. */
export const DEFAULT_MAX_WATCH_TIMEOUT_S = 600
/** kube-rs `WATCH_IDLE_TIMEOUT_MARGIN`: a watch silent for its timeout + 5 s is dead. */
export const DEFAULT_IDLE_MARGIN_MS = 5_000

/** Options of {@link Watcher}. */
export interface WatcherOptions<T extends KubeObject> extends StateOptions {
  /** Lower bound of the random watch timeout. Default {@link DEFAULT_MIN_WATCH_TIMEOUT_S}. */
  minWatchTimeoutSeconds?: number
  /** Upper bound of the random watch timeout. Default {@link DEFAULT_MAX_WATCH_TIMEOUT_S}. */
  maxWatchTimeoutSeconds?: number
  /** Extra silence, beyond the server's timeout, after which the stream is torn down. Default {@link DEFAULT_IDLE_MARGIN_MS}. */
  idleMarginMs?: number
  /** Applied to every listed or watched object before it is emitted (e.g. strip managedFields). */
  transform?: (obj: T) => T
  /** Backoff between failed lists and watches, shared by both. Default: client-go's reflector backoff (0.8 s → 30 s). */
  backoff?: Backoff
  /** Time source; inject a ManualClock in tests. */
  clock?: Clock
  /** Randomness in [0, 1) for the watch timeout. */
  random?: () => number
  logger?: Logger
  /** Called at each bookmark the server sends, with its resourceVersion (the server has sent every change up to it). */
  onBookmark?: (resourceVersion: string) => void
}

/** Health for readiness probes and metrics. */
export interface WatcherHealth {
  /** What the engine is doing now: listing, watching, waiting, … */
  phase: Phase
  /** The first full state has been emitted. */
  synced: boolean
  /** Resume point (opaque). */
  resourceVersion: string
  /** When the last full state was emitted (ms since epoch); undefined before. */
  lastSyncAt: number | undefined
  /** When the server last sent anything (list page, event, bookmark). */
  lastHeardAt: number | undefined
  /** Failed lists or watches since the last success. */
  consecutiveFailures: number
  /** Message of the last failure, if any. */
  lastError: string | undefined
}

/** Consumer of watcher output. Awaited: a slow sink slows reading (backpressure). */
export type WatcherSink<T extends KubeObject> = (event: WatcherEvent<T>) => void | Promise<void>

/**
 * Lists and watches one collection for as long as its signal lives.
 *
 * Guarantees: after a `replace`, the sink sees every change in order; a dropped
 * connection resumes from the last resourceVersion without a relist; a 410 relists
 * and the `replace` describes the whole state; failures back off (0.8 s → 30 s,
 * jittered, reset after 2 min of health) and never stop the watcher.
 * Does not guarantee: that every intermediate state is seen (a relist collapses history).
 *
 * @example
 * const w = new Watcher(listerWatcher(client.resource(CORE_TYPES.pods, 'ns')))
 * await w.run((ev) => console.log(ev.type), signal)
 */
export class Watcher<T extends KubeObject = KubeObject> {
  /** Where the collection is listed and watched from. */
  readonly source: ListerWatcher<T>
  readonly #options: WatcherOptions<T>
  readonly #clock: Clock
  readonly #backoff: Backoff
  readonly #random: () => number
  readonly #log: Logger
  #state: WatchState<T>
  #lastSyncAt: number | undefined
  #lastHeardAt: number | undefined
  #running = false
  #stream: WatchStream<T> | undefined
  #events: AsyncIterator<WatchEvent<T>> | undefined
  #openedAt = 0
  #eventCount = 0

  /** A watcher over `source`; it does nothing until {@link Watcher.run}. */
  constructor(source: ListerWatcher<T>, options: WatcherOptions<T> = {}) {
    this.source = source
    this.#options = options
    this.#clock = options.clock ?? realClock
    this.#backoff = options.backoff ?? new Backoff({ clock: this.#clock })
    this.#random = options.random ?? Math.random
    this.#log = (options.logger ?? noopLogger).child({ watch: source.describe })
    this.#state = initialState(options)
  }

  /** Current health. */
  health(): WatcherHealth {
    const s = this.#state
    return {
      phase: s.phase,
      synced: s.synced,
      resourceVersion: s.lastSyncRV,
      lastSyncAt: this.#lastSyncAt,
      lastHeardAt: this.#lastHeardAt,
      consecutiveFailures: s.failures,
      lastError: s.lastError === undefined ? undefined : describeError(s.lastError),
    }
  }

  /**
   * Seeds a watcher that has not run: it will start by watching from `resourceVersion`
   * (the caller holds the state at it, e.g. a restored snapshot) instead of listing.
   */
  resumeFrom(resourceVersion: string): void {
    if (!this.#running && this.#state.phase === 'idle')
      this.#state = initialState({ ...this.#options, resumeFrom: resourceVersion })
  }

  /** Runs until `signal` aborts; resolves then. Rejects only if the sink throws. */
  async run(sink: WatcherSink<T>, signal: AbortSignal): Promise<void> {
    if (this.#running) throw new Error(`watcher for ${this.source.describe} is already running`)
    this.#running = true
    // Close the open stream the moment the signal aborts, even if its producer ignores signals.
    const onAbort = (): void => this.#closeStream()
    signal.addEventListener('abort', onAbort, { once: true })
    try {
      let next = this.#advance({ type: 'start' }).next
      while (!signal.aborted) {
        const input = await this.#execute(next, signal)
        if (input === undefined) break
        // A bookmark of a plain watch (a streaming list's initial-events-end bookmark is its `replace`).
        const bookmark =
          input.type === 'event' && input.event.type === 'BOOKMARK' && this.#state.phase === 'watching'
        const r = this.#advance(input)
        for (const e of r.emit) {
          if (e.type === 'replace') this.#lastSyncAt = this.#clock.now()
          await sink(e)
        }
        if (bookmark) this.#options.onBookmark?.(this.#state.lastSyncRV)
        next = r.next
      }
    } finally {
      signal.removeEventListener('abort', onAbort)
      this.#closeStream()
      this.#running = false
    }
  }

  #advance(input: Input<T>): { next: Command; emit: WatcherEvent<T>[] } {
    const r = step(this.#state, input)
    this.#state = r.state
    return r
  }

  #closeStream(): void {
    this.#stream?.close()
    this.#stream = undefined
    this.#events = undefined
  }

  /** Duration and event count of the open watch, for the very-short-watch rule. */
  #streamStats(): { durationMs: number; events: number } {
    return { durationMs: this.#clock.monotonic() - this.#openedAt, events: this.#eventCount }
  }

  async #execute(cmd: Command, signal: AbortSignal): Promise<Input<T> | undefined> {
    switch (cmd.op) {
      case 'list':
        return this.#list(cmd.request, signal)
      case 'watch':
        return this.#openWatch(cmd.request, signal)
      case 'read':
        return this.#read(signal)
      case 'wait': {
        this.#closeStream()
        const ms = Math.max(this.#backoff.next(), cmd.minMs ?? 0)
        this.#log.info('waiting before retrying', { reason: cmd.reason, delayMs: Math.round(ms) })
        try {
          await sleep(ms, this.#clock, signal)
        } catch {
          return undefined
        }
        return { type: 'resume' }
      }
    }
  }

  async #list(request: ListRequest, signal: AbortSignal): Promise<Input<T> | undefined> {
    try {
      const page = await raceAbort(this.source.list(request, signal), signal)
      this.#lastHeardAt = this.#clock.now()
      const meta = page.metadata ?? {}
      return {
        type: 'list-page',
        items: this.#transformAll(page.items ?? []),
        resourceVersion: meta.resourceVersion ?? '',
        continue: meta.continue || undefined,
      }
    } catch (err) {
      if (signal.aborted) return undefined
      this.#log.warn('list failed', { error: describeError(err) })
      return { type: 'list-failed', failure: classify(err) }
    }
  }

  async #openWatch(request: WatchRequest, signal: AbortSignal): Promise<Input<T> | undefined> {
    this.#closeStream()
    const min = this.#options.minWatchTimeoutSeconds ?? DEFAULT_MIN_WATCH_TIMEOUT_S
    const max = Math.max(min, this.#options.maxWatchTimeoutSeconds ?? DEFAULT_MAX_WATCH_TIMEOUT_S)
    const timeoutSeconds = Math.max(1, Math.floor(min + this.#random() * (max - min)))
    const idleTimeoutMs = timeoutSeconds * 1000 + (this.#options.idleMarginMs ?? DEFAULT_IDLE_MARGIN_MS)
    // Measured from before the request (kubernetes/kubernetes#89652: some proxies send headers with the first event).
    this.#openedAt = this.#clock.monotonic()
    this.#eventCount = 0
    try {
      this.#stream = await raceAbort(
        this.source.watch({ ...request, timeoutSeconds, idleTimeoutMs }, signal),
        signal,
      )
      this.#events = this.#stream.events[Symbol.asyncIterator]()
      return { type: 'watch-opened' }
    } catch (err) {
      if (signal.aborted) return undefined
      this.#log.warn('watch could not be opened', { error: describeError(err) })
      return { type: 'watch-start-failed', failure: classify(err) }
    }
  }

  async #read(signal: AbortSignal): Promise<Input<T> | undefined> {
    const it = this.#events
    if (!it) return { type: 'stream-ended', durationMs: 0, events: 0 }
    try {
      const r = await raceAbort(it.next(), signal)
      if (r.done) {
        const stats = this.#streamStats()
        this.#closeStream()
        return { type: 'stream-ended', ...stats }
      }
      this.#eventCount++
      this.#lastHeardAt = this.#clock.now()
      const ev = r.value
      const object = ev.type === 'BOOKMARK' || ev.type === 'ERROR' ? ev.object : this.#transform(ev.object)
      return { type: 'event', event: { type: ev.type, object } }
    } catch (err) {
      if (signal.aborted) return undefined
      const stats = this.#streamStats()
      this.#closeStream()
      this.#log.info('watch stream ended', { error: describeError(err) })
      // Transport errors and idle teardown end the watch cleanly; a stream that is not a watch
      // stream is a failure (see classify.ts).
      const failure = midStreamFailure(err)
      return { type: 'stream-ended', ...stats, failure }
    }
  }

  #transform(obj: T): T {
    const t = this.#options.transform
    return t ? t(obj) : obj
  }

  #transformAll(items: T[]): T[] {
    const t = this.#options.transform
    return t ? items.map(t) : items
  }
}

function describeError(err: unknown): string {
  if (typeof err === 'object' && err !== null && (err as { kind?: unknown }).kind === 'Status') {
    const s = err as { code?: number; reason?: string; message?: string }
    return `${s.code ?? ''} ${s.reason ?? ''}: ${s.message ?? ''}`.trim()
  }
  return errorMessage(err)
}
