/**
 * @module manual-clock — the fake clock for unit tests of time-dependent code: core's `ManualClock`,
 * re-exported so a test needs only `edgeop/testing` (time moves only when the test advances it).
 */
export { ManualClock } from '../core/clock.ts'
