/**
 * @module protobuf-decoders — the protobuf decoders a client reaches through a {@link KindSchema}, and
 * {@link kind}, which ties a kind of the table to them.
 *
 * The client calls these through `kind.decoders`; its one import of this module is
 * {@link PROTOBUF_DECODERS}' PartialObjectMetadata kind, which metadata-only calls ask for on every resource
 * (content-negotiation.ts), so a bundle with a client carries the decoder and ObjectMeta's table, and the
 * tables of whole kinds only when it names one (the operator artifact names none). The kinds
 * (`kinds.generated.ts`) import this module; the decoders take the messages they need from
 * `messages.generated.ts`, so nothing here imports the kinds back.
 */
import type { ObjectCodec } from '../../core/encoded-object.ts'
import { protobufCodec } from './codec.ts'
import type { KindSchema, ProtobufDecoders } from './kind-schema.ts'
import type { MessageSchema } from './message-schema.ts'
import { m_PartialObjectMetadata, m_Status } from './messages.generated.ts'
import { decodeProtobufList, decodeProtobufObject } from './objects.ts'
import { decodeProtobufWatchStream } from './watch-frames.ts'

const codecs = new WeakMap<KindSchema, ObjectCodec>()

/** A kind of the generated table: `top` is its message, and its `decoders` those of this module. */
export function kind(apiVersion: string, kindName: string, top: MessageSchema): KindSchema {
  return {
    apiVersion,
    kind: kindName,
    message: top,
    // A getter: the kinds are made while this module loads, before PROTOBUF_DECODERS is.
    get decoders() {
      return PROTOBUF_DECODERS
    },
  }
}

/**
 * `v1` `Status` and `meta.k8s.io/v1` `PartialObjectMetadata`, as the table's STATUS_V1 and
 * PARTIAL_OBJECT_METADATA_V1 are (those import this module, so they are made again here; a test keeps the two equal).
 */
const STATUS = /* @__PURE__ */ kind('v1', 'Status', m_Status)
const PARTIAL_OBJECT_METADATA = /* @__PURE__ */ kind(
  'meta.k8s.io/v1',
  'PartialObjectMetadata',
  m_PartialObjectMetadata,
)

/** The decoders of this module, as {@link KindSchema.decoders} hands them out. */
export const PROTOBUF_DECODERS: ProtobufDecoders = {
  object: decodeProtobufObject,
  list: decodeProtobufList,
  watch: decodeProtobufWatchStream,
  status: (bytes) => decodeProtobufObject(STATUS, bytes),
  codec(kind) {
    let codec = codecs.get(kind)
    if (codec === undefined) {
      codec = protobufCodec(kind)
      codecs.set(kind, codec)
    }
    return codec
  },
  get partialObjectMetadata() {
    return PARTIAL_OBJECT_METADATA
  },
}
