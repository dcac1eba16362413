/**
 * @module phases — the list/watch engine's state: one phase and only that phase's data.
 *
 * Every phase carries the resume point, the settings and the health ({@link WatchBase});
 * beside them it carries only its own data, so a list in progress outside `listing`, a
 * wait plan outside `waiting` or a stale initial-events buffer after a streaming list
 * cannot be represented. The transitions are in `state.ts`; its header says who owns the
 * two growing buffers ({@link OwnedBuffer}) and why they are handed on, not copied.
 */
import type { KubeObject } from '../core/types.ts'
import type { ListRequest } from './events.ts'
import { OwnedBuffer } from './owned-buffer.ts'

/** client-go pager default page size: 500. */
export const DEFAULT_PAGE_SIZE = 500

/** Where the engine is. */
export type Phase = 'idle' | 'listing' | 'stream-listing' | 'opening-watch' | 'watching' | 'waiting'

/** What every phase carries: resume point, settings, health. */
export interface WatchBase {
  /** client-go `lastSyncResourceVersion`: `''` until the first successful list. */
  readonly lastSyncRV: string
  /** The last list/stream with `lastSyncRV` got 410 or too-large: list from `''` next (client-go `isLastSyncResourceVersionUnavailable`). */
  readonly rvUnavailable: boolean
  /** Whether to try a streaming list (`sendInitialEvents`) before a paginated list. */
  readonly streaming: 'auto' | 'off'
  readonly pageSize: number
  /** An RV "0" list came back paginated: the watch cache is off, keep paginating (client-go `paginatedResult`). */
  readonly paginatedResult: boolean
  /** Consecutive failures since the last success (for health). */
  readonly failures: number
  /** The last failure's error; `undefined` after a success. */
  readonly lastError: unknown
  /** Set once the first full state was emitted. */
  readonly synced: boolean
}

/** Nothing started yet. */
export interface IdleState extends WatchBase {
  readonly phase: 'idle'
}

/** A paginated list is in flight. */
export interface ListingState<T extends KubeObject = KubeObject> extends WatchBase {
  readonly phase: 'listing'
  readonly list: ListProgress<T>
  /** Streaming failed in this cycle: list (again after a failure) until a list succeeds, then stream again (client-go). */
  readonly streamFallback: boolean
}

/** A streaming list (`sendInitialEvents`) is in flight: its initial events are buffered by key. */
export interface StreamListingState<T extends KubeObject = KubeObject> extends WatchBase {
  readonly phase: 'stream-listing'
  readonly initial: OwnedBuffer<Map<string, T>>
}

/** A watch was requested after a list, or is being re-opened. */
export interface OpeningWatchState extends WatchBase {
  readonly phase: 'opening-watch'
  /** The watch starts from `''`/`'0'`: its ADDEDs are synthetic until the first other event (kubernetes/kubernetes#136583). */
  readonly syntheticAdds: boolean
}

/** Events are flowing. */
export interface WatchingState extends WatchBase {
  readonly phase: 'watching'
  /** Only synthetic ADDEDs seen so far on a watch from `''`/`'0'`: they do not move the resume RV (kubernetes/kubernetes#136583). */
  readonly syntheticAdds: boolean
}

/** Backing off; `resume` then starts what `afterWait` says. */
export interface WaitingState extends WatchBase {
  readonly phase: 'waiting'
  /** `relist`: a new cycle (streaming first if allowed); `relist-paginated`: a paginated list (streaming failed this cycle); `rewatch`: re-open the watch. */
  readonly afterWait: 'relist' | 'relist-paginated' | 'rewatch'
}

/** Engine state: one phase and only its data. `state.ts` explains who owns its buffers. */
export type WatchState<T extends KubeObject = KubeObject> =
  | IdleState
  | ListingState<T>
  | StreamListingState<T>
  | OpeningWatchState
  | WatchingState
  | WaitingState

/** A paginated list in progress. */
export interface ListProgress<T extends KubeObject> {
  /** RV of the first page: the RV of the whole list. */
  readonly rv: string
  readonly first: ListRequest
  readonly pages: number
  /** Items of the pages so far. */
  readonly items: OwnedBuffer<T[]>
  /** The unpaginated retry after an expired continue token is under way. */
  readonly fullRetry: boolean
}

/** A paginated list with no page yet; `fullRetry` marks the unpaginated retry after an expired continue token. */
export function newList<T extends KubeObject>(first: ListRequest, fullRetry = false): ListProgress<T> {
  return { rv: '', first, pages: 0, items: new OwnedBuffer<T[]>([]), fullRetry }
}

/** How the engine lists: page size, and whether to try a streaming list first. */
export interface StateOptions {
  /** Items per page of a paginated list. Default {@link DEFAULT_PAGE_SIZE}. */
  pageSize?: number
  /** `'auto'` (default): streaming list first, paginated list when the server refuses it. */
  streaming?: 'auto' | 'off'
  /**
   * Start by watching from this resourceVersion instead of listing: the consumer already
   * holds the collection's state at it (a restored snapshot). A 410 then relists as usual.
   */
  resumeFrom?: string
}

/** A fresh engine. */
export function initialState(o: StateOptions = {}): IdleState {
  return {
    phase: 'idle',
    lastSyncRV: o.resumeFrom ?? '',
    rvUnavailable: false,
    streaming: o.streaming ?? 'auto',
    pageSize: o.pageSize ?? DEFAULT_PAGE_SIZE,
    paginatedResult: false,
    failures: 0,
    lastError: undefined,
    synced: false,
  }
}

/** The fields every phase carries, with `changes`; drops the phase's own data (engine-internal). */
export function base(s: WatchBase, changes: Partial<WatchBase> = {}): WatchBase {
  return {
    lastSyncRV: s.lastSyncRV,
    rvUnavailable: s.rvUnavailable,
    streaming: s.streaming,
    pageSize: s.pageSize,
    paginatedResult: s.paginatedResult,
    failures: s.failures,
    lastError: s.lastError,
    synced: s.synced,
    ...changes,
  }
}

/** A success: the resume point moves to `rv`, health resets (engine-internal). */
export const succeeded = (s: WatchBase, rv: string): WatchBase =>
  base(s, { lastSyncRV: rv, rvUnavailable: false, failures: 0, lastError: undefined, synced: true })
