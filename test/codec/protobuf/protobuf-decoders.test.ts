/**
 * The decoders a kind carries (`kind.decoders`) make their own Status and PartialObjectMetadata kinds (the
 * table's import the decoders, so the decoders cannot import them): they must stay the table's.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PARTIAL_OBJECT_METADATA_V1, POD_V1, STATUS_V1 } from '../../../src/codec/protobuf/kinds.generated.ts'
import { decodeProtobufObject } from '../../../src/codec/protobuf/objects.ts'
import { PROTOBUF_DECODERS } from '../../../src/codec/protobuf/protobuf-decoders.ts'
import { corpusFile, corpusJson } from './corpus.ts'

test("the wire's PartialObjectMetadata kind is the table's: same apiVersion, kind and message", () => {
  const ours = PROTOBUF_DECODERS.partialObjectMetadata
  assert.equal(ours.apiVersion, PARTIAL_OBJECT_METADATA_V1.apiVersion)
  assert.equal(ours.kind, PARTIAL_OBJECT_METADATA_V1.kind)
  assert.equal(ours.message, PARTIAL_OBJECT_METADATA_V1.message)
  assert.equal(ours.decoders, PROTOBUF_DECODERS)
})

test("the wire's Status decoder reads what the table's STATUS_V1 reads", () => {
  const bytes = corpusFile('status.notfound.pb')
  assert.deepStrictEqual(PROTOBUF_DECODERS.status(bytes), decodeProtobufObject(STATUS_V1, bytes))
  assert.deepStrictEqual(PROTOBUF_DECODERS.status(bytes), corpusJson('status.notfound.json'))
})

test('every kind of the table carries the wire', () => {
  assert.equal(POD_V1.decoders, PROTOBUF_DECODERS)
  assert.equal(STATUS_V1.decoders, PROTOBUF_DECODERS)
})
