/** When the aggregator writes a NodeConfig's status, pure: at once for agents and alerts, in steps for the counts. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  type AggregateStatus,
  COUNT_WRITE_STEP_PERCENT,
  maxStatusWritesPerRollout,
  statusWrite,
} from '../../../src/operators/nodeconfig/status-write.ts'

const status = (
  o: Partial<AggregateStatus> & { reason?: string; message?: string } = {},
): AggregateStatus => {
  const { reason = 'RollingOut', message = 'm', ...rest } = o
  return {
    observedGeneration: 2,
    desired: 100,
    applied: 0,
    failed: 0,
    rollout: { generation: 2, percent: 10 },
    conditions: [
      {
        type: 'Progressing',
        status: reason === 'FailureThresholdExceeded' ? 'False' : 'True',
        reason,
        message,
        observedGeneration: 2,
        lastTransitionTime: '2026-12-02T00:00:00Z',
      },
    ],
    ...rest,
  }
}

test('the same status is not written again', () => {
  assert.equal(statusWrite(status(), status(), false), 'none')
  assert.equal(statusWrite(status(), status(), true), 'none', 'settled and unchanged')
})

test('a new generation, a wave opening, a halt or the end is written at once: agents and alerts read them', () => {
  assert.equal(statusWrite(undefined, status(), false), 'now', 'the first status')
  assert.equal(statusWrite(status({ observedGeneration: 1 }), status(), false), 'now')
  assert.equal(statusWrite(status(), status({ rollout: { generation: 2, percent: 20 } }), false), 'now')
  assert.equal(statusWrite(status(), status({ failed: 1, reason: 'FailureThresholdExceeded' }), false), 'now')
  assert.equal(statusWrite(status(), status({ applied: 1 }), false, true), 'now', 'the shared list goes')
})

test('counts that moved by less than a step of the fleet are held; a step is written, at most once per interval', () => {
  const step = (100 * COUNT_WRITE_STEP_PERCENT) / 100
  assert.equal(statusWrite(status(), status({ applied: 1, message: '1 of 100' }), false), 'hold')
  assert.equal(statusWrite(status(), status({ applied: step - 1, message: 'x' }), false), 'hold')
  assert.equal(statusWrite(status(), status({ applied: step - 1, failed: 1, message: 'x' }), false), 'counts')
  assert.equal(statusWrite(status({ applied: 30 }), status({ applied: 30 + step }), false), 'counts')
  assert.equal(
    statusWrite(status({ desired: 4 }), status({ desired: 4, applied: 1 }), false),
    'counts',
    'a step is at least one node',
  )
})

test('once the open waves settled the counts are final for now and written at once, however little they moved', () => {
  const halted = status({ failed: 1, reason: 'FailureThresholdExceeded' })
  assert.equal(statusWrite(halted, { ...halted, applied: 3 }, false), 'hold', 'the halted wave still reports')
  assert.equal(statusWrite(halted, { ...halted, applied: 4 }, true), 'now', 'the halted wave settled')
})

test('a rollout is bounded by its waves and count steps, not by its fleet or its duration', () => {
  assert.equal(maxStatusWritesPerRollout(10), 10 + 100 / COUNT_WRITE_STEP_PERCENT + 1)
  assert.equal(maxStatusWritesPerRollout(100), 1 + 100 / COUNT_WRITE_STEP_PERCENT + 1)
  assert.equal(maxStatusWritesPerRollout(30), 4 + 100 / COUNT_WRITE_STEP_PERCENT + 1)
})
