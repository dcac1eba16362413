import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Capabilities } from './capabilities.ts'
import type { Peer } from './peers.ts'
import { handlerRuns } from './variants.ts'

const edgeop = { id: 'edgeop' } as Peer
const all: Capabilities = { informerProtobuf: true, listProtobuf: true, compact: true, evidence: [] }

test('the replay rows of a handler that declares what it reads name it and pass it to the peer', () => {
  const runs = handlerRuns([edgeop], all)
  assert.deepEqual(
    runs.map((r) => [r.row, r.job]),
    [
      [
        'edgeop (protobuf, compact, handler reads the new object)',
        { wire: 'protobuf', store: 'compact', handlerReads: 'new' },
      ],
      [
        'edgeop (protobuf, compact, handler reads metadata)',
        { wire: 'protobuf', store: 'compact', handlerReads: 'metadata' },
      ],
    ],
  )
})

test('without the compact store (or without edgeop) there is no handler row: the eager store decodes anyway', () => {
  assert.deepEqual(handlerRuns([edgeop], { ...all, compact: false }), [])
  assert.deepEqual(handlerRuns([], all), [])
})
