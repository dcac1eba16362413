/**
 * @module codec — the {@link ObjectCodec} of a built-in kind's protobuf bytes: metadata scanned without
 * building the object, `managedFields` cut at byte level, the whole object decoded on demand.
 *
 * Every top-level kind of the table keeps its `ObjectMeta` in field 1 (a Kubernetes API convention that
 * test/protobuf/codec.test.ts checks for every kind of the table).
 */

import type { ObjectCodec, ScannedMeta } from '../../core/encoded-object.ts'
import type { KubeObject } from '../../core/types.ts'
import { decodeMessage } from './decode.ts'
import type { KindSchema } from './kind-schema.ts'
import { type MessageSchema, message } from './message-schema.ts'
import { Reader } from './reader.ts'

/** `metav1.OwnerReference`, as the generated table has it. */
const OWNER_REFERENCE = /* @__PURE__ */ message(
  'OwnerReference',
  '5s:apiVersion 1s:kind 3s:name 4s:uid 6opb:controller 7opb:blockOwnerDeletion',
  undefined,
)
/** The fields of `metav1.ObjectMeta` a scan reads (numbers as in the generated table); the rest is skipped. */
const SCANNED_META = /* @__PURE__ */ message(
  'ObjectMeta',
  '1os:name 3os:namespace 5os:uid 6os:resourceVersion 7oi:generation 9opT:deletionTimestamp 11oMs:labels 12oMs:annotations 13orm0:ownerReferences',
  () => [OWNER_REFERENCE],
)
/** `ObjectMeta.managedFields`' field number. */
const MANAGED_FIELDS = 17

/** The `[start, end)` of field 1 (ObjectMeta) in a top-level message, or undefined when absent. */
function metaSpan(r: Reader, end: number): { tagAt: number; start: number; end: number } | undefined {
  while (r.pos < end) {
    const tagAt = r.pos
    const tag = r.uvarint(end)
    if (tag === 0x0a) {
      const stop = r.lengthEnd(end)
      return { tagAt, start: r.pos, end: stop }
    }
    r.skip(tag & 7, end)
  }
  return undefined
}

/** Scans an object message's metadata. @throws EdgeopError `EDGEOP_ERR_DECODE` */
export function scanProtobufMeta(bytes: Uint8Array, what = 'object'): ScannedMeta {
  const r = new Reader(bytes, 0, what)
  const span = metaSpan(r, bytes.byteLength)
  if (span === undefined) return {}
  return decodeMessage(SCANNED_META, bytes, span.start, span.end) as ScannedMeta
}

function varintLength(n: number): number {
  let len = 1
  while (n >= 0x80) {
    n = Math.floor(n / 128)
    len++
  }
  return len
}

function writeVarint(out: Uint8Array, at: number, n: number): number {
  while (n >= 0x80) {
    out[at++] = (n & 0x7f) | 0x80
    n = Math.floor(n / 128)
  }
  out[at++] = n
  return at
}

/**
 * `bytes` (an object message) without `metadata.managedFields`, as a new buffer of its own; the same
 * buffer when there are none. @throws EdgeopError `EDGEOP_ERR_DECODE`
 */
export function cutManagedFields(bytes: Uint8Array, what = 'object'): Uint8Array {
  const r = new Reader(bytes, 0, what)
  const span = metaSpan(r, bytes.byteLength)
  if (span === undefined) return bytes
  const cuts: [number, number][] = []
  r.pos = span.start
  while (r.pos < span.end) {
    const at = r.pos
    const tag = r.uvarint(span.end)
    r.skip(tag & 7, span.end)
    if (tag >>> 3 === MANAGED_FIELDS) {
      const last = cuts[cuts.length - 1]
      if (last !== undefined && last[1] === at) last[1] = r.pos
      else cuts.push([at, r.pos])
    }
  }
  if (cuts.length === 0) return bytes
  let removed = 0
  for (const [a, b] of cuts) removed += b - a
  const metaLen = span.end - span.start - removed
  const oldHeader = span.start - span.tagAt
  const newHeader = 1 + varintLength(metaLen)
  const out = new Uint8Array(bytes.byteLength - removed - oldHeader + newHeader)
  out.set(bytes.subarray(0, span.tagAt), 0)
  let o = span.tagAt
  out[o++] = 0x0a
  o = writeVarint(out, o, metaLen)
  let from = span.start
  for (const [a, b] of cuts) {
    out.set(bytes.subarray(from, a), o)
    o += a - from
    from = b
  }
  out.set(bytes.subarray(from), o)
  return out
}

/** The codec of `kind`'s protobuf object messages (without envelope). */
export function protobufCodec(kind: KindSchema): ObjectCodec {
  const top: MessageSchema = kind.message
  const what = `${kind.apiVersion} ${kind.kind}`
  return {
    format: 'protobuf',
    scan: (bytes) => scanProtobufMeta(bytes, what),
    // Decoded on demand and soon dropped: sharing strings would only cost a lookup each.
    decode: (bytes) => decodeMessage(top, bytes, 0, bytes.byteLength, { shareStrings: false }) as KubeObject,
    stripManagedFields: (bytes) => cutManagedFields(bytes, what),
  }
}
