/** @module manager — the process runtime: runs controllers with shared informers, leader election, probes, metrics and graceful shutdown; preflight checks. */
export * from './manager.ts'
export * from './preflight.ts'
export * from './shutdown.ts'
