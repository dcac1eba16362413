/**
 * @module protobuf-frames — fuzz target: Kubernetes protobuf as it comes off the wire: watch streams
 * of length-prefixed frames (`decodeProtobufWatchStream`, plain and `keepBytes` with every object
 * materialized), enveloped objects and lists (`decodeProtobufObject`, `decodeProtobufList`), and bare
 * object messages through the compact store's codec (`protobufCodec`: scan, strip, decode).
 *
 * Answered: a value or an `EdgeopError` `EDGEOP_ERR_DECODE`.
 */
import { materialize } from '../../../src/core/wire-object.ts'
import { protobufCodec } from '../../../src/protobuf/codec.ts'
import { CONFIG_MAP_V1, DEPLOYMENT_V1, POD_V1 } from '../../../src/protobuf/kinds.generated.ts'
import { decodeProtobufList, decodeProtobufObject } from '../../../src/protobuf/objects.ts'
import { decodeProtobufWatchStream } from '../../../src/protobuf/watch-frames.ts'
import { chunksOf, decoding, type FuzzSession, type FuzzTarget } from '../harness.ts'

/** The kinds fed: the seeds' (ConfigMap), and the deepest messages of the table (Pod, Deployment). */
const KINDS = [CONFIG_MAP_V1, POD_V1, DEPLOYMENT_V1]
/** A short frame cap, so small inputs reach the oversized-frame path. */
const MAX_FRAME_BYTES = 16 * 1024

export const protobufFrames: FuzzTarget = {
  name: 'protobuf-frames',
  entry:
    'decodeProtobufWatchStream, decodeProtobufObject, decodeProtobufList, protobufCodec (ConfigMap, Pod, Deployment)',
  dictionary: [
    'k8s\u0000', '\u0000\u0000\u0000', '\u0000\u0000\u0001\u0000', '\u00ff\u00ff\u00ff\u00ff', '\u0080\u0080\u0080\u0080\u0080\u0080\u0080\u0080\u0080\u0001',
    '\n', '\u0012', '\u001a', '"', '\u0008', '\u0010', 'ConfigMap', 'ConfigMapList', 'Pod', 'Status', 'v1', 'ADDED', 'BOOKMARK', 'ERROR',
  ], // biome-ignore format: a word list
  maxBytes: 64 * 1024,
  async open(): Promise<FuzzSession> {
    return {
      async run(input) {
        for (const kind of KINDS.slice(0, 2)) {
          for (const keepBytes of [undefined, protobufCodec(kind)]) {
            await decoding(async () => {
              const o = {
                maxFrameBytes: MAX_FRAME_BYTES,
                ...(keepBytes ? { keepBytes, dropManagedFields: true } : {}),
              }
              for await (const e of decodeProtobufWatchStream(chunksOf(input), kind, o)) materialize(e.object)
            })
          }
        }
        for (const kind of KINDS) {
          await decoding(() =>
            materialize(decodeProtobufObject(kind, input, { keepBytes: protobufCodec(kind) })),
          )
          await decoding(() => decodeProtobufObject(kind, input, { dropManagedFields: true }))
          await decoding(() => decodeProtobufList(kind, input).items.forEach((i) => void materialize(i)))
          const codec = protobufCodec(kind)
          await decoding(() => codec.scan(input))
          await decoding(() => codec.decode(codec.stripManagedFields(input)))
        }
      },
      async close() {},
    }
  },
}
