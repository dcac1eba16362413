/**
 * @module envelope — the Kubernetes protobuf envelope: the `k8s\0` magic and the `runtime.Unknown` wrapper.
 *
 * Every object or list the API server answers in `application/vnd.kubernetes.protobuf` is the four bytes
 * `k8s\0` followed by a `runtime.Unknown` message: `typeMeta` (field 1: apiVersion 1, kind 2), `raw`
 * (field 2: the object's own message), `contentEncoding` (3) and `contentType` (4). Watch streams frame each
 * event with a 4-byte big-endian length and carry the `metav1.WatchEvent` without the envelope; the event's
 * object is enveloped again (see watch-frames.ts).
 */
import { Reader } from './reader.ts'

/** The four bytes every enveloped protobuf body starts with. */
export const PROTOBUF_MAGIC: readonly number[] = [0x6b, 0x38, 0x73, 0x00]

/** What the envelope says: the type, and where the object's own bytes are. */
export interface Unwrapped {
  /** `typeMeta.apiVersion` of the envelope. */
  readonly apiVersion: string
  /** `typeMeta.kind` of the envelope (`Status` for an error answer). */
  readonly kind: string
  /** Where the object's message bytes start in the buffer that was unwrapped. */
  readonly start: number
  /** Where they end (exclusive). */
  readonly end: number
}

/** Whether `bytes[start, end)` starts with the protobuf magic. */
export function hasMagic(bytes: Uint8Array, start = 0, end = bytes.byteLength): boolean {
  return (
    end - start >= 4 &&
    bytes[start] === 0x6b &&
    bytes[start + 1] === 0x38 &&
    bytes[start + 2] === 0x73 &&
    bytes[start + 3] === 0x00
  )
}

/**
 * Unwraps an enveloped body at `bytes[start, end)`.
 * @throws EdgeopError `EDGEOP_ERR_DECODE` without the magic, with a content encoding (none is defined), or when malformed.
 */
export function unwrap(bytes: Uint8Array, start = 0, end = bytes.byteLength, what = 'body'): Unwrapped {
  const r = new Reader(bytes, start, what)
  if (!hasMagic(bytes, start, end)) r.fail('no k8s protobuf magic (k8s\\0)')
  r.pos = start + 4
  let apiVersion = ''
  let kind = ''
  let rawStart = r.pos
  let rawEnd = r.pos
  while (r.pos < end) {
    const tag = r.uvarint(end)
    if (tag === 0x0a) {
      const stop = r.lengthEnd(end)
      while (r.pos < stop) {
        const t = r.uvarint(stop)
        if (t === 0x0a) apiVersion = r.string(stop)
        else if (t === 0x12) kind = r.string(stop)
        else r.skip(t & 7, stop)
      }
    } else if (tag === 0x12) {
      rawEnd = r.lengthEnd(end)
      rawStart = r.pos
      r.pos = rawEnd
    } else if (tag === 0x1a) {
      const encoding = r.string(end)
      if (encoding !== '')
        r.fail(`content encoding ${JSON.stringify(encoding.slice(0, 40))} is not supported`)
    } else r.skip(tag & 7, end)
  }
  return { apiVersion, kind, start: rawStart, end: rawEnd }
}
