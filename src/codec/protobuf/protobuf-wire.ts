/**
 * @module protobuf-wire — the protobuf decoders a client reaches through a {@link KindSchema}.
 *
 * The client holds no import of this module: it calls these through `kind.wire`, so a bundle that never
 * names a protobuf kind carries neither the decoder nor the table (the operator artifact, which watches
 * custom resources and a few built-ins in JSON, stays within its size budget).
 */

import type { ObjectCodec } from '../../core/encoded-object.ts'
import type { KubeList, KubeObject, WatchEvent } from '../../core/types.ts'
import { protobufCodec } from './codec.ts'
import { PARTIAL_OBJECT_METADATA_V1, STATUS_V1 } from './kinds.generated.ts'
import type { KindSchema } from './message-schema.ts'
import { decodeProtobufList, decodeProtobufObject, type ProtobufObjectOptions } from './objects.ts'
import { decodeProtobufWatchStream, type ProtobufWatchOptions } from './watch-frames.ts'

/** What a client needs to read protobuf answers. */
export interface ProtobufWire {
  /** An enveloped list of `kind`. See {@link decodeProtobufList}. */
  list(kind: KindSchema, bytes: Uint8Array, options?: ProtobufObjectOptions): KubeList
  /** A protobuf watch stream of `kind`. See {@link decodeProtobufWatchStream}. */
  watch<T extends KubeObject>(
    chunks: AsyncIterable<Uint8Array>,
    kind: KindSchema,
    options?: ProtobufWatchOptions,
  ): AsyncGenerator<WatchEvent<T>>
  /** An enveloped `Status` (an error answer). */
  status(bytes: Uint8Array): KubeObject
  /** The shared codec of `kind`'s object bytes. */
  codec(kind: KindSchema): ObjectCodec
  /** `meta.k8s.io/v1` PartialObjectMetadata, for metadata-only calls. */
  readonly partialObjectMetadata: KindSchema
}

const codecs = new WeakMap<KindSchema, ObjectCodec>()

/** The decoders of this module, as {@link KindSchema.wire} hands them out. */
export const PROTOBUF_WIRE: ProtobufWire = {
  list: decodeProtobufList,
  watch: decodeProtobufWatchStream,
  status: (bytes) => decodeProtobufObject(STATUS_V1, bytes),
  codec(kind) {
    let codec = codecs.get(kind)
    if (codec === undefined) {
      codec = protobufCodec(kind)
      codecs.set(kind, codec)
    }
    return codec
  },
  get partialObjectMetadata() {
    return PARTIAL_OBJECT_METADATA_V1
  },
}
