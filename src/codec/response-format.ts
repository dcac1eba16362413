/**
 * @module response-format — how one get, list or watch call reads its answer, chosen once per request: the Accept
 * header it sends, the decoder of an error answered in protobuf, and the decoders of an object, a list body or a
 * watch stream for whichever format the server answered in (its Content-Type decides; JSON is always accepted).
 */
import type { KubeList, KubeObject, WatchEvent } from '../core/types.ts'
import {
  acceptHeader,
  type FormatOptions,
  isProtobufResponse,
  protobufKindOf,
} from './content-negotiation.ts'
import { decodeListBytes } from './json-stubs.ts'
import { decodeWatchStream } from './json-watch-decoder.ts'
import type { KindSchema } from './protobuf/kind-schema.ts'

/** What a caller wants from the objects it reads. */
export interface ReadOptions {
  /** Objects as stubs of their bytes (metadata scanned, managedFields cut) instead of decoded objects. */
  keepBytes?: boolean | undefined
  /** Leave `metadata.managedFields` out of what is decoded. */
  dropManagedFields?: boolean | undefined
}

/** A watch stream's read options: its name in errors and its longest event. */
export interface WatchReadOptions extends ReadOptions {
  /** Names the stream in errors, e.g. `watch /api/v1/pods`. */
  source: string
  /** Longest accepted event (JSON line or protobuf frame) in bytes. */
  maxEventBytes?: number | undefined
}

/** The format of one get, list or watch call. */
export interface ResponseFormat {
  /** The protobuf kind asked for first, or undefined when only JSON is asked for. */
  readonly kind: KindSchema | undefined
  /** The Accept header to send. */
  readonly accept: string
  /** Decodes an error answered in protobuf (a `Status`); undefined when protobuf is not asked for. */
  readonly decodeStatus: ((bytes: Uint8Array) => KubeObject) | undefined
  /**
   * An object (a get's answer) that came with `contentType`, with its managedFields. A JSON body is not read
   * here: `parseJson` is called for it, so the transport's JSON reader keeps its error reporting.
   */
  object<R extends KubeObject>(
    contentType: string | string[] | undefined,
    bytes: Uint8Array,
    parseJson: (bytes: Uint8Array) => R,
  ): R
  /**
   * A list body that came with `contentType`. A JSON body without `keepBytes` is not read here: the
   * transport's JSON reader keeps its error reporting, so `parseJson` is called for it.
   */
  list<R extends KubeObject>(
    contentType: string | string[] | undefined,
    bytes: Uint8Array,
    o: ReadOptions,
    parseJson: (bytes: Uint8Array) => KubeList<R>,
  ): KubeList<R>
  /** The events of a watch stream that came with `contentType`. */
  watch<T extends KubeObject>(
    contentType: string | string[] | undefined,
    body: AsyncIterable<Uint8Array>,
    o: WatchReadOptions,
  ): AsyncGenerator<WatchEvent<T>>
}

/** Metadata-only calls read PartialObjectMetadata (a watch, a get) or PartialObjectMetadataList (a list). */
export type MetadataAs = 'PartialObjectMetadata' | 'PartialObjectMetadataList'

/**
 * The format of a call on `type`: protobuf first when the type carries its protobuf kind and the call does
 * not say `format: 'json'` (metadata-only calls ask for protobuf PartialObjectMetadata then), else JSON.
 */
export function responseFormat(
  type: { readonly protobuf?: KindSchema | undefined },
  o: FormatOptions,
  as?: MetadataAs,
): ResponseFormat {
  const kind = protobufKindOf(type, { ...o, metadataOnly: as !== undefined })
  return {
    kind,
    accept: acceptHeader(kind, as),
    decodeStatus: kind?.decoders.status,
    object<R extends KubeObject>(
      contentType: string | string[] | undefined,
      bytes: Uint8Array,
      parseJson: (bytes: Uint8Array) => R,
    ): R {
      if (kind !== undefined && isProtobufResponse(contentType)) return kind.decoders.object(kind, bytes) as R
      return parseJson(bytes)
    },
    list(contentType, bytes, r, parseJson) {
      if (kind !== undefined && isProtobufResponse(contentType)) {
        return kind.decoders.list(kind, bytes, {
          dropManagedFields: r.dropManagedFields || r.keepBytes,
          keepBytes: r.keepBytes ? kind.decoders.codec(kind) : undefined,
        }) as KubeList<never>
      }
      return r.keepBytes ? decodeListBytes(bytes) : parseJson(bytes)
    },
    watch<T extends KubeObject>(
      contentType: string | string[] | undefined,
      body: AsyncIterable<Uint8Array>,
      r: WatchReadOptions,
    ) {
      if (kind !== undefined && isProtobufResponse(contentType)) {
        return kind.decoders.watch<T>(body, kind, {
          source: r.source,
          dropManagedFields: r.dropManagedFields || r.keepBytes,
          keepBytes: r.keepBytes ? kind.decoders.codec(kind) : undefined,
          maxFrameBytes: r.maxEventBytes,
        })
      }
      return decodeWatchStream<T>(body, {
        source: r.source,
        keepBytes: r.keepBytes,
        maxLineBytes: r.maxEventBytes,
      })
    },
  }
}
