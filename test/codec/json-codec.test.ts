import assert from 'node:assert/strict'
import { test } from 'node:test'
import { jsonCodec, SCANNED_FIELDS, scanObject } from '../../src/codec/json-codec.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import { seededRandom } from '../support/random.ts'

const enc = (v: unknown, space?: number): Uint8Array =>
  new TextEncoder().encode(JSON.stringify(v, null, space))
const text = (b: Uint8Array): string => new TextDecoder().decode(b)

function expectedMeta(obj: { metadata?: Record<string, unknown> }): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const f of SCANNED_FIELDS) if (obj.metadata?.[f] !== undefined) out[f] = obj.metadata[f]
  return out
}

const app = {
  apiVersion: 'example.com/v1',
  kind: 'AppService',
  metadata: {
    name: 'web',
    namespace: 'team-a',
    uid: '0f7c-uid',
    resourceVersion: '4711',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    deletionTimestamp: '2026-01-02T00:00:00Z',
    labels: { app: 'web', 'x.io/tier': 'front' },
    annotations: { note: 'a "quoted" \\ value\n' },
    ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u1', controller: true }],
    managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': { '.': {} } } }],
  },
  spec: { image: 'nginx', nested: [{ a: [1, 2, { b: '}]' }] }] },
}

test('scan reads the metadata the cache needs and nothing else', () => {
  const meta = jsonCodec.scan(enc(app))
  assert.deepEqual(meta, expectedMeta(app))
  assert.equal('managedFields' in meta, false)
  assert.equal('creationTimestamp' in meta, false)
})

test('scan handles escapes, unicode and escaped member names', () => {
  const obj = {
    metadata: { name: 'naïve-名前-😀', namespace: 'a\\b"c', labels: { 'ü/😀': 'v\u0000\t' } },
    spec: { s: '"{[' },
  }
  assert.deepEqual(jsonCodec.scan(enc(obj)), expectedMeta(obj))
  // Member names spelled with escapes are the same names.
  const escaped = new TextEncoder().encode('{"meta\\u0064ata":{"n\\u0061me":"x","resourceVersion":"7"}}')
  assert.deepEqual(jsonCodec.scan(escaped), { name: 'x', resourceVersion: '7' })
  const ascii = new TextEncoder().encode(
    JSON.stringify(obj).replace(
      /[\u007f-\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
  )
  assert.deepEqual(jsonCodec.scan(ascii), expectedMeta(obj))
})

test('scan takes whitespace anywhere JSON allows it, and null as unset', () => {
  const spaced = enc(app, 2)
  assert.deepEqual(jsonCodec.scan(spaced), expectedMeta(app))
  assert.deepEqual(
    jsonCodec.scan(new TextEncoder().encode(' \n{ "metadata" : { "name" : null , "labels" : null } } \n')),
    {},
  )
  assert.deepEqual(jsonCodec.scan(new TextEncoder().encode('{}')), {})
})

test('stripManagedFields cuts the member wherever it is, and leaves valid JSON', () => {
  const mf = [{ manager: 'm', fieldsV1: { 'f:a': {} } }]
  const cases: Record<string, unknown>[] = [
    { managedFields: mf, name: 'a', uid: 'u' }, // first
    { name: 'a', managedFields: mf, uid: 'u' }, // middle
    { name: 'a', uid: 'u', managedFields: mf }, // last
    { managedFields: mf }, // only
    { name: 'a' }, // none
  ]
  for (const metadata of cases) {
    for (const space of [undefined, 2]) {
      const obj = { kind: 'K', metadata, spec: { managedFields: 'not metadata: kept' } }
      const stripped = jsonCodec.stripManagedFields(enc(obj, space))
      const want = structuredClone(obj)
      delete (want.metadata as Record<string, unknown>).managedFields
      assert.deepEqual(JSON.parse(text(stripped)), want, JSON.stringify(metadata))
      assert.deepEqual(jsonCodec.decode(stripped), want)
      if (!('managedFields' in metadata)) assert.equal(text(stripped), text(enc(obj, space)))
    }
  }
})

test('property: scan and strip agree with JSON.parse on random objects', () => {
  const r = seededRandom(7)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!
  const strs = ['', 'a', 'é', '😀', '"', '\\', '\n', '}', ']', '{"x":1}', 'x'.repeat(40)]
  const value = (depth: number): unknown => {
    const k = Math.floor(r() * (depth > 3 ? 4 : 7))
    if (k === 0) return pick(strs) + pick(strs)
    if (k === 1) return Math.floor(r() * 1e6) / (r() < 0.5 ? 1 : 7)
    if (k === 2) return pick([true, false, null])
    if (k === 3) return -Math.floor(r() * 100)
    if (k === 4) return Array.from({ length: Math.floor(r() * 4) }, () => value(depth + 1))
    return Object.fromEntries(
      Array.from({ length: Math.floor(r() * 4) }, () => [pick(strs) + pick(strs), value(depth + 1)]),
    )
  }
  for (let round = 0; round < 500; round++) {
    const metadata: Record<string, unknown> = {}
    const fields = [
      'name',
      'namespace',
      'uid',
      'resourceVersion',
      'generation',
      'labels',
      'annotations',
      'managedFields',
      'ownerReferences',
      'finalizers',
      'creationTimestamp',
    ]
    for (const f of fields) {
      if (r() < 0.4) continue
      if (f === 'generation') metadata[f] = Math.floor(r() * 100)
      else if (f === 'labels' || f === 'annotations')
        metadata[f] = { [pick(strs)]: pick(strs), k: pick(strs) }
      else if (f === 'managedFields' || f === 'finalizers') metadata[f] = [value(2)]
      else if (f === 'ownerReferences') metadata[f] = [{ uid: pick(strs), controller: r() < 0.5 }]
      else metadata[f] = pick(strs) + String(round)
    }
    const ordered = Object.fromEntries(Object.entries(metadata).sort(() => r() - 0.5))
    const obj = { a: value(0), metadata: ordered, spec: value(0) }
    const bytes = enc(obj, r() < 0.3 ? 1 : undefined)
    assert.deepEqual(jsonCodec.scan(bytes), expectedMeta(obj))
    // Through JSON once, as the server would send it (-0 is 0 there).
    const want = JSON.parse(JSON.stringify(obj)) as typeof obj
    delete (want.metadata as Record<string, unknown>).managedFields
    assert.deepEqual(jsonCodec.decode(jsonCodec.stripManagedFields(bytes)), want)
  }
})

test('scanObject finds the end of an object inside larger bytes', () => {
  const b = new TextEncoder().encode('[{"metadata":{"name":"a"}} , {"x":"}"}]')
  const s = scanObject(b, 1, b.length)
  assert.equal(text(b.subarray(1, s.end)), '{"metadata":{"name":"a"}}')
  assert.deepEqual(s.meta, { name: 'a' })
})

test('malformed and truncated input: EDGEOP_ERR_DECODE that never quotes the content', () => {
  const secret = 'hunter2-SECRET'
  const whole = JSON.stringify({
    metadata: { name: 'a', annotations: { token: secret } },
    data: { p: secret },
  })
  const bad: string[] = [
    '',
    'null',
    '[]',
    `"${secret}"`,
    whole.slice(0, -1),
    whole.slice(0, whole.indexOf(secret) + 3),
    `${whole}x`,
    `${whole}{}`,
    whole.replace('"data":', '"data"'),
    whole.replace('"data":{', '"data":['),
    whole.replace(`"p":"${secret}"`, `"p":"${secret}]"]`),
    `{"metadata":{"name":${secret}}}`,
    `{"metadata":{"labels":["${secret}"]}}`,
    `{"metadata":{"generation":"${secret}"}}`,
    `{"metadata":{"ownerReferences":{"a":"${secret}"}}}`,
    `{"metadata":{"name":"a"},}`,
    `{"metadata":{"name":"a\n${secret}"}}`,
    `{"metadata" {"name":"a"}}`,
    `{"a":1 "b":2}`,
    `{"a":}`,
    `{"a":tr"ue}`,
  ]
  for (const s of bad) {
    const bytes = new TextEncoder().encode(s)
    for (const op of [() => jsonCodec.scan(bytes), () => jsonCodec.stripManagedFields(bytes)]) {
      assert.throws(op, (err: unknown) => {
        assert.ok(isEdgeopError(err, 'EDGEOP_ERR_DECODE'), `${s}: ${String(err)}`)
        const all = `${(err as Error).message} ${String((err as Error).cause)}`
        assert.equal(all.includes(secret), false, all)
        return true
      })
    }
  }
  for (const s of ['', whole.slice(0, -1), `{"a":tr"ue}`, '[1]', '\xff']) {
    const bytes = s === '\xff' ? new Uint8Array([0x7b, 0xff, 0x7d]) : new TextEncoder().encode(s)
    assert.throws(
      () => jsonCodec.decode(bytes),
      (err: unknown) =>
        isEdgeopError(err, 'EDGEOP_ERR_DECODE') && !String((err as Error).cause).includes('tr"ue'),
    )
  }
})

test('deep nesting beyond the bracket stack still matches brackets by count', () => {
  const deep = `{"metadata":{"name":"d"},"x":${'['.repeat(40)}${']'.repeat(40)}}`
  assert.deepEqual(jsonCodec.scan(new TextEncoder().encode(deep)), { name: 'd' })
  const wrong = `{"x":${'['.repeat(3)}]}]}`
  assert.throws(
    () => jsonCodec.scan(new TextEncoder().encode(wrong)),
    (e: unknown) => isEdgeopError(e, 'EDGEOP_ERR_DECODE'),
  )
})
