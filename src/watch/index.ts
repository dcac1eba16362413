/** @module watch — list/watch that survives anything: a pure state machine and its driver. */
export * from './classify.ts'
export * from './events.ts'
export * from './lister-watcher.ts'
export * from './owned-buffer.ts'
export * from './state.ts'
export * from './watcher.ts'
