/**
 * @module events — what the list/watch state machine consumes, emits and asks for.
 */
import type { KubeObject, WatchEvent } from '../core/types.ts'

/**
 * What the watcher emits to its consumer (the cache).
 *
 * `replace` carries the complete current state after a (re)list or a streaming
 * list; the consumer must treat keys it holds that are absent as deleted. Events
 * carry the object as the server sent it (after the watcher's transform).
 */
export type WatcherEvent<T extends KubeObject = KubeObject> =
  | { type: 'replace'; objects: T[]; resourceVersion: string }
  | { type: 'added' | 'modified' | 'deleted'; object: T }

/** Parameters of one LIST page request. */
export interface ListRequest {
  /** `''` for a consistent read from etcd, or a version to read at or after. */
  resourceVersion?: string
  /** How `resourceVersion` is matched; `NotOlderThan` after a sync, so a relist never goes back in time. */
  resourceVersionMatch?: 'NotOlderThan' | 'Exact'
  /** Page size; absent for an unpaginated list. */
  limit?: number
  /** Token of the next page, from the previous page's metadata. */
  continue?: string
}

/** Parameters of one WATCH request. The driver adds selectors and `timeoutSeconds`. */
export interface WatchRequest {
  /** Version to watch from: changes after it arrive as events. */
  resourceVersion: string
  /** Always asked for: bookmarks move the resume point without an object change. */
  allowWatchBookmarks: true
  /** A streaming list: the current state arrives as ADDED events, then a bookmark. */
  sendInitialEvents?: true
  /** `NotOlderThan` with `sendInitialEvents`, as the API requires. */
  resourceVersionMatch?: 'NotOlderThan'
}

/** Why the driver must wait before the next request. */
export type WaitReason =
  | 'list-failed'
  | 'watch-start-failed'
  | 'watch-failed'
  | 'throttled'
  | 'very-short-watch'

/** What the driver must do next. */
export type Command =
  | { op: 'list'; request: ListRequest }
  | { op: 'watch'; request: WatchRequest }
  /** Keep reading events from the open stream. */
  | { op: 'read' }
  /** Close the open stream (if any), wait a backoff delay (at least `minMs`), then feed `{ type: 'resume' }`. */
  | { op: 'wait'; reason: WaitReason; minMs?: number }

/** A failure as the state machine needs to see it (classified by the driver, see `classify`). */
export interface FailureInfo {
  /** 410 Gone/Expired. */
  expired: boolean
  /** 504 "Too large resource version". */
  tooLargeRv: boolean
  /** 429 or connection refused: the server is busy or down, retry the same step after a delay. */
  throttledOrRefused: boolean
  /** Seconds the server asked to wait, if it said. */
  retryAfterSeconds?: number
  /** The error itself, for health reporting and logs. */
  error: unknown
}

/** What happened, as fed to {@link step}. */
export type Input<T extends KubeObject = KubeObject> =
  | { type: 'start' }
  | { type: 'resume' }
  | { type: 'list-page'; items: T[]; resourceVersion: string; continue?: string }
  | { type: 'list-failed'; failure: FailureInfo }
  | { type: 'watch-opened' }
  | { type: 'watch-start-failed'; failure: FailureInfo }
  | { type: 'event'; event: WatchEvent<T> }
  /**
   * The stream ended. `failure` is set for decode errors and server ERROR events
   * turned into failures by the driver; transport errors and idle timeouts count as
   * a clean end (client-go: probable EOF and timeouts close the watch).
   */
  | { type: 'stream-ended'; durationMs: number; events: number; failure?: FailureInfo }
