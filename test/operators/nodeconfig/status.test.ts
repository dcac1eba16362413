import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MAX_MESSAGE_LENGTH, type NodeConfig } from '../../../src/operators/nodeconfig/api.ts'
import {
  failureMessage,
  fieldManagerFor,
  keepOwnEntry,
  nextEntry,
  sameReport,
  statusApplyBody,
} from '../../../src/operators/nodeconfig/status.ts'

const config: NodeConfig = {
  apiVersion: 'platform.example.com/v1alpha1',
  kind: 'NodeConfig',
  metadata: { name: 'chrony', uid: 'u1', generation: 3 },
  spec: { files: [] },
  status: {
    nodes: [
      {
        name: 'edge-1',
        state: 'Applied',
        observedGeneration: 2,
        message: '1 file in place',
        lastTransitionTime: 'T0',
      },
      { name: 'edge-2', state: 'Failed', observedGeneration: 3, message: 'x', lastTransitionTime: 'T1' },
    ],
  },
}

test('one field manager per node, within the API server’s 128-character limit and still unique', () => {
  assert.equal(fieldManagerFor('edge-1'), 'edgeop-agent-edge-1')
  const long = `${'n'.repeat(200)}.example.com`
  const other = `${'n'.repeat(200)}.example.org`
  assert.equal(fieldManagerFor(long).length, 128)
  assert.notEqual(fieldManagerFor(long), fieldManagerFor(other))
})

test('the entry: observedGeneration from the object; lastTransitionTime moves only with the state', () => {
  const now = new Date('2026-11-29T12:00:00.123Z')
  const prev = config.status!.nodes![0]
  const same = nextEntry(config, 'edge-1', { state: 'Applied', message: '2 files in place' }, prev, now)
  assert.deepEqual(same, {
    name: 'edge-1',
    observedGeneration: 3,
    state: 'Applied',
    message: '2 files in place',
    lastTransitionTime: 'T0',
  })
  const flipped = nextEntry(config, 'edge-1', { state: 'Failed', message: 'boom' }, prev, now)
  assert.equal(flipped.lastTransitionTime, '2026-11-29T12:00:00Z')
  assert.equal(
    nextEntry(config, 'edge-9', { state: 'Applied', message: '' }, undefined, now).lastTransitionTime,
    '2026-11-29T12:00:00Z',
  )
})

test('sameReport ignores the transition time, not the generation, state or message', () => {
  const a = {
    name: 'n',
    state: 'Applied' as const,
    observedGeneration: 1,
    message: 'm',
    lastTransitionTime: 'A',
  }
  assert.ok(sameReport(a, { ...a, lastTransitionTime: 'B' }))
  assert.ok(!sameReport(a, { ...a, observedGeneration: 2 }))
  assert.ok(!sameReport(a, { ...a, state: 'Failed' }))
  assert.ok(!sameReport(a, { ...a, message: 'other' }))
  assert.ok(!sameReport(a, undefined))
  assert.ok(sameReport(undefined, undefined))
})

test('the apply body holds exactly this node’s entry (or none, to remove it), guarded by the UID', () => {
  const entry = { name: 'edge-1', state: 'Applied' as const, observedGeneration: 3, message: 'ok' }
  assert.deepEqual(statusApplyBody(config, entry), {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: 'chrony', uid: 'u1' },
    status: { nodes: [entry] },
  })
  assert.deepEqual(statusApplyBody(config, undefined), {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: 'chrony', uid: 'u1' },
  })
})

test('messages are capped; the cache keeps only this node’s entry', () => {
  const long = failureMessage(Array.from({ length: 100 }, (_, i) => `problem number ${i}`))
  assert.equal(long.length, MAX_MESSAGE_LENGTH)
  assert.ok(long.endsWith('...'))
  assert.equal(failureMessage(['a', 'b']), 'a; b')
  const mine = keepOwnEntry('edge-2')(config)
  assert.deepEqual(
    mine.status?.nodes?.map((e) => e.name),
    ['edge-2'],
  )
  assert.equal(config.status?.nodes?.length, 2, 'the input is not modified')
})
