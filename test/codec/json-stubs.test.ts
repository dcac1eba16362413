import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeListBytes } from '../../src/codec/json-stubs.ts'
import { decodeWatchStream } from '../../src/codec/json-watch-decoder.ts'
import { ENCODED, isEncodedObject, materialize } from '../../src/core/encoded-object.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { chunked } from '../support/chunked.ts'
import { seededRandom } from '../support/random.ts'

const enc = (s: string): Uint8Array => new TextEncoder().encode(s)

function object(i: number, r: () => number): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'AppService',
    metadata: {
      name: `app-${i}`,
      namespace: r() < 0.5 ? 'ns' : 'ünï',
      uid: `uid-${i}`,
      resourceVersion: String(100 + i),
      labels: { app: 'édge-😀' },
      ...(r() < 0.7 ? { managedFields: [{ manager: 'm', fieldsV1: { 'f:spec': {} } }] } : {}),
      ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: `o-${i % 3}`, controller: true }],
    },
    spec: { text: 'x'.repeat(Math.floor(r() * 300)), esc: '"}\\]\n', uni: '日本 ✓' },
  }
}

function stripped(o: KubeObject): KubeObject {
  const c = structuredClone(o)
  delete c.metadata.managedFields
  return c
}

test('a list body: stubs whose bytes are each item without managedFields; list metadata parsed', () => {
  const r = seededRandom(3)
  const items = Array.from({ length: 20 }, (_, i) => object(i, r))
  for (const space of [undefined, 1]) {
    const list = {
      kind: 'AppServiceList',
      apiVersion: 'example.com/v1',
      metadata: { resourceVersion: '99', continue: 'c' },
      items,
    }
    const got = decodeListBytes(enc(JSON.stringify(list, null, space)))
    assert.deepEqual(got.metadata, list.metadata)
    assert.equal((got as unknown as { kind: string }).kind, 'AppServiceList')
    assert.equal(got.items.length, items.length)
    got.items.forEach((stub, i) => {
      assert.ok(isEncodedObject(stub))
      if (space === undefined)
        assert.equal(new TextDecoder().decode(stub[ENCODED].bytes), JSON.stringify(stripped(items[i]!)))
      const { managedFields: _, ...meta } = items[i]!.metadata
      assert.deepEqual(stub.metadata, meta)
      assert.deepEqual(materialize(stub), stripped(items[i]!))
    })
  }
  assert.deepEqual(decodeListBytes(enc('{"metadata":{},"items":[]}')).items, [])
  assert.deepEqual(decodeListBytes(enc('{"metadata":{},"items":null}')).items, [])
})

test('a malformed list body is EDGEOP_ERR_DECODE', () => {
  const good = JSON.stringify({
    metadata: {},
    items: [object(1, seededRandom(1)), object(2, seededRandom(2))],
  })
  for (const bad of [
    good.slice(0, -2),
    `${good}]`,
    good.replace('"items":[', '"items":{'),
    '[]',
    good.replace('}},{', '}}{'),
  ])
    assert.throws(
      () => decodeListBytes(enc(bad)),
      (e: unknown) => isEdgeopError(e, 'EDGEOP_ERR_DECODE'),
    )
})

test('property: keepBytes watch events materialize to the eager events without managedFields', async () => {
  const r = seededRandom(42)
  const types = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'] as const
  for (let round = 0; round < 100; round++) {
    const events = Array.from({ length: 1 + Math.floor(r() * 15) }, (_, i) => {
      const type = types[Math.floor(r() * types.length)]!
      return {
        type,
        object:
          type === 'BOOKMARK'
            ? {
                kind: 'AppService',
                metadata: { resourceVersion: '7', annotations: { 'k8s.io/initial-events-end': 'true' } },
              }
            : object(i, r),
      }
    })
    // The server's order is type first; either order is JSON.
    const lines = events.map((e) =>
      r() < 0.8 ? JSON.stringify(e) : JSON.stringify({ object: e.object, type: e.type }),
    )
    const wire = enc(lines.join('\n') + (r() < 0.5 ? '\n' : ''))
    const cuts = [
      ...new Set(Array.from({ length: Math.floor(r() * 30) }, () => Math.floor(r() * wire.length))),
    ].sort((a, b) => a - b)
    const got = []
    for await (const e of decodeWatchStream(chunked(wire, cuts), { keepBytes: true })) {
      assert.equal(isEncodedObject(e.object), e.type !== 'BOOKMARK')
      got.push({ type: e.type, object: materialize(e.object) })
    }
    assert.deepEqual(
      got,
      events.map((e) => ({
        type: e.type,
        object: e.type === 'BOOKMARK' ? e.object : stripped(e.object as KubeObject),
      })),
    )
  }
})

test('keepBytes: garbage, non-events and invalid UTF-8 are refused without echoing content', async () => {
  const cases = [
    ['{"type":"ADDED","object":{}}\nnot json secret-token-123\n', /event 2 is not JSON/],
    ['{"kind":"Status","secret":"hunter2"}\n', /event 1 is not a watch event/],
    ['{"type":"EXPLODED","object":{"secret":"hunter2"}}\n', /is not a watch event/],
    ['{"type":"ADDED","object":"hunter2"}\n', /is not a watch event/],
    ['{"type":"ADDED","object":{"a":"hunter2"}\n', /event 1 is not JSON/],
    ['[1,2]\n', /is not JSON/],
  ] as const
  for (const [text, re] of cases) {
    await assert.rejects(
      async () => {
        for await (const _ of decodeWatchStream(chunked(enc(text), []), { keepBytes: true })) {
        }
      },
      (err: Error) => {
        assert.ok(isEdgeopError(err, 'EDGEOP_ERR_DECODE'))
        assert.match(err.message, re)
        assert.ok(!err.message.includes('secret-token-123') && !err.message.includes('hunter2'), err.message)
        return true
      },
    )
  }
  const bad = new Uint8Array([...enc('{"type":"ADDED","object":{"a":"'), 0xff, 0xfe, ...enc('"}}\n')])
  await assert.rejects(async () => {
    for await (const _ of decodeWatchStream(chunked(bad, [5]), { keepBytes: true })) {
    }
  }, /not valid UTF-8/)
})

test('keepBytes: an ERROR event carries the parsed Status', async () => {
  const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' }
  const got = []
  for await (const e of decodeWatchStream(
    chunked(enc(`${JSON.stringify({ type: 'ERROR', object: status })}\n`), []),
    {
      keepBytes: true,
    },
  ))
    got.push(e)
  assert.deepEqual(got, [{ type: 'ERROR', object: status }])
  assert.equal(isEncodedObject(got[0]!.object), false)
})
