/**
 * @module attempt — runs one acquire-or-renew attempt of the pure state machine against the lock.
 *
 * The thin I/O half of `state.ts`: it executes each command, stamps each result with the local
 * monotonic time it arrived, and feeds it back, until the machine says `done`.
 */
import type { Clock } from '../core/clock.ts'
import type { LockCalls } from './lock-calls.ts'
import {
  type AttemptOutcome,
  begin,
  type ElectionState,
  type LockResult,
  observedHolder,
  step,
} from './state.ts'

/** The state after the attempt (with everything it observed) and how it ended. */
export interface AttemptResult {
  readonly state: ElectionState
  readonly outcome: AttemptOutcome
}

/**
 * Runs one attempt. Never rejects: a failed call is an input to the machine. Once `signal` has aborted
 * no further call is made and the attempt ends as failed, keeping what it had observed so far.
 */
export async function runAttempt(
  calls: LockCalls,
  initial: ElectionState,
  clock: Clock,
  signal: AbortSignal,
): Promise<AttemptResult> {
  let t = begin(initial, clock.monotonic(), clock.now())
  for (;;) {
    const { state, command } = t
    if (command.op === 'done') return { state, outcome: command.outcome }
    if (signal.aborted) {
      const stopped = { ...state, attempt: undefined }
      return {
        state: stopped,
        outcome: { acquired: false, reason: 'failed', holder: observedHolder(stopped), error: signal.reason },
      }
    }
    let result: LockResult
    try {
      if (command.op === 'get') {
        const record = await calls.run((lock, s) => lock.get(s), signal)
        result = { type: 'read', record, now: clock.monotonic() }
      } else {
        const record = command.record
        await calls.run(
          (lock, s) => (command.op === 'create' ? lock.create(record, s) : lock.update(record, s)),
          signal,
        )
        result = { type: 'written', now: clock.monotonic() }
      }
    } catch (error) {
      result = { type: 'failed', error, now: clock.monotonic() }
    }
    t = step(state, result)
  }
}
