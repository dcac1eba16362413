/**
 * @module kind-schema — a kind of the generated table and the decoders it carries, as types: a
 * {@link KindSchema} is an apiVersion, a kind and a message, and its `decoders` ({@link ProtobufDecoders}) decodes
 * lists, watch streams and Status answers of it. The decoders' options are here too: they are part of
 * what a kind's `decoders` take.
 */

import type { ObjectCodec } from '../../core/encoded-object.ts'
import type { KubeList, KubeObject, WatchEvent } from '../../core/types.ts'
import type { MessageSchema } from './message-schema.ts'

/** A kind whose objects can be decoded from protobuf: its apiVersion, kind, and top-level message. */
export interface KindSchema {
  /** `group/version` (`v1` for the core group), as the envelope carries it. */
  readonly apiVersion: string
  /** The kind, e.g. `Pod`; lists are `<kind>List`. */
  readonly kind: string
  /** The kind's top-level message (ObjectMeta in field 1). */
  readonly message: MessageSchema
  /** The decoders (lists, watch streams, Status, codecs): reached through the kind, so only bundles with a kind carry them. */
  readonly decoders: ProtobufDecoders
}

/** What a client needs to read protobuf answers. */
export interface ProtobufDecoders {
  /** An enveloped object of `kind` (a get's answer), or the `Status` it is. See {@link decodeProtobufObject}. */
  object(kind: KindSchema, bytes: Uint8Array, options?: ProtobufObjectOptions): KubeObject
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

/** Options of the object and list decoders (objects.ts). */
export interface ProtobufObjectOptions {
  /** Leave `metadata.managedFields` out (never built; cut from kept bytes). */
  dropManagedFields?: boolean
  /** Hand out {@link EncodedObject} stubs over each object's own bytes instead of decoded objects. */
  keepBytes?: ObjectCodec
}

/** Options of {@link decodeProtobufWatchStream}. */
export interface ProtobufWatchOptions extends ProtobufObjectOptions {
  /** Longest accepted frame; a longer one throws `EDGEOP_ERR_DECODE`. Default {@link DEFAULT_MAX_WATCH_FRAME_BYTES}. */
  maxFrameBytes?: number
  /** Names the stream in errors, e.g. `watch /api/v1/pods`. */
  source?: string
}
