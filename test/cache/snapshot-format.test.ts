/**
 * The snapshot format against corruption: every truncation point, random bit flips,
 * foreign identities and formats are refused with a reason, never decoded wrongly.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  decodeSnapshot,
  encodeSnapshot,
  SNAPSHOT_FORMAT,
  type SnapshotIdentity,
  sha256,
} from '../../src/cache/snapshot-format.ts'
import { jsonCodec } from '../../src/codec/json-codec.ts'
import { protobufCodec } from '../../src/codec/protobuf/codec.ts'
import { CONFIG_MAP_V1 } from '../../src/codec/protobuf/kinds.generated.ts'
import { decodeProtobufList } from '../../src/codec/protobuf/objects.ts'
import { encodedObject, isEncodedObject, materialize } from '../../src/core/encoded-object.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { corpusFile } from '../codec/protobuf/corpus.ts'
import { seededRandom } from '../support/random.ts'

const ID: SnapshotIdentity = {
  resource: '/v1/configmaps',
  namespace: 'ns',
  labelSelector: 'app=web',
  fieldSelector: '',
  metadataOnly: false,
  tag: '1.2.3',
}
const cm = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: 'ns', name, resourceVersion: rv },
  data: { text: `line one\nline two ${name} ünïcode` },
})
const OBJECTS = [cm('a', '11'), cm('b', '12'), cm('c', '13')]
const BYTES = encodeSnapshot(ID, '42', OBJECTS)

test('round trip: the objects and the resourceVersion come back; the header names format, resource, scope, selectors', () => {
  assert.deepEqual(decodeSnapshot(BYTES, ID), { resourceVersion: '42', objects: OBJECTS })
  const header = JSON.parse(BYTES.toString('utf8').split('\n')[0]!)
  assert.deepEqual(header, { format: SNAPSHOT_FORMAT, ...ID, resourceVersion: '42', count: 3 })
  const last = BYTES.toString('utf8').trimEnd().split('\n').at(-1)
  assert.equal(last, `sha256:${sha256(BYTES.subarray(0, BYTES.length - last!.length - 1))}`)
})

test('an empty collection round-trips', () => {
  assert.deepEqual(decodeSnapshot(encodeSnapshot(ID, '7', []), ID), { resourceVersion: '7', objects: [] })
})

test('every truncation point is refused (never a partial state)', () => {
  for (let n = 0; n < BYTES.length; n++) {
    const r = decodeSnapshot(BYTES.subarray(0, n), ID)
    assert.ok('problem' in r, `a snapshot cut at byte ${n} of ${BYTES.length} was accepted`)
  }
})

test('random bit flips are refused (1, 2 and 8 flips, 3,000 trials, seeded)', () => {
  const random = seededRandom(19)
  for (let trial = 0; trial < 3000; trial++) {
    const b = Buffer.from(BYTES)
    const flips = [1, 2, 8][trial % 3]!
    for (let i = 0; i < flips; i++) b[Math.floor(random() * b.length)]! ^= 1 << Math.floor(random() * 8)
    if (b.equals(BYTES)) continue // two flips of one bit cancel out
    const r = decodeSnapshot(b, ID)
    assert.ok('problem' in r, `trial ${trial}: a corrupted snapshot was accepted`)
  }
})

test('appended garbage and a second trailer are refused', () => {
  assert.ok('problem' in decodeSnapshot(Buffer.concat([BYTES, Buffer.from('x\n')]), ID))
  const twice = Buffer.concat([BYTES, Buffer.from(`sha256:${sha256(BYTES)}\n`)])
  assert.ok('problem' in decodeSnapshot(twice, ID))
})

test('a snapshot of another resource, scope, selector, watch kind or tag is foreign; the reason names the field', () => {
  const other: [keyof SnapshotIdentity, unknown][] = [
    ['resource', 'apps/v1/deployments'],
    ['namespace', ''],
    ['labelSelector', 'app=db'],
    ['fieldSelector', 'metadata.name=x'],
    ['metadataOnly', true],
    ['tag', '1.2.4'],
  ]
  for (const [k, v] of other)
    assert.deepEqual(decodeSnapshot(BYTES, { ...ID, [k]: v }), { problem: `${k} differs` })
})

test('another format version, a count that disagrees, no resourceVersion or invalid JSON are refused, with a valid checksum', () => {
  const sealed = (text: string): Buffer => {
    const body = Buffer.from(text)
    return Buffer.concat([body, Buffer.from(`sha256:${sha256(body)}\n`)])
  }
  const header = { format: SNAPSHOT_FORMAT, ...ID, resourceVersion: '42', count: 1 }
  const line = JSON.stringify(cm('a', '1'))
  const cases: [string, string][] = [
    [`${JSON.stringify({ ...header, format: 2 })}\n${line}\n`, 'format differs'],
    [`${JSON.stringify({ ...header, count: 2 })}\n${line}\n`, 'count differs'],
    [`${JSON.stringify({ ...header, resourceVersion: '' })}\n${line}\n`, 'malformed'],
    [`${JSON.stringify(header)}\n{not json\n`, 'malformed'],
    ['\n', 'malformed'],
  ]
  for (const [text, problem] of cases) assert.deepEqual(decodeSnapshot(sealed(text), ID), { problem })
})

test('a compact store: JSON stubs are written as their bytes, the same file as their objects give; keepBytes restores stubs', () => {
  const objs: KubeObject[] = [
    { metadata: { name: 'a', namespace: 'ns', resourceVersion: '1' }, data: { v: 'é😀"\n' } },
    { metadata: { name: 'b', namespace: 'ns', resourceVersion: '2' } },
  ]
  const stubs = objs.map((o) => encodedObject(new TextEncoder().encode(JSON.stringify(o)), jsonCodec))
  const bytes = encodeSnapshot(ID, '9', stubs)
  assert.deepEqual(bytes, encodeSnapshot(ID, '9', objs))
  const r = decodeSnapshot(bytes, ID, { keepBytes: true })
  assert.ok(!('problem' in r))
  assert.ok(r.objects.every(isEncodedObject))
  assert.deepEqual(
    r.objects.map((o) => materialize(o)),
    objs,
  )
  assert.deepEqual(decodeSnapshot(bytes.subarray(0, 40), ID, { keepBytes: true }), { problem: 'truncated' })
})

test('a compact store of protobuf stubs (real apiserver bytes) is written as JSON lines and restored as stubs of the same objects', () => {
  // configmaps.list.pb: a list the real apiserver answered in protobuf (test/codec/protobuf/record-corpus.ts).
  const bytes = corpusFile('configmaps.list.pb')
  const opts = { dropManagedFields: true }
  const stubs = decodeProtobufList(CONFIG_MAP_V1, bytes, { ...opts, keepBytes: protobufCodec(CONFIG_MAP_V1) })
  const objects = decodeProtobufList(CONFIG_MAP_V1, bytes, opts).items
  assert.ok(stubs.items.length > 0 && stubs.items.every(isEncodedObject), 'the corpus gives protobuf stubs')
  const file = encodeSnapshot(ID, '9', stubs.items)
  assert.deepEqual(file, encodeSnapshot(ID, '9', objects), 'the same file as the decoded objects give')
  const r = decodeSnapshot(file, ID, { keepBytes: true })
  assert.ok(!('problem' in r), JSON.stringify(r))
  assert.ok(r.objects.every(isEncodedObject), 'restored as stubs, for the compact store')
  assert.deepEqual(
    r.objects.map((o) => materialize(o)),
    JSON.parse(JSON.stringify(objects)),
  )
})
