/** @module core — errors, time, backoff, logging and object types shared by every layer. */
export * from './abort.ts'
export * from './backoff.ts'
export * from './clock.ts'
export * from './errors.ts'
export * from './log.ts'
export * from './quote-input.ts'
export * from './token-bucket.ts'
export * from './types.ts'
