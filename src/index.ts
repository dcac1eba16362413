/** @module edgeop — the library: every layer's public API (the reference operators and the CLI are not part of it). */
export * from './cache/index.ts'
export * from './client/index.ts'
export * from './config/index.ts'
export * from './controller/index.ts'
export * from './core/index.ts'
export * from './leader/index.ts'
export * from './queue/index.ts'
export * from './watch/index.ts'
