/** @module watch — list/watch that survives anything: a pure state machine and its driver. */
export type { FailureInfo, ListRequest, WatcherEvent, WatchRequest } from './events.ts'
export {
  type DecodeChoice,
  type ListerWatcher,
  listerWatcher,
  type Selectors,
  type WatchCall,
} from './lister-watcher.ts'
export { DEFAULT_PAGE_SIZE, type StateOptions } from './phases.ts'
export { INITIAL_EVENTS_END_ANNOTATION } from './state.ts'
export {
  DEFAULT_IDLE_MARGIN_MS,
  DEFAULT_MAX_WATCH_TIMEOUT_S,
  DEFAULT_MIN_WATCH_TIMEOUT_S,
  Watcher,
  type WatcherHealth,
  type WatcherOptions,
  type WatcherSink,
} from './watcher.ts'
