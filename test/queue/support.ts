/** @module support — small helpers shared by the queue tests. */
import { flushMicrotasks } from '../../src/core/clock.ts'

/** The state of a promise after pending reactions have run: `{ done: false }` or its value. */
export async function peek<T>(p: Promise<T>): Promise<{ done: false } | { done: true; value: T }> {
  let state: { done: false } | { done: true; value: T } = { done: false }
  p.then((value) => {
    state = { done: true, value }
  })
  await flushMicrotasks()
  return state
}

/** Lets the event loop turn once (no timers, no sleeping). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** Suite options: a hung promise fails the suite after 60 s instead of hanging the run. */
export const SUITE = { timeout: 60_000 }
