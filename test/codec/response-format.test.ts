/**
 * One format per request: the Accept header, the protobuf error decoder and the body decoders a list or watch
 * call uses all come from one choice, and the answer's Content-Type decides between protobuf and JSON.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CONFIG_MAP_V1, POD_V1 } from '../../src/codec/protobuf/kinds.generated.ts'
import { responseFormat } from '../../src/codec/response-format.ts'
import { isEncodedObject } from '../../src/core/encoded-object.ts'
import type { KubeList, KubeObject } from '../../src/core/types.ts'
import { corpusFile, corpusJson } from './protobuf/corpus.ts'

const PB = 'application/vnd.kubernetes.protobuf'
const jsonOnly = (): never => assert.fail('the JSON reader is not asked for a protobuf answer')

test('a type without a protobuf kind asks for JSON only and has no protobuf error decoder', () => {
  const f = responseFormat({}, {})
  assert.equal(f.kind, undefined)
  assert.equal(f.accept, 'application/json')
  assert.equal(f.decodeStatus, undefined)
})

test("a type with its protobuf kind asks for protobuf first, JSON second; format 'json' asks for JSON only", () => {
  const f = responseFormat({ protobuf: POD_V1 }, {})
  assert.equal(f.kind, POD_V1)
  assert.equal(f.accept, `${PB},application/json`)
  assert.equal(typeof f.decodeStatus, 'function')
  assert.equal(responseFormat({ protobuf: POD_V1 }, { format: 'json' }).accept, 'application/json')
})

test("metadata-only calls ask for PartialObjectMetadata in protobuf first, with or without the type's kind", () => {
  const meta = ';as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'
  for (const type of [{ protobuf: POD_V1 }, {}]) {
    const f = responseFormat(type, {}, 'PartialObjectMetadataList')
    assert.equal(f.accept, `${PB}${meta},application/json${meta},application/json`)
    assert.equal(`${f.kind?.apiVersion} ${f.kind?.kind}`, 'meta.k8s.io/v1 PartialObjectMetadata')
    assert.equal(typeof f.decodeStatus, 'function')
  }
  assert.equal(
    responseFormat({}, { format: 'json' }, 'PartialObjectMetadataList').accept,
    `application/json${meta},application/json`,
  )
})

test('a metadata-only list of a type without its protobuf kind decodes the real protobuf PartialObjectMetadataList', () => {
  // pods.metadata.list.pb: the apiserver's answer to client-go's metadata Accept header (record-corpus.ts).
  const f = responseFormat({}, {}, 'PartialObjectMetadataList')
  const list = f.list(PB, corpusFile('pods.metadata.list.pb'), {}, jsonOnly)
  assert.deepStrictEqual(list, corpusJson('pods.metadata.list.json'))
  assert.ok(list.items.length > 0, 'the corpus holds Pods')
  const stubs = f.list(PB, corpusFile('pods.metadata.list.pb'), { keepBytes: true }, jsonOnly)
  assert.ok(stubs.items.every(isEncodedObject))
  assert.deepEqual(
    stubs.items.map((o) => o.metadata.name),
    list.items.map((o) => o.metadata.name),
  )
})

test('a metadata-only get decodes the real protobuf PartialObjectMetadata the apiserver answers, equal to its JSON', () => {
  // pods.metadata.get.pb: the apiserver's answer to a get with client-go's metadata Accept header (record-corpus.ts).
  const f = responseFormat({}, {}, 'PartialObjectMetadata')
  assert.equal(
    f.accept,
    `${PB};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json`,
  )
  const one = f.object<KubeObject>(PB, corpusFile('pods.metadata.get.pb'), jsonOnly)
  assert.deepStrictEqual(one, corpusJson('pods.metadata.get.json'))
  assert.ok(one.metadata.managedFields?.length, 'a get keeps managedFields, as the JSON answer has them')
  let asked = 0
  const fromJson = f.object('application/json', corpusFile('pods.metadata.get.json'), (b) => {
    asked++
    return JSON.parse(Buffer.from(b).toString('utf8'))
  })
  assert.equal(asked, 1, 'a JSON answer goes through the JSON reader')
  assert.deepStrictEqual(fromJson, corpusJson('pods.metadata.get.json'))
})

test("the answer's Content-Type decides: a protobuf list is decoded as protobuf, a JSON one through the JSON reader", () => {
  const f = responseFormat({ protobuf: CONFIG_MAP_V1 }, {})
  const fromPb = f.list(PB, corpusFile('configmaps.list.pb'), {}, jsonOnly)
  assert.deepEqual(fromPb, corpusJson('configmaps.list.json'))
  const json = corpusFile('configmaps.list.json')
  let asked = 0
  const fromJson = f.list('application/json', json, {}, (b) => {
    asked++
    return JSON.parse(Buffer.from(b).toString('utf8')) as KubeList
  })
  assert.equal(asked, 1)
  assert.deepEqual(fromJson, corpusJson('configmaps.list.json'))
})

test('keepBytes yields stubs from either answer, without the JSON reader', () => {
  const f = responseFormat({ protobuf: CONFIG_MAP_V1 }, {})
  for (const [ct, file] of [
    [PB, 'configmaps.list.pb'],
    ['application/json', 'configmaps.list.json'],
  ] as const) {
    const list = f.list(ct, corpusFile(file), { keepBytes: true }, jsonOnly)
    assert.ok(list.items.length > 0)
    assert.ok(list.items.every(isEncodedObject), `${file}: every item is a stub`)
  }
})
