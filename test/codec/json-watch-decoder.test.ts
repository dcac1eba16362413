import assert from 'node:assert/strict'
import { test } from 'node:test'
import { decodeWatchStream } from '../../src/codec/json-watch-decoder.ts'
import { chunked } from '../support/chunked.ts'
import { seededRandom } from '../support/random.ts'

function realisticEvents(n: number, r: () => number) {
  const types = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK'] as const
  return Array.from({ length: n }, (_, i) => ({
    type: types[Math.floor(r() * types.length)]!,
    object: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: `cm-${i}`,
        namespace: 'ns',
        resourceVersion: String(100 + i),
        labels: { app: 'édge-😀' },
      },
      data: { text: 'x'.repeat(Math.floor(r() * 300)), uni: 'ünïcødé ✓ 日本' },
    },
  }))
}

test('property: any split of a real event stream decodes to the same events', async () => {
  const r = seededRandom(42)
  for (let round = 0; round < 300; round++) {
    const events = realisticEvents(1 + Math.floor(r() * 20), r)
    const wire = new TextEncoder().encode(
      events.map((e) => JSON.stringify(e)).join('\n') + (r() < 0.5 ? '\n' : ''),
    )
    const cuts = [
      ...new Set(Array.from({ length: Math.floor(r() * 40) }, () => Math.floor(r() * wire.length))),
    ].sort((a, b) => a - b)
    const got = []
    for await (const e of decodeWatchStream(chunked(wire, cuts))) got.push(e)
    assert.deepEqual(got, events, `round ${round} cuts ${cuts.join(',')}`)
  }
})

test('single-byte chunks split every multi-byte character and still decode', async () => {
  const events = realisticEvents(3, seededRandom(7))
  const wire = new TextEncoder().encode(`${events.map((e) => JSON.stringify(e)).join('\n')}\n`)
  const cuts = Array.from({ length: wire.length - 1 }, (_, i) => i + 1)
  const got = []
  for await (const e of decodeWatchStream(chunked(wire, cuts))) got.push(e)
  assert.deepEqual(got, events)
})

test('a line over the cap is refused with a clear error, before it is buffered whole', async () => {
  const big = JSON.stringify({ type: 'ADDED', object: { metadata: {}, data: 'y'.repeat(5000) } })
  const wire = new TextEncoder().encode(`${big}\n`)
  await assert.rejects(
    async () => {
      for await (const _ of decodeWatchStream(chunked(wire, [100, 200, 3000]), {
        maxLineBytes: 1024,
        source: 'watch /x',
      })) {
      }
    },
    { code: 'EDGEOP_ERR_DECODE', message: 'watch /x: a watch event is longer than 1024 bytes; refusing it' },
  )
})

test('garbage is refused with an error naming the event, never echoing its content', async () => {
  const cases = [
    [
      '{"type":"ADDED","object":{}}\nnot json secret-token-123\n',
      /event 2 is not JSON \(text of 25 characters\)/,
    ],
    ['{"kind":"Status","secret":"hunter2"}\n', /event 1 is not a watch event/],
    ['{"type":"EXPLODED","object":{}}\n', /is not a watch event/],
    ['[1,2]\n', /an array of 5 characters/],
  ] as const
  for (const [text, re] of cases) {
    const err = await (async () => {
      try {
        for await (const _ of decodeWatchStream(chunked(new TextEncoder().encode(text), []))) {
        }
      } catch (e) {
        return e as Error
      }
      return undefined
    })()
    assert.ok(err, text)
    assert.match(err.message, re)
    assert.ok(!err.message.includes('secret-token-123') && !err.message.includes('hunter2'))
  }
})

test('invalid UTF-8 is a decode error', async () => {
  const bytes = new Uint8Array([
    ...new TextEncoder().encode('{"type":"ADDED","object":{"a":"'),
    0xff,
    0xfe,
    ...new TextEncoder().encode('"}}\n'),
  ])
  await assert.rejects(async () => {
    for await (const _ of decodeWatchStream(chunked(bytes, [5]))) {
    }
  }, /not valid UTF-8/)
})

test('fuzz (watch-decoder): invalid UTF-8 in bytes keepBytes never reads (managedFields, an unknown member) is refused as the eager path refuses it', async () => {
  const enc = (s: string) => new TextEncoder().encode(s)
  for (const [before, after] of [
    ['{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"m":"', '"}]}}}\n'],
    ['{"type":"ADDED","x":"', '","object":{"metadata":{"name":"a"}}}\n'],
  ]) {
    const bytes = new Uint8Array([...enc(before!), 0xa8, ...enc(after!)])
    for (const keepBytes of [false, true]) {
      await assert.rejects(
        async () => {
          for await (const _ of decodeWatchStream(chunked(bytes, [5]), { keepBytes })) {
          }
        },
        { code: 'EDGEOP_ERR_DECODE', message: /event 1 is not valid UTF-8/ },
        `keepBytes ${keepBytes}: ${before}`,
      )
    }
  }
})

test('blank lines are ignored and a final unterminated line is decoded', async () => {
  const text =
    '\n{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}\n\n{"type":"DELETED","object":{"metadata":{"name":"a"}}}'
  const got = []
  for await (const e of decodeWatchStream(chunked(new TextEncoder().encode(text), [3]))) got.push(e.type)
  assert.deepEqual(got, ['BOOKMARK', 'DELETED'])
})
