/** @module cache — informers, indexed stores and the factory that shares them. */
export {
  CompactIndexer,
  type CompactIndexerOptions,
  toEncodedObject,
} from './compact-indexer.ts'
export * from './factory.ts'
export * from './index-funcs.ts'
export * from './informer.ts'
export type { DeleteInfo, EventHandler, HandlerRegistration } from './listener.ts'
export * from './memory-indexer.ts'
export * from './multi-namespace-informer.ts'
export { type DirectoryProblem, ownDirectory, resolveExisting, shownPath } from './own-directory.ts'
export {
  type AtomicWriteOptions,
  lockCacheDir,
  MAX_SNAPSHOT_BYTES,
  readRegularFile,
  syncDir,
  writeFileAtomic,
} from './snapshot-file.ts'
export {
  decodeSnapshot,
  encodeSnapshot,
  type SnapshotContents,
  type SnapshotIdentity,
} from './snapshot-format.ts'
export type { SnapshotOptions } from './snapshot-keeper.ts'
export {
  SNAPSHOT_MIN_INTERVAL_MS,
  SNAPSHOT_QUIET_MS,
  type SnapshotSchedule,
  type SnapshotTiming,
  snapshotDueAt,
} from './snapshot-schedule.ts'
export * from './store.ts'
export type { SyncState } from './sync-state.ts'
export * from './transforms.ts'
