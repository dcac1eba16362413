/**
 * Which failures get their stack logged: bounded memory, frames only, distinct by throw site.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorStacks, MAX_STACK_CHARS, stackFrames } from '../../src/controller/error-stacks.ts'

const withStack = (stack: string, message = 'boom'): Error => {
  const err = new Error(message)
  err.stack = stack
  return err
}

test('stackFrames keeps the `at` lines only, so a multi-line message never reaches the stack field', () => {
  const err = withStack(
    'Error: password=hunter2\nsecond line of the message\n    at f (a.ts:1:1)\n    at g (b.ts:2:2)',
  )
  assert.equal(stackFrames(err), 'at f (a.ts:1:1)\nat g (b.ts:2:2)')
  assert.equal(stackFrames(withStack('Error: no frames')), undefined)
  const long = stackFrames(withStack(`Error: x\n${'    at f (a.ts:1:1)\n'.repeat(1000)}`))!
  assert.equal(long.length, MAX_STACK_CHARS + 1)
  assert.ok(long.endsWith('…'))
})

test('memory stays bounded: past the limit the oldest object is forgotten and logs its stack again', () => {
  const stacks = new ErrorStacks(3)
  const err = withStack('Error: x\n    at f (a.ts:1:1)')
  for (const key of ['a', 'b', 'c', 'd']) assert.ok(stacks.stackFor(key, err))
  assert.equal(stacks.size, 3)
  assert.equal(stacks.stackFor('d', err), undefined, 'd is remembered')
  assert.ok(stacks.stackFor('a', err), 'a was evicted, so its stack is logged again')
  assert.equal(stacks.size, 3)
})

test('errors differing only in message are the same error; a different code is not', () => {
  const stacks = new ErrorStacks()
  const frames = 'Error: x\n    at f (a.ts:1:1)'
  assert.ok(stacks.stackFor('k', withStack(frames, 'rv 1')))
  assert.equal(stacks.stackFor('k', withStack(frames, 'rv 2')), undefined)
  const coded = Object.assign(withStack(frames), { code: 'EDGEOP_ERR_API' })
  assert.ok(stacks.stackFor('k', coded))
  stacks.forget('k')
  assert.ok(stacks.stackFor('k', coded), 'forgotten after a success')
})
