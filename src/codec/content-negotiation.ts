/**
 * @module content-negotiation — which format a list or watch asks the API server for, and how the answer is read.
 *
 * Built-in kinds can be read as protobuf (`application/vnd.kubernetes.protobuf`): the API server encodes it
 * several times faster than JSON and it is about 30 % smaller on the wire. A {@link ResourceType} that carries
 * its `protobuf` kind (from `edgeop/protobuf`) is listed and watched in protobuf unless the call says
 * `format: 'json'`; JSON is always offered second, so a server or resource without protobuf (custom resources)
 * answers in JSON, and the answer's Content-Type decides how it is decoded. Metadata-only calls ask for
 * protobuf PartialObjectMetadata for every resource, with or without its protobuf kind, as client-go's metadata
 * client does (`metadata.ConfigFor`): the API server converts any object, custom resources included, and the
 * decoder needs only ObjectMeta's table for it. So every bundle with a client carries the protobuf decoder and
 * that one table; the tables of whole kinds come only with the types that carry them (`PROTOBUF_PODS`, …).
 */
import type { KindSchema } from './protobuf/kind-schema.ts'
import { PROTOBUF_DECODERS } from './protobuf/protobuf-decoders.ts'

/** The protobuf media type. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf'

/** How a list or watch is read. */
export interface FormatOptions {
  /** `protobuf` (the default when the resource type carries its protobuf kind) or `json`. Without a kind, JSON. */
  format?: 'json' | 'protobuf'
  /** Leave `metadata.managedFields` out of what is decoded (an informer that strips them asks for this). */
  dropManagedFields?: boolean
}

/**
 * The protobuf kind a call on `type` decodes with, or undefined for JSON: unless `format: 'json'`,
 * `meta.k8s.io/v1` PartialObjectMetadata for a metadata-only call on any type, else the type's own kind.
 */
export function protobufKindOf(
  type: { readonly protobuf?: KindSchema | undefined },
  o: FormatOptions & { metadataOnly?: boolean },
): KindSchema | undefined {
  if (o.format === 'json') return undefined
  return o.metadataOnly ? PROTOBUF_DECODERS.partialObjectMetadata : type.protobuf
}

/** Whether a response's Content-Type is protobuf. */
export function isProtobufResponse(contentType: string | string[] | undefined): boolean {
  const ct = Array.isArray(contentType) ? contentType[0] : contentType
  return ct?.startsWith(PROTOBUF_MEDIA_TYPE) === true
}

/** The Accept header of a call: protobuf first when `kind` is set, JSON second; `as` for metadata-only calls. */
export function acceptHeader(
  kind: KindSchema | undefined,
  as?: 'PartialObjectMetadata' | 'PartialObjectMetadataList',
): string {
  const meta = as ? `;as=${as};g=meta.k8s.io;v=v1` : ''
  const json = as ? `application/json${meta},application/json` : 'application/json'
  return kind ? `${PROTOBUF_MEDIA_TYPE}${meta},${json}` : json
}
