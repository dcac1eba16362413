import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { SCANNED_FIELDS } from '../../../src/codec/json-codec.ts'
import { cutManagedFields, protobufCodec, scanProtobufMeta } from '../../../src/codec/protobuf/codec.ts'
import { decodeMessage } from '../../../src/codec/protobuf/decode.ts'
import type { KindSchema } from '../../../src/codec/protobuf/kind-schema.ts'
import * as KINDS from '../../../src/codec/protobuf/kinds.generated.ts'
import { decodeProtobufList } from '../../../src/codec/protobuf/objects.ts'
import { ENCODED, isEncodedObject, materialize } from '../../../src/core/encoded-object.ts'
import { CORPUS_KINDS, corpusFile, schemaOf } from './corpus.ts'

describe('the protobuf codec (scan, cut, decode on demand) over the recorded corpus', () => {
  test('every kind of the table keeps its ObjectMeta in field 1 (the scanner relies on it)', () => {
    for (const [name, value] of Object.entries(KINDS)) {
      const kind = value as KindSchema
      if (!('kind' in kind) || kind.kind === 'Status') continue
      const field = kind.message.compiled().byNumber[1]
      assert.equal(field?.name, 'metadata', `${name}: field 1 is ${field?.name}`)
      assert.equal(field?.message?.name, 'ObjectMeta', name)
    }
  })
  for (const k of CORPUS_KINDS) {
    test(`${k.file}: stubs scan the same metadata as the full decode, and decode back to it without managedFields`, () => {
      const kind = schemaOf(k)
      const codec = protobufCodec(kind)
      const eager = decodeProtobufList(kind, corpusFile(`${k.file}.list.pb`), { dropManagedFields: true })
      const stubs = decodeProtobufList(kind, corpusFile(`${k.file}.list.pb`), {
        dropManagedFields: true,
        keepBytes: codec,
      })
      assert.equal(stubs.items.length, eager.items.length)
      stubs.items.forEach((stub, i) => {
        const full = eager.items[i] as { metadata: Record<string, unknown> }
        assert.ok(isEncodedObject(stub))
        const want = Object.fromEntries(
          SCANNED_FIELDS.filter((f) => full.metadata[f] !== undefined).map((f) => [f, full.metadata[f]]),
        )
        assert.deepStrictEqual(stub.metadata, want)
        assert.deepStrictEqual(materialize(stub), full)
        assert.equal(JSON.stringify(stub).includes('ENCODED'), false)
        // The stub keeps its own bytes (as a string), not a view into the list body.
        assert.equal(stub[ENCODED].length, stub[ENCODED].bytes.byteLength)
      })
    })
  }
  test('cutting managedFields gives the bytes of the object without them, and the same buffer when there are none', () => {
    const list = corpusFile('pods.list.pb')
    const stubs = decodeProtobufList(KINDS.POD_V1, list, { keepBytes: protobufCodec(KINDS.POD_V1) })
    for (const stub of stubs.items) {
      if (!isEncodedObject(stub)) throw new Error('not a stub')
      const bytes = stub[ENCODED].bytes
      const cut = cutManagedFields(bytes)
      assert.ok(cut.byteLength < bytes.byteLength)
      const full = decodeMessage(KINDS.POD_V1.message, bytes) as { metadata: Record<string, unknown> }
      delete full.metadata.managedFields
      assert.deepStrictEqual(decodeMessage(KINDS.POD_V1.message, cut), full)
      assert.equal(cutManagedFields(cut), cut)
    }
  })
  test('a scan of malformed bytes fails with EDGEOP_ERR_DECODE', () => {
    assert.throws(() => scanProtobufMeta(Uint8Array.of(0x0a, 0x05, 0x0a)), { code: 'EDGEOP_ERR_DECODE' })
    assert.deepStrictEqual(scanProtobufMeta(new Uint8Array(0)), {})
  })
})
