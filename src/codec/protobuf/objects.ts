/**
 * @module objects — enveloped protobuf bodies (an object, a list, a Status) to the objects edgeop hands out.
 */

import { type EncodedObject, encodedObject, type ObjectCodec } from '../../core/encoded-object.ts'
import type { KubeList, KubeObject } from '../../core/types.ts'
import { decodeMessage } from './decode.ts'
import { unwrap } from './envelope.ts'
import type { KindSchema, ProtobufObjectOptions } from './kind-schema.ts'
import { m_ListMeta, m_Status } from './messages.generated.ts'
import { protobufError, Reader } from './reader.ts'

function typeError(what: string, got: string, want: string): never {
  throw protobufError(what, 0, `is a ${got || 'message without kind'}, not a ${want}`)
}

/**
 * An enveloped object of `kind` (or a `Status`, which is returned as it is). With `keepBytes`, a stub.
 * @throws EdgeopError `EDGEOP_ERR_DECODE` for another kind or malformed bytes.
 */
export function decodeProtobufObject(
  kind: KindSchema,
  bytes: Uint8Array,
  options: ProtobufObjectOptions = {},
  start = 0,
  end = bytes.byteLength,
): KubeObject {
  const what = `${kind.apiVersion} ${kind.kind}`
  const u = unwrap(bytes, start, end, what)
  if (u.kind === 'Status' && kind.kind !== 'Status') {
    return decodeMessage(
      m_Status,
      bytes,
      u.start,
      u.end,
      {},
      { apiVersion: u.apiVersion, kind: u.kind },
    ) as KubeObject
  }
  if (u.kind !== kind.kind) typeError(what, u.kind, kind.kind)
  if (options.keepBytes) {
    return keep(options.keepBytes, bytes.subarray(u.start, u.end), u.apiVersion, u.kind, options)
  }
  return decodeMessage(kind.message, bytes, u.start, u.end, options, {
    apiVersion: u.apiVersion,
    kind: u.kind,
  }) as KubeObject
}

function keep(
  codec: ObjectCodec,
  view: Uint8Array,
  apiVersion: string | undefined,
  kind: string | undefined,
  options: ProtobufObjectOptions,
): EncodedObject {
  // No copy of the view here: the stub keeps its bytes as a string of its own (core/encoded-object.ts).
  const bytes = options.dropManagedFields ? codec.stripManagedFields(view) : view
  return encodedObject(bytes, codec, { apiVersion, kind })
}

/**
 * An enveloped list of `kind` (`<Kind>List`: metadata in field 1, items in field 2), items as the API server's
 * JSON list has them (without apiVersion and kind), or as stubs with `keepBytes`.
 * @throws EdgeopError `EDGEOP_ERR_DECODE` for another kind or malformed bytes.
 */
export function decodeProtobufList(
  kind: KindSchema,
  bytes: Uint8Array,
  options: ProtobufObjectOptions = {},
): KubeList {
  const what = `${kind.apiVersion} ${kind.kind}List`
  const u = unwrap(bytes, 0, bytes.byteLength, what)
  if (u.kind !== `${kind.kind}List`) typeError(what, u.kind, `${kind.kind}List`)
  const r = new Reader(bytes, u.start, what)
  let metadata: Record<string, unknown> = {}
  const items: KubeObject[] = []
  // The API server's JSON gives each PartialObjectMetadata of a list its apiVersion and kind (it builds them
  // one by one from the full objects); other lists' items have neither.
  const itemType =
    kind.kind === 'PartialObjectMetadata' ? { apiVersion: kind.apiVersion, kind: kind.kind } : undefined
  while (r.pos < u.end) {
    const tag = r.uvarint(u.end)
    if (tag === 0x0a) {
      const stop = r.lengthEnd(u.end)
      metadata = decodeMessage(m_ListMeta, bytes, r.pos, stop)
      r.pos = stop
    } else if (tag === 0x12) {
      const stop = r.lengthEnd(u.end)
      items.push(
        options.keepBytes
          ? keep(
              options.keepBytes,
              bytes.subarray(r.pos, stop),
              itemType?.apiVersion,
              itemType?.kind,
              options,
            )
          : (decodeMessage(
              kind.message,
              bytes,
              r.pos,
              stop,
              options,
              itemType ? { ...itemType } : undefined,
            ) as KubeObject),
      )
      r.pos = stop
    } else r.skip(tag & 7, u.end)
  }
  return { apiVersion: u.apiVersion, kind: u.kind, metadata, items } as KubeList
}
