/** @module cleanup — the last-resort teardown hooks; one implementation, in `edgeop/testing` (src/testing/cleanup.ts). */
export * from '../../src/testing/cleanup.ts'
