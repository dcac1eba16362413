/** @module watch — list/watch that survives anything: a pure state machine and its driver. */
export * from './events.ts'
export * from './lister-watcher.ts'
export * from './state.ts'
export * from './watcher.ts'
