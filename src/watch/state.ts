/**
 * @module state — the list/watch engine as a pure state machine.
 *
 * `step(state, input)` performs no I/O and reads no clock: it returns the next
 * state, what to emit to the cache, and the next command for the driver. The rules
 * are client-go's reflector (`tools/cache/reflector.go`, `tools/pager/pager.go`);
 * each is cited where it is applied. The state is owned by one driver; `step` may
 * reuse its buffers, so never feed one state to two steps.
 */
import { type KubeObject, objectKey, type Status } from '../core/types.ts'
import type {
  Command,
  FailureInfo,
  Input,
  ListRequest,
  WaitReason,
  WatcherEvent,
  WatchRequest,
} from './events.ts'

/** client-go pager default page size: 500. */
export const DEFAULT_PAGE_SIZE = 500
/** Annotation on the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end'
/** client-go: a watch that ends within 1 s with no event is an error, not a clean close. */
export const VERY_SHORT_WATCH_MS = 1000

/** Where the engine is. */
export type Phase = 'idle' | 'listing' | 'stream-listing' | 'opening-watch' | 'watching' | 'waiting'

/** Engine state. Plain data; see the module note on ownership. */
export interface WatchState<T extends KubeObject = KubeObject> {
  readonly phase: Phase
  /** client-go `lastSyncResourceVersion`: `''` until the first successful list. */
  readonly lastSyncRV: string
  /** The last list/stream with `lastSyncRV` got 410 or too-large: list from `''` next (client-go `isLastSyncResourceVersionUnavailable`). */
  readonly rvUnavailable: boolean
  /** Whether to try a streaming list (`sendInitialEvents`) before a paginated list. */
  readonly streaming: 'auto' | 'off'
  /** Streaming failed in this cycle: list this time, try streaming again at the next relist (client-go). */
  readonly streamFallback: boolean
  readonly pageSize: number
  /** An RV "0" list came back paginated: the watch cache is off, keep paginating (client-go `paginatedResult`). */
  readonly paginatedResult: boolean
  /** The list in progress: its first page's RV and request, pages received, items so far. */
  readonly list?: ListProgress<T>
  /** Streaming list in progress: objects by key. */
  readonly initial?: Map<string, T>
  /** The open watch started from `''`/`'0'` and has only seen ADDED so far (client-go #136583). */
  readonly syntheticAdds: boolean
  /** After the wait: what to do. */
  readonly afterWait?: 'relist' | 'rewatch' | 'restream'
  /** Consecutive failures since the last success (for health). */
  readonly failures: number
  readonly lastError?: unknown
  /** Set once the first full state was emitted. */
  readonly synced: boolean
}

/** A paginated list in progress. */
export interface ListProgress<T extends KubeObject> {
  /** RV of the first page: the RV of the whole list. */
  rv: string
  first: ListRequest
  pages: number
  items: T[]
  /** The unpaginated retry after an expired continue token is under way. */
  fullRetry: boolean
}

function newList<T extends KubeObject>(first: ListRequest, fullRetry = false): ListProgress<T> {
  return { rv: '', first, pages: 0, items: [], fullRetry }
}

/** Options of {@link initialState}. */
export interface StateOptions {
  pageSize?: number
  /** `'auto'` (default): streaming list first, paginated list when the server refuses it. */
  streaming?: 'auto' | 'off'
}

/** A fresh engine. */
export function initialState<T extends KubeObject>(o: StateOptions = {}): WatchState<T> {
  return {
    phase: 'idle',
    lastSyncRV: '',
    rvUnavailable: false,
    streaming: o.streaming ?? 'auto',
    streamFallback: false,
    pageSize: o.pageSize ?? DEFAULT_PAGE_SIZE,
    paginatedResult: false,
    syntheticAdds: false,
    failures: 0,
    synced: false,
  }
}

/** The result of one {@link step}. */
export interface Step<T extends KubeObject> {
  state: WatchState<T>
  emit: WatcherEvent<T>[]
  next: Command
}

const none: never[] = []

/** Advances the engine by one input. */
export function step<T extends KubeObject>(s: WatchState<T>, input: Input<T>): Step<T> {
  switch (input.type) {
    case 'start':
      return beginCycle(s)
    case 'resume':
      if (s.afterWait === 'rewatch') return openWatch({ ...s, afterWait: undefined })
      return beginCycle({ ...s, afterWait: undefined })
    case 'list-page':
      return onListPage(s, input)
    case 'list-failed':
      return onListFailed(s, input.failure)
    case 'watch-opened':
      return {
        state: { ...s, phase: s.phase === 'stream-listing' ? 'stream-listing' : 'watching' },
        emit: none,
        next: { op: 'read' },
      }
    case 'watch-start-failed':
      return onWatchStartFailed(s, input.failure)
    case 'event':
      return s.phase === 'stream-listing' ? onInitialEvent(s, input.event) : onEvent(s, input.event)
    case 'stream-ended':
      return onStreamEnded(s, input)
  }
}

/** A list/watch cycle: streaming list if allowed, else a paginated list. */
function beginCycle<T extends KubeObject>(s: WatchState<T>): Step<T> {
  if (s.streaming === 'auto' && !s.streamFallback) {
    // client-go watchList(): '' on first start (consistent read) or when unavailable, else lastSyncRV.
    const rv = s.rvUnavailable ? '' : s.lastSyncRV
    const request: WatchRequest = {
      resourceVersion: rv,
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    }
    return {
      state: { ...s, phase: 'stream-listing', initial: new Map(), syntheticAdds: true },
      emit: none,
      next: { op: 'watch', request },
    }
  }
  const first = listRequest(s)
  return {
    state: { ...s, phase: 'listing', list: newList(first), initial: undefined },
    emit: none,
    next: { op: 'list', request: first },
  }
}

/** client-go `relistResourceVersion()` and the pager's page-size rule. */
function listRequest(s: WatchState): ListRequest {
  const rv = s.rvUnavailable ? '' : s.lastSyncRV === '' ? '0' : s.lastSyncRV
  // RV other than ''/'0' without pagination forces the watch cache (avoids a herd on etcd),
  // unless an earlier RV '0' list came back paginated (the cache is off).
  const limit = rv === '' || rv === '0' || s.paginatedResult ? s.pageSize : undefined
  return { ...(rv === '' ? {} : { resourceVersion: rv }), ...(limit ? { limit } : {}) }
}

function onListPage<T extends KubeObject>(
  s: WatchState<T>,
  page: Extract<Input<T>, { type: 'list-page' }>,
): Step<T> {
  const list = s.list ?? newList<T>(listRequest(s))
  const isFirst = list.pages === 0
  const rv = isFirst ? page.resourceVersion : list.rv
  for (const item of page.items) list.items.push(item)
  list.pages++
  if (page.continue) {
    // Continued pages: clear RV/RVMatch (client-go #85221), keep the page size.
    const request: ListRequest = {
      continue: page.continue,
      ...(list.first.limit ? { limit: list.first.limit } : {}),
    }
    const paginated = s.paginatedResult || (isFirst && list.first.resourceVersion === '0')
    return {
      state: { ...s, paginatedResult: paginated, list: { ...list, rv } },
      emit: none,
      next: { op: 'list', request },
    }
  }
  const synced: WatchState<T> = {
    ...s,
    lastSyncRV: rv,
    rvUnavailable: false,
    streamFallback: false,
    list: undefined,
    failures: 0,
    lastError: undefined,
    synced: true,
  }
  const emit: WatcherEvent<T>[] = [{ type: 'replace', objects: list.items, resourceVersion: rv }]
  const next = openWatch(synced)
  return { state: next.state, emit, next: next.next }
}

function onListFailed<T extends KubeObject>(s: WatchState<T>, f: FailureInfo): Step<T> {
  const list = s.list
  if (f.expired && list && list.pages > 0 && !list.fullRetry) {
    // Pager: a continue token expired on page ≥ 2 → one unpaginated list at the original RV.
    const { limit: _limit, ...unpaginated } = list.first
    return {
      state: { ...s, list: newList(unpaginated, true) },
      emit: none,
      next: { op: 'list', request: unpaginated },
    }
  }
  if (f.expired || f.tooLargeRv) {
    // client-go #83520/#92537: relist from '' immediately, no backoff.
    if (!s.rvUnavailable)
      return beginCycle({ ...s, rvUnavailable: true, list: undefined, lastError: f.error })
  }
  return wait({ ...s, list: undefined }, 'list-failed', 'relist', f)
}

/** Opens the watch after a successful list (or resumes after a clean close). */
function openWatch<T extends KubeObject>(s: WatchState<T>): Step<T> {
  const request: WatchRequest = { resourceVersion: s.lastSyncRV, allowWatchBookmarks: true }
  return {
    state: { ...s, phase: 'opening-watch', syntheticAdds: s.lastSyncRV === '' || s.lastSyncRV === '0' },
    emit: none,
    next: { op: 'watch', request },
  }
}

function onWatchStartFailed<T extends KubeObject>(s: WatchState<T>, f: FailureInfo): Step<T> {
  if (s.phase === 'stream-listing') return onStreamFailed(s, f)
  // client-go isWatchErrorRetriable: connection refused / 429 → delay, re-open the watch (no relist).
  if (f.throttledOrRefused) return wait(s, 'watch-start-failed', 'rewatch', f)
  return wait(s, 'watch-start-failed', 'relist', f)
}

function onEvent<T extends KubeObject>(s: WatchState<T>, ev: { type: string; object: T }): Step<T> {
  const rv = ev.object?.metadata?.resourceVersion
  switch (ev.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const type = ev.type === 'ADDED' ? 'added' : ev.type === 'MODIFIED' ? 'modified' : 'deleted'
      // #136583: synthetic ADDEDs of a ''/'0' watch are not RV-ordered: do not resume from them.
      const synthetic = s.syntheticAdds && ev.type === 'ADDED'
      const state: WatchState<T> = {
        ...s,
        syntheticAdds: synthetic,
        lastSyncRV: !synthetic && rv ? rv : s.lastSyncRV,
        failures: 0,
        lastError: undefined,
      }
      return { state, emit: [{ type, object: ev.object }], next: { op: 'read' } }
    }
    case 'BOOKMARK':
      return {
        state: { ...s, syntheticAdds: false, lastSyncRV: rv || s.lastSyncRV },
        emit: none,
        next: { op: 'read' },
      }
    case 'ERROR':
      return onWatchError(s, failureOfStatus(ev.object as unknown as Status))
    default:
      return { state: s, emit: none, next: { op: 'read' } }
  }
}

function onWatchError<T extends KubeObject>(s: WatchState<T>, f: FailureInfo): Step<T> {
  // ERROR 429 → delay, re-open the watch; 410 or anything else → delay, relist from lastSyncRV.
  if (f.throttledOrRefused) return wait(s, 'throttled', 'rewatch', f)
  return wait(s, 'watch-failed', 'relist', f)
}

/** A streaming list's initial events: buffer by key, never advance the RV from ADDEDs. */
function onInitialEvent<T extends KubeObject>(s: WatchState<T>, ev: { type: string; object: T }): Step<T> {
  const initial = s.initial ?? new Map<string, T>()
  switch (ev.type) {
    case 'ADDED':
    case 'MODIFIED':
      initial.set(objectKey(ev.object), ev.object)
      return { state: { ...s, initial }, emit: none, next: { op: 'read' } }
    case 'DELETED':
      initial.delete(objectKey(ev.object))
      return { state: { ...s, initial }, emit: none, next: { op: 'read' } }
    case 'BOOKMARK': {
      if (ev.object?.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true')
        return { state: s, emit: none, next: { op: 'read' } }
      const rv = ev.object.metadata.resourceVersion ?? ''
      const state: WatchState<T> = {
        ...s,
        phase: 'watching',
        initial: undefined,
        lastSyncRV: rv,
        rvUnavailable: false,
        syntheticAdds: false,
        failures: 0,
        lastError: undefined,
        synced: true,
      }
      // The same stream goes on as the normal watch.
      return {
        state,
        emit: [{ type: 'replace', objects: [...initial.values()], resourceVersion: rv }],
        next: { op: 'read' },
      }
    }
    case 'ERROR':
      return onStreamFailed(s, failureOfStatus(ev.object as unknown as Status))
    default:
      return { state: s, emit: none, next: { op: 'read' } }
  }
}

/** client-go watchList() error handling; the partial initial state is always discarded. */
function onStreamFailed<T extends KubeObject>(s: WatchState<T>, f: FailureInfo): Step<T> {
  const fresh = { ...s, initial: undefined }
  if (f.throttledOrRefused) return wait(fresh, 'watch-start-failed', 'restream', f)
  if ((f.expired || f.tooLargeRv) && !s.rvUnavailable)
    return beginCycle({ ...fresh, rvUnavailable: true, lastError: f.error })
  // Anything else (the server refuses sendInitialEvents, decode error, …): list this cycle.
  return beginCycle({ ...fresh, streamFallback: true, lastError: f.error })
}

function onStreamEnded<T extends KubeObject>(
  s: WatchState<T>,
  e: Extract<Input<T>, { type: 'stream-ended' }>,
): Step<T> {
  const veryShort = e.durationMs < VERY_SHORT_WATCH_MS && e.events === 0
  if (s.phase === 'stream-listing') {
    if (e.failure) return onStreamFailed(s, e.failure)
    if (veryShort)
      return onStreamFailed(s, plainFailure('the streaming list ended within a second with no event'))
    // Closed before the end bookmark: retry at once with a fresh buffer.
    return beginCycle({ ...s, initial: undefined })
  }
  if (e.failure) return wait(s, 'watch-failed', 'relist', e.failure)
  if (veryShort) {
    return wait(
      s,
      'very-short-watch',
      'relist',
      plainFailure('the watch ended within a second with no event'),
    )
  }
  // Clean close (server timeout, EOF, idle teardown): re-watch at once from lastSyncRV, no relist.
  return openWatch(s)
}

function plainFailure(message: string): FailureInfo {
  return { expired: false, tooLargeRv: false, throttledOrRefused: false, error: new Error(message) }
}

function wait<T extends KubeObject>(
  s: WatchState<T>,
  reason: WaitReason,
  after: 'relist' | 'rewatch' | 'restream',
  f: FailureInfo,
): Step<T> {
  const minMs = f.retryAfterSeconds !== undefined ? f.retryAfterSeconds * 1000 : undefined
  const state: WatchState<T> = {
    ...s,
    phase: 'waiting',
    afterWait: after === 'restream' ? 'relist' : after,
    failures: s.failures + 1,
    lastError: f.error,
    initial: undefined,
  }
  return { state, emit: none, next: { op: 'wait', reason, ...(minMs === undefined ? {} : { minMs }) } }
}

/** A watch ERROR event's Status as a failure. */
export function failureOfStatus(status: Status): FailureInfo {
  const code = status?.code ?? 500
  const retry = status?.details?.retryAfterSeconds
  return {
    expired: code === 410,
    tooLargeRv: (status?.details?.causes ?? []).some((c) => c.reason === 'ResourceVersionTooLarge'),
    throttledOrRefused: code === 429,
    ...(retry === undefined ? {} : { retryAfterSeconds: retry }),
    error: status,
  }
}
