/**
 * @module protobuf-frames — fuzz target: Kubernetes protobuf as it comes off the wire: watch streams
 * of length-prefixed frames (`decodeProtobufWatchStream`, plain and `keepBytes` with every object
 * materialized), enveloped objects and lists (`decodeProtobufObject`, `decodeProtobufList`), and bare
 * object messages through the compact store's codec (`protobufCodec`: scan, strip, decode).
 *
 * Answered: a value or an `EdgeopError` `EDGEOP_ERR_DECODE`; and the paths that must agree do: a watch
 * decoded eagerly and through `keepBytes` stubs, an object decoded eagerly and materialized from its
 * stub, a message decoded after `stripManagedFields` and decoded whole without its managedFields
 * (`undefined` and a refusal alike on both sides, or equal values).
 */

import { protobufCodec } from '../../../src/codec/protobuf/codec.ts'
import { CONFIG_MAP_V1, DEPLOYMENT_V1, POD_V1 } from '../../../src/codec/protobuf/kinds.generated.ts'
import { decodeProtobufList, decodeProtobufObject } from '../../../src/codec/protobuf/objects.ts'
import { decodeProtobufWatchStream } from '../../../src/codec/protobuf/watch-frames.ts'
import { materialize, type ObjectCodec } from '../../../src/core/encoded-object.ts'
import {
  agree,
  chunksOf,
  decoded,
  decoding,
  type FuzzSession,
  type FuzzTarget,
  withoutManagedFields,
} from '../harness.ts'

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
          const events = (keepBytes?: ObjectCodec) =>
            decoded(async () => {
              const o = {
                maxFrameBytes: MAX_FRAME_BYTES,
                dropManagedFields: true,
                ...(keepBytes ? { keepBytes } : {}),
              }
              const out: unknown[] = []
              for await (const e of decodeProtobufWatchStream(chunksOf(input), kind, o))
                out.push({ type: e.type, object: materialize(e.object) })
              return out
            })
          agree(`${kind.kind} watch, eager and keepBytes`, await events(), await events(protobufCodec(kind)))
        }
        for (const kind of KINDS) {
          const codec = protobufCodec(kind)
          agree(
            `${kind.kind} object, eager and materialized`,
            await decoded(() => decodeProtobufObject(kind, input, { dropManagedFields: true })),
            await decoded(() =>
              materialize(decodeProtobufObject(kind, input, { keepBytes: codec, dropManagedFields: true })),
            ),
          )
          await decoding(() => decodeProtobufList(kind, input).items.forEach((i) => void materialize(i)))
          await decoding(() => codec.scan(input))
          agree(
            `${kind.kind} message, stripped and whole`,
            await decoded(() => codec.decode(codec.stripManagedFields(input))),
            await decoded(() => withoutManagedFields(codec.decode(input))),
          )
        }
      },
      async close() {},
    }
  },
}
