import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { protobufCodec } from '../../../src/codec/protobuf/codec.ts'
import type { ProtobufWatchOptions } from '../../../src/codec/protobuf/kind-schema.ts'
import { CONFIG_MAP_V1 } from '../../../src/codec/protobuf/kinds.generated.ts'
import { decodeProtobufWatchStream } from '../../../src/codec/protobuf/watch-frames.ts'
import { isEncodedObject, materialize } from '../../../src/core/encoded-object.ts'
import type { WatchEvent } from '../../../src/core/types.ts'
import { corpusFile } from './corpus.ts'

const stream = corpusFile('configmaps.watch.pb')
const json = corpusFile('configmaps.watch.json')
  .toString('utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as WatchEvent)

async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.slice(i, i + size)
}

async function collect(
  chunks: AsyncIterable<Uint8Array>,
  options: ProtobufWatchOptions = {},
): Promise<WatchEvent[]> {
  const out: WatchEvent[] = []
  for await (const e of decodeProtobufWatchStream(chunks, CONFIG_MAP_V1, options)) out.push(e)
  return out
}

describe('protobuf watch streams (recorded: a streaming list, its bookmark, ADDED, MODIFIED, DELETED)', () => {
  test('the events deep-equal the JSON watch of the same changes, whatever the chunking', async () => {
    assert.ok(json.some((e) => e.type === 'BOOKMARK') && json.some((e) => e.type === 'DELETED'))
    for (const size of [1, 3, 4, 5, 64, 1000, stream.length]) {
      assert.deepStrictEqual(await collect(chunked(stream, size)), json, `chunks of ${size}`)
    }
  })
  test('with keepBytes, events carry stubs that decode to the same objects without managedFields', async () => {
    const events = await collect(chunked(stream, 100), {
      keepBytes: protobufCodec(CONFIG_MAP_V1),
      dropManagedFields: true,
    })
    assert.equal(events.length, json.length)
    events.forEach((e, i) => {
      const want = structuredClone(json[i] as WatchEvent)
      delete want.object.metadata.managedFields
      assert.ok(isEncodedObject(e.object))
      assert.equal(e.object.kind, 'ConfigMap')
      assert.deepStrictEqual(materialize(e.object), want.object)
    })
  })
  test('a stream cut inside a frame fails with EDGEOP_ERR_DECODE', async () => {
    await assert.rejects(collect(chunked(stream.subarray(0, stream.length - 3), 50)), {
      code: 'EDGEOP_ERR_DECODE',
      message: /ended inside a frame/,
    })
  })
  test('an oversized frame is refused before it is buffered', async () => {
    await assert.rejects(collect(chunked(stream, 50), { maxFrameBytes: 100 }), /longer than 100 bytes/)
  })
  test('a frame that is not a watch event is refused, naming the stream and the event', async () => {
    const bad = Buffer.concat([Buffer.from([0, 0, 0, 3]), Buffer.from([0x0a, 0x01, 0x58])])
    await assert.rejects(collect(chunked(bad, 2), { source: 'watch /api/v1/configmaps' }), {
      code: 'EDGEOP_ERR_DECODE',
      message: /^watch \/api\/v1\/configmaps: event 1 is not a watch event/,
    })
    const garbage = Buffer.concat([Buffer.from([0, 0, 0, 4]), Buffer.from([0xff, 0xff, 0xff, 0xff])])
    await assert.rejects(collect(chunked(garbage, 8)), /event 1 is not a valid protobuf watch event/)
  })
})
