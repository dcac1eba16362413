/**
 * @module state — the list/watch engine as a pure state machine.
 *
 * `step(state, input)` performs no I/O and reads no clock: it returns the next
 * state, what to emit to the cache, and the next command for the driver. The rules
 * are client-go's reflector (`tools/cache/reflector.go`, `tools/pager/pager.go`);
 * each is cited where it is applied. Which errors count as expired, too-large or
 * throttled is decided in `classify.ts`.
 *
 * The state is a union discriminated by `phase`: every phase carries the resume point,
 * the settings and the health ({@link WatchBase}) plus only its own data, so a list in
 * progress outside `listing` or a wait plan outside `waiting` cannot be represented.
 *
 * Ownership: states are immutable and replaced by every step, except the two buffers
 * that grow with the collection — a paginated list's items and a streaming list's
 * objects by key. They are {@link OwnedBuffer}s: edited in place and handed on to the
 * next state, not copied (copy-on-write would copy the buffer on every event, O(n²)
 * for a 10,000-object streaming list; handing it on keeps the initial list O(n)). So a
 * state holding a buffer can be stepped once: a second step on it throws
 * `EDGEOP_ERR_WATCH` instead of sharing the buffer. The emitted `replace` takes the
 * buffer out for good.
 */
import { EdgeopError } from '../core/errors.ts'
import { type KubeObject, objectKey, type Status } from '../core/types.ts'
import { failureOfStatus, otherFailure } from './classify.ts'
import type {
  Command,
  FailureInfo,
  Input,
  ListRequest,
  WaitReason,
  WatcherEvent,
  WatchRequest,
} from './events.ts'
import { OwnedBuffer } from './owned-buffer.ts'
import {
  base,
  type ListingState,
  type ListProgress,
  newList,
  type OpeningWatchState,
  type StreamListingState,
  succeeded,
  type WaitingState,
  type WatchBase,
  type WatchingState,
  type WatchState,
} from './phases.ts'

// The state's types are part of this module's API; the helpers of phases.ts are not.
export {
  DEFAULT_PAGE_SIZE,
  type IdleState,
  initialState,
  type ListingState,
  type ListProgress,
  type OpeningWatchState,
  type Phase,
  type StateOptions,
  type StreamListingState,
  type WaitingState,
  type WatchBase,
  type WatchingState,
  type WatchState,
} from './phases.ts'

import { definedProps } from '../core/defined-props.ts'

/** Annotation on the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end'
/** client-go: a watch that ends within 1 s with no event is an error, not a clean close. */
export const VERY_SHORT_WATCH_MS = 1000

/** The result of one {@link step}. */
export interface Step<T extends KubeObject> {
  state: WatchState<T>
  emit: WatcherEvent<T>[]
  next: Command
}

const none: never[] = []
const read: Command = { op: 'read' }

/**
 * Advances the engine by one input. Throws `EDGEOP_ERR_WATCH` for an input the phase
 * cannot receive (the driver only feeds results of the command last returned) and for a
 * state whose buffer already moved on (the state was stepped before).
 */
export function step<T extends KubeObject>(s: WatchState<T>, input: Input<T>): Step<T> {
  switch (input.type) {
    case 'start':
      // Never synced yet holding a resume point: seeded (StateOptions.resumeFrom). Watch from it, list nothing.
      if (s.phase === 'idle' && s.lastSyncRV && !s.synced) return openWatch(base(s))
      return beginCycle(base(s), streamFallbackOf(s))
    case 'resume':
      if (s.phase !== 'waiting') break
      if (s.afterWait === 'rewatch') return openWatch(base(s))
      return beginCycle(base(s), s.afterWait === 'relist-paginated')
    case 'list-page':
      if (s.phase === 'listing') return onListPage(s, input)
      break
    case 'list-failed':
      if (s.phase === 'listing') return onListFailed(s, input.failure)
      break
    case 'watch-opened':
      if (s.phase === 'stream-listing') return { state: s, emit: none, next: read }
      if (s.phase === 'opening-watch') return { state: { ...s, phase: 'watching' }, emit: none, next: read }
      break
    case 'watch-start-failed':
      if (s.phase === 'stream-listing') return onStreamFailed(s, input.failure)
      // client-go isWatchErrorRetriable: connection refused / 429 → delay, re-open the watch (no relist).
      if (s.phase === 'opening-watch')
        return wait(
          base(s),
          'watch-start-failed',
          input.failure.throttledOrRefused ? 'rewatch' : 'relist',
          input.failure,
        )
      break
    case 'event':
      if (s.phase === 'stream-listing') return onInitialEvent(s, input.event)
      if (s.phase === 'watching') return onEvent(s, input.event)
      break
    case 'stream-ended':
      if (s.phase === 'stream-listing') return onStreamListEnded(s, input)
      if (s.phase === 'watching') return onWatchEnded(s, input)
      break
  }
  throw new EdgeopError('EDGEOP_ERR_WATCH', `watch state: input ${input.type} in phase ${s.phase}`, {
    step: 'watch state',
  })
}

/** Whether a cycle begun now must list rather than stream (streaming failed in this cycle). */
function streamFallbackOf(s: WatchState): boolean {
  if (s.phase === 'listing') return s.streamFallback
  return s.phase === 'waiting' && s.afterWait === 'relist-paginated'
}

/** A list/watch cycle: streaming list if allowed and not refused this cycle, else a paginated list. */
function beginCycle<T extends KubeObject>(b: WatchBase, streamFallback: boolean): Step<T> {
  if (b.streaming === 'auto' && !streamFallback) {
    // client-go watchList(): '' on first start (consistent read) or when unavailable, else lastSyncRV.
    const rv = b.rvUnavailable ? '' : b.lastSyncRV
    const request: WatchRequest = {
      resourceVersion: rv,
      allowWatchBookmarks: true,
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
    }
    const state: StreamListingState<T> = {
      ...b,
      phase: 'stream-listing',
      initial: new OwnedBuffer(new Map<string, T>()),
    }
    return { state, emit: none, next: { op: 'watch', request } }
  }
  const first = listRequest(b)
  const state: ListingState<T> = { ...b, phase: 'listing', list: newList(first), streamFallback }
  return { state, emit: none, next: { op: 'list', request: first } }
}

/** client-go `relistResourceVersion()` and the pager's page-size rule. */
function listRequest(s: WatchBase): ListRequest {
  const rv = s.rvUnavailable ? '' : s.lastSyncRV === '' ? '0' : s.lastSyncRV
  // RV other than ''/'0' without pagination forces the watch cache (avoids a herd on etcd),
  // unless an earlier RV '0' list came back paginated (the cache is off).
  const limit = rv === '' || rv === '0' || s.paginatedResult ? s.pageSize : undefined
  return definedProps({ resourceVersion: rv || undefined, limit: limit || undefined })
}

function onListPage<T extends KubeObject>(
  s: ListingState<T>,
  page: Extract<Input<T>, { type: 'list-page' }>,
): Step<T> {
  const list = s.list
  const isFirst = list.pages === 0
  const rv = isFirst ? page.resourceVersion : list.rv
  const items = list.items.take()
  for (const item of page.items) items.push(item)
  if (page.continue) {
    // Continued pages: clear RV/RVMatch (kubernetes/kubernetes#85221), keep the page size.
    const request: ListRequest = {
      continue: page.continue,
      ...definedProps({ limit: list.first.limit || undefined }),
    }
    const paginated = s.paginatedResult || (isFirst && list.first.resourceVersion === '0')
    const next: ListProgress<T> = { ...list, rv, pages: list.pages + 1, items: new OwnedBuffer(items) }
    return {
      state: { ...s, paginatedResult: paginated, list: next },
      emit: none,
      next: { op: 'list', request },
    }
  }
  const opened = openWatch<T>(succeeded(s, rv))
  return { ...opened, emit: [{ type: 'replace', objects: items, resourceVersion: rv }] }
}

function onListFailed<T extends KubeObject>(s: ListingState<T>, f: FailureInfo): Step<T> {
  const list = s.list
  if (f.expired && list.pages > 0 && !list.fullRetry) {
    // Pager: a continue token expired on page ≥ 2 → one unpaginated list at the original RV.
    const { limit: _limit, ...unpaginated } = list.first
    return {
      state: { ...s, list: newList(unpaginated, true) },
      emit: none,
      next: { op: 'list', request: unpaginated },
    }
  }
  // kubernetes/kubernetes#83520, kubernetes/kubernetes#92537: relist from '' immediately, no backoff.
  if ((f.expired || f.tooLargeRv) && !s.rvUnavailable)
    return beginCycle(base(s, { rvUnavailable: true, lastError: f.error }), s.streamFallback)
  return wait(base(s), 'list-failed', s.streamFallback ? 'relist-paginated' : 'relist', f)
}

/** Opens the watch after a successful list (or resumes after a clean close). */
function openWatch<T extends KubeObject>(b: WatchBase): Step<T> {
  const request: WatchRequest = { resourceVersion: b.lastSyncRV, allowWatchBookmarks: true }
  const syntheticAdds = b.lastSyncRV === '' || b.lastSyncRV === '0'
  const state: OpeningWatchState = { ...b, phase: 'opening-watch', syntheticAdds }
  return { state, emit: none, next: { op: 'watch', request } }
}

function onEvent<T extends KubeObject>(s: WatchingState, ev: { type: string; object: T }): Step<T> {
  const rv = ev.object?.metadata?.resourceVersion
  switch (ev.type) {
    case 'ADDED':
    case 'MODIFIED':
    case 'DELETED': {
      const type = ev.type === 'ADDED' ? 'added' : ev.type === 'MODIFIED' ? 'modified' : 'deleted'
      // kubernetes/kubernetes#136583: synthetic ADDEDs of a ''/'0' watch are not RV-ordered: do not resume from them.
      const synthetic = s.syntheticAdds && ev.type === 'ADDED'
      const state: WatchingState = {
        ...s,
        syntheticAdds: synthetic,
        lastSyncRV: !synthetic && rv ? rv : s.lastSyncRV,
        failures: 0,
        lastError: undefined,
      }
      return { state, emit: [{ type, object: ev.object }], next: read }
    }
    case 'BOOKMARK':
      return { state: { ...s, syntheticAdds: false, lastSyncRV: rv || s.lastSyncRV }, emit: none, next: read }
    case 'ERROR': {
      // ERROR 429 → delay, re-open the watch; 410 or anything else → delay, relist from lastSyncRV.
      const f = failureOfStatus(ev.object as unknown as Status)
      if (f.throttledOrRefused) return wait(base(s), 'throttled', 'rewatch', f)
      return wait(base(s), 'watch-failed', 'relist', f)
    }
    default:
      return { state: s, emit: none, next: read }
  }
}

/** A streaming list's initial events: buffer by key, never advance the RV from ADDEDs. */
function onInitialEvent<T extends KubeObject>(
  s: StreamListingState<T>,
  ev: { type: string; object: T },
): Step<T> {
  switch (ev.type) {
    case 'ADDED':
    case 'MODIFIED': {
      const initial = s.initial.update((m) => m.set(objectKey(ev.object), ev.object))
      return { state: { ...s, initial }, emit: none, next: read }
    }
    case 'DELETED': {
      const initial = s.initial.update((m) => m.delete(objectKey(ev.object)))
      return { state: { ...s, initial }, emit: none, next: read }
    }
    case 'BOOKMARK': {
      if (ev.object?.metadata?.annotations?.[INITIAL_EVENTS_END_ANNOTATION] !== 'true')
        return { state: s, emit: none, next: read }
      const rv = ev.object.metadata.resourceVersion ?? ''
      const objects = [...s.initial.take().values()]
      // The same stream goes on as the normal watch.
      const state: WatchingState = { ...succeeded(s, rv), phase: 'watching', syntheticAdds: false }
      return { state, emit: [{ type: 'replace', objects, resourceVersion: rv }], next: read }
    }
    case 'ERROR':
      return onStreamFailed(s, failureOfStatus(ev.object as unknown as Status))
    default:
      return { state: s, emit: none, next: read }
  }
}

/** client-go watchList() error handling; the partial initial state is always discarded. */
function onStreamFailed<T extends KubeObject>(s: StreamListingState<T>, f: FailureInfo): Step<T> {
  if (f.throttledOrRefused) return wait(base(s), 'watch-start-failed', 'relist', f)
  if ((f.expired || f.tooLargeRv) && !s.rvUnavailable)
    return beginCycle(base(s, { rvUnavailable: true, lastError: f.error }), false)
  // Anything else (the server refuses sendInitialEvents, decode error, …): list this cycle.
  return beginCycle(base(s, { lastError: f.error }), true)
}

type StreamEnded<T extends KubeObject> = Extract<Input<T>, { type: 'stream-ended' }>

const isVeryShort = (e: StreamEnded<KubeObject>): boolean =>
  e.durationMs < VERY_SHORT_WATCH_MS && e.events === 0

function onStreamListEnded<T extends KubeObject>(s: StreamListingState<T>, e: StreamEnded<T>): Step<T> {
  if (e.failure) return onStreamFailed(s, e.failure)
  if (isVeryShort(e))
    return onStreamFailed(
      s,
      otherFailure(new Error('the streaming list ended within a second with no event')),
    )
  // Closed before the end bookmark: retry at once with a fresh buffer.
  return beginCycle(base(s), false)
}

function onWatchEnded<T extends KubeObject>(s: WatchingState, e: StreamEnded<T>): Step<T> {
  if (e.failure) return wait(base(s), 'watch-failed', 'relist', e.failure)
  if (isVeryShort(e)) {
    const f = otherFailure(new Error('the watch ended within a second with no event'))
    return wait(base(s), 'very-short-watch', 'relist', f)
  }
  // Clean close (server timeout, EOF, idle teardown): re-watch at once from lastSyncRV, no relist.
  return openWatch(base(s))
}

function wait<T extends KubeObject>(
  b: WatchBase,
  reason: WaitReason,
  afterWait: WaitingState['afterWait'],
  f: FailureInfo,
): Step<T> {
  const minMs = f.retryAfterSeconds !== undefined ? f.retryAfterSeconds * 1000 : undefined
  const state: WaitingState = {
    ...b,
    phase: 'waiting',
    afterWait,
    failures: b.failures + 1,
    lastError: f.error,
  }
  return { state, emit: none, next: { op: 'wait', reason, ...definedProps({ minMs }) } }
}
