/**
 * The pure decision of which database call comes next: intent before a create, read back when
 * a create's outcome is unknown, poll while provisioning.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  databaseCondition,
  nextDatabaseAction,
  progressOfRecord,
  progressOfTask,
} from '../../../src/operators/appservice/database-plan.ts'

test('nothing recorded and an entry wanted: create (after recording the intent)', () => {
  assert.equal(nextDatabaseAction(true, undefined), 'create')
})

test('a create recorded but its outcome unknown: read back before creating again', () => {
  assert.equal(nextDatabaseAction(true, { phase: 'Creating' }), 'read-back')
})

test('provisioning: poll the task; ready: no call', () => {
  assert.equal(nextDatabaseAction(true, { phase: 'Provisioning', task: 't' }), 'poll')
  assert.equal(nextDatabaseAction(true, { phase: 'Ready' }), 'none')
})

test('no entry wanted: remove what is recorded, call nothing otherwise', () => {
  assert.equal(nextDatabaseAction(false, { phase: 'Ready' }), 'remove')
  assert.equal(nextDatabaseAction(false, { phase: 'Creating' }), 'remove')
  assert.equal(nextDatabaseAction(false, undefined), 'none')
})

test('what the service says becomes what is recorded', () => {
  assert.deepEqual(progressOfRecord({ state: 'ready' }), { phase: 'Ready' })
  assert.deepEqual(progressOfRecord({ state: 'provisioning', task: 't1' }), {
    phase: 'Provisioning',
    task: 't1',
  })
})

test('a poll: succeeded is Ready, running stays, an unknown task sends the entry back to read-back', () => {
  const p = { phase: 'Provisioning', task: 't1' } as const
  assert.deepEqual(progressOfTask(p, { state: 'succeeded', progress: 100 }), { phase: 'Ready', task: 't1' })
  assert.equal(progressOfTask(p, { state: 'running', progress: 40 }), p)
  assert.equal(nextDatabaseAction(true, progressOfTask(p, undefined)), 'read-back')
})

test('the DatabaseReady condition carries the progress', () => {
  assert.deepEqual(databaseCondition({ phase: 'Provisioning', task: 't1' }, 40), {
    type: 'DatabaseReady',
    status: 'False',
    reason: 'DatabaseProvisioning',
    message: 'task t1: 40% done',
  })
  assert.equal(databaseCondition({ phase: 'Ready' }).status, 'True')
})
