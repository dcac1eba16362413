import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { decodeMessage } from '../../../src/codec/protobuf/decode.ts'
import { unwrap } from '../../../src/codec/protobuf/envelope.ts'
import { goDuration, rfc3339, rfc3339Micro } from '../../../src/codec/protobuf/go-json.ts'
import {
  CONFIG_MAP_V1,
  DEPLOYMENT_V1,
  EVENT_V1,
  POD_V1,
  STATUS_V1,
} from '../../../src/codec/protobuf/kinds.generated.ts'
import { message } from '../../../src/codec/protobuf/message-schema.ts'
import { decodeProtobufList, decodeProtobufObject } from '../../../src/codec/protobuf/objects.ts'
import { Reader } from '../../../src/codec/protobuf/reader.ts'
import type { KubeObject } from '../../../src/core/types.ts'
import { CORPUS_KINDS, corpusFile, corpusJson, schemaOf } from './corpus.ts'

/** Protobuf bytes by hand: [field, wire type, value] with varints and length-delimited values. */
function encode(...fields: [number, 0 | 2, number | Uint8Array | string][]): Uint8Array {
  const out: number[] = []
  const varint = (n: number): void => {
    let v = BigInt.asUintN(64, BigInt(n))
    while (v >= 0x80n) {
      out.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    out.push(Number(v))
  }
  for (const [n, wt, v] of fields) {
    varint((n << 3) | wt)
    if (wt === 0) varint(v as number)
    else {
      const b = typeof v === 'string' ? new TextEncoder().encode(v) : (v as Uint8Array)
      varint(b.length)
      for (const byte of b) out.push(byte)
    }
  }
  return Uint8Array.from(out)
}

describe('protobuf decoding equals the API server JSON (corpus recorded from kube-apiserver 1.37.2)', () => {
  for (const k of CORPUS_KINDS) {
    test(`${k.file}: the protobuf list deep-equals the JSON list`, () => {
      const list = decodeProtobufList(schemaOf(k), corpusFile(`${k.file}.list.pb`))
      assert.deepStrictEqual(list, corpusJson(`${k.file}.list.json`))
    })
  }
  test('the corpus is not empty: every kind but ReplicaSet has objects', () => {
    for (const k of CORPUS_KINDS) {
      if (k.file === 'replicasets') continue
      const list = corpusJson(`${k.file}.list.json`) as { items: unknown[] }
      assert.ok(list.items.length > 0, `${k.file} has no objects`)
    }
  })
  test('a metadata-only list (as=PartialObjectMetadataList) deep-equals its JSON', async () => {
    const { PARTIAL_OBJECT_METADATA_V1 } = await import('../../../src/codec/protobuf/kinds.generated.ts')
    const list = decodeProtobufList(PARTIAL_OBJECT_METADATA_V1, corpusFile('pods.metadata.list.pb'))
    assert.deepStrictEqual(list, corpusJson('pods.metadata.list.json'))
  })
  test('an error answer is a Status, whatever kind was asked for', () => {
    const status = decodeProtobufObject(CONFIG_MAP_V1, corpusFile('status.notfound.pb'))
    assert.deepStrictEqual(status, corpusJson('status.notfound.json'))
    assert.equal((status as { reason?: string }).reason, 'NotFound')
  })
  test('dropManagedFields leaves exactly metadata.managedFields out', () => {
    const full = decodeProtobufList(POD_V1, corpusFile('pods.list.pb'))
    const dropped = decodeProtobufList(POD_V1, corpusFile('pods.list.pb'), { dropManagedFields: true })
    assert.ok(full.items.every((p) => p.metadata.managedFields !== undefined))
    for (const p of full.items) delete p.metadata.managedFields
    assert.deepStrictEqual(dropped, full)
  })
})

describe('decoding rules (Go encoding/json on the decoded Go value)', () => {
  // Fields 14 and 15 are free (the unknown-field test uses them).
  const M = message(
    'M',
    '1os:s 2s:plain 3opi:ptr 4oi:n 5ors:list 6rs:nilList 7oMs:map 8ozT:zeroTime 9T:t 10oI:ios 11oU:micro 12oD:d 13oy:b',
    undefined,
  )
  test('absent fields: a non-omitempty string is "", a non-omitempty list null, a time null, omitzero left out', () => {
    assert.deepStrictEqual(decodeMessage(M, new Uint8Array(0)), {
      plain: '',
      nilList: null,
      t: null,
      ios: 0,
      d: '0s',
      micro: null,
    })
  })
  test('present zero values: omitempty drops them, a pointer keeps them', () => {
    const got = decodeMessage(M, encode([1, 2, ''], [3, 0, 0], [4, 0, 0], [2, 2, '']))
    assert.deepStrictEqual(got, { plain: '', ptr: 0, nilList: null, t: null, ios: 0, d: '0s', micro: null })
  })
  test("negative integers (10-byte two's complement) decode exactly", () => {
    assert.equal(decodeMessage(M, encode([4, 0, -1])).n, -1)
    assert.equal(decodeMessage(M, encode([4, 0, -2147483648])).n, -2147483648)
    assert.equal(decodeMessage(M, encode([4, 0, 2 ** 40 + 5])).n, 2 ** 40 + 5)
  })
  test('times, int-or-strings, durations, bytes and maps take their JSON forms', () => {
    const time = encode([1, 0, 1764609388], [2, 0, 123456789])
    const got = decodeMessage(
      M,
      encode(
        [9, 2, time],
        [11, 2, time],
        [10, 2, encode([1, 0, 1], [3, 2, '25%'])],
        [12, 2, encode([1, 0, 5_400_000_000_000])],
        [13, 2, Uint8Array.of(0, 255)],
        [7, 2, encode([1, 2, 'k'], [2, 2, 'v'])],
        [7, 2, encode([1, 2, 'e'])],
      ),
    )
    assert.equal(got.t, '2025-12-01T17:16:28Z')
    assert.equal(got.micro, '2025-12-01T17:16:28.123456Z')
    assert.equal(got.ios, '25%')
    assert.equal(got.d, '1h30m0s')
    assert.equal(got.b, 'AP8=')
    assert.deepStrictEqual(got.map, { k: 'v', e: '' })
  })
  test('Go duration strings', () => {
    assert.equal(goDuration(0), '0s')
    assert.equal(goDuration(1500), '1.5µs')
    assert.equal(goDuration(150_000_000), '150ms')
    assert.equal(goDuration(3_723_500_000_000), '1h2m3.5s')
    assert.equal(goDuration(-2_000_000_000), '-2s')
    assert.equal(rfc3339(0), '1970-01-01T00:00:00Z')
    assert.equal(rfc3339Micro(1, 1000), '1970-01-01T00:00:01.000001Z')
  })
  test('unknown fields of every wire type are skipped', () => {
    // Field 10 as fixed64 (wire type 1) and field 11 as fixed32 (wire type 5): one-byte tags.
    const fixed = Uint8Array.of((14 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8, (15 << 3) | 5, 1, 2, 3, 4)
    const bytes = Uint8Array.from([...encode([99, 0, 7], [98, 2, 'x'], [1, 2, 'kept']), ...fixed])
    assert.equal(decodeMessage(M, bytes).s, 'kept')
  })
  test('repeated fields accumulate; a repeated scalar may be packed', () => {
    const R = message('R', '1ori:n 2ors:s', undefined)
    const packed = encode([1, 2, Uint8Array.of(1, 2, 0x96, 0x01)], [1, 0, 4], [2, 2, 'a'], [2, 2, 'b'])
    assert.deepStrictEqual(decodeMessage(R, packed), { n: [1, 2, 150, 4], s: ['a', 'b'] })
  })
})

describe('malformed bytes give one clear decode error, never content', () => {
  const pod = decodeProtobufList(POD_V1, corpusFile('pods.list.pb'))
  assert.ok(pod.items.length > 0)
  const body = corpusFile('deployments.list.pb')
  test('every truncation of a list fails with EDGEOP_ERR_DECODE naming the message and byte', () => {
    let failures = 0
    // Up to the end of the object's bytes; the envelope's trailing fields (content encoding and type, empty)
    // may be cut at a field boundary and still decode.
    const { end } = unwrap(body)
    for (let cut = 4; cut < end; cut += 7) {
      assert.throws(
        () => decodeProtobufList(DEPLOYMENT_V1, body.subarray(0, cut)),
        (e: Error & { code?: string }) => {
          assert.equal(e.code, 'EDGEOP_ERR_DECODE')
          assert.match(e.message, /^protobuf .* at byte \d+$/)
          assert.doesNotMatch(e.message, /registry\.example\.com|busybox/)
          failures++
          return true
        },
      )
    }
    assert.ok(failures > 100)
  })
  test('a body without the k8s magic is refused', () => {
    assert.throws(
      () => decodeProtobufList(POD_V1, Buffer.from('{"kind":"PodList"}')),
      /no k8s protobuf magic/,
    )
  })
  test('a list of another kind is refused', () => {
    assert.throws(() => decodeProtobufList(POD_V1, body), /is a DeploymentList, not a PodList/)
  })
  test('a varint longer than 10 bytes and a zero field number are refused', () => {
    const r = new Reader(
      Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
    )
    assert.throws(() => r.uvarint(12), /varint longer than 10 bytes/)
    assert.throws(() => decodeMessage(STATUS_V1.message, Uint8Array.of(0x02, 0x00)), /field number 0/)
  })
  test('a field with the wrong wire type is refused', () => {
    assert.throws(() => decodeMessage(STATUS_V1.message, encode([2, 0, 1])), /has wire type 0/)
  })
  test('fuzz (protobuf-frames): a time outside 0001–9999 or with nanos outside a second is refused as EDGEOP_ERR_DECODE, not a RangeError', () => {
    const meta = (time: Uint8Array) => encode([1, 2, encode([8, 2, time])])
    for (const seconds of [253_402_300_800, -62_135_596_801, 1e15, -1e15]) {
      assert.throws(
        () => decodeMessage(CONFIG_MAP_V1.message, meta(encode([1, 0, seconds]))),
        (e: Error & { code?: string }) =>
          e.code === 'EDGEOP_ERR_DECODE' && /a time outside years 1-9999 at byte \d+/.test(e.message),
        String(seconds),
      )
    }
    const micro = (seconds: number, nanos: number) =>
      decodeMessage(EVENT_V1.message, encode([2, 2, encode([1, 0, seconds], [2, 0, nanos])]))
    for (const nanos of [1_000_000_000, -1])
      assert.throws(() => micro(1, nanos), { code: 'EDGEOP_ERR_DECODE' }, String(nanos))
    const created = (seconds: number) =>
      (decodeMessage(CONFIG_MAP_V1.message, meta(encode([1, 0, seconds]))) as KubeObject).metadata
        .creationTimestamp
    assert.equal(created(253_402_300_799), '9999-12-31T23:59:59Z')
    assert.equal(created(-62_135_596_800), '0001-01-01T00:00:00Z')
    assert.equal(micro(1, 999_999_999).eventTime, '1970-01-01T00:00:01.999999Z')
  })
  test('empty and huge messages', () => {
    assert.deepStrictEqual(decodeMessage(CONFIG_MAP_V1.message, new Uint8Array(0)), { metadata: {} })
    const big = 'x'.repeat(3 * 1024 * 1024)
    const cm = decodeMessage(CONFIG_MAP_V1.message, encode([2, 2, encode([1, 2, 'big'], [2, 2, big])]))
    assert.equal((cm.data as Record<string, string>).big?.length, big.length)
  })
})
