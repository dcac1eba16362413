/**
 * @module json-codec — the {@link ObjectCodec} of JSON objects (custom resources, and every type on a JSON wire).
 *
 * The scanner walks one object's bytes once: it reads `metadata`'s small fields (name, namespace, uid,
 * resourceVersion, generation, deletionTimestamp, labels, annotations, ownerReferences), notes where
 * `metadata.managedFields` lies so that it can be cut as bytes, and skips everything else without
 * building it. Only {@link ObjectCodec.decode} parses the whole object.
 */
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject, OwnerReference } from '../core/types.ts'
import type { ObjectCodec, ScannedMeta } from '../core/wire-object.ts'
import {
  eachMember,
  keyIs,
  quietCause,
  readString,
  readValue,
  scanError,
  skipSpace,
  skipValue,
  utf8Text,
} from './json-scan.ts'

/** What one walk over an object's bytes finds. */
export interface ObjectScan {
  /** The scanned metadata. */
  meta: ScannedMeta
  /** Index just past the object's closing brace. */
  end: number
  /** The bytes to cut to remove `metadata.managedFields` (with its comma), when present. */
  cut?: readonly [start: number, end: number]
}

const COMMA = 0x2c

/** Walks the object opening at `start` (after whitespace) in `b`. @throws EdgeopError `EDGEOP_ERR_DECODE` */
export function scanObject(b: Uint8Array, start: number, end: number): ObjectScan {
  const meta: ScannedMeta = {}
  let cut: readonly [number, number] | undefined
  let seenMeta = false
  const stop = eachMember(b, start, end, (m) => {
    if (seenMeta || !keyIs(b, m.keyStart, m.keyEnd, 'metadata')) return undefined
    seenMeta = true
    let prevEnd = -1
    let mf: { keyStart: number; valueEnd: number; prevEnd: number } | undefined
    const metaEnd = eachMember(b, m.valueStart, end, (f) => {
      let ve = readMetaField(b, f.keyStart, f.keyEnd, f.valueStart, end, meta)
      if (ve === -1) {
        ve = skipValue(b, f.valueStart, end)
        if (keyIs(b, f.keyStart, f.keyEnd, 'managedFields'))
          mf = { keyStart: f.keyStart, valueEnd: ve, prevEnd }
      }
      prevEnd = ve
      return ve
    })
    if (mf) {
      // Not last: cut the member and the comma after it, up to the next name. Last: cut from the
      // end of the previous member's value (its comma included). Only member: cut the member.
      const after = skipSpace(b, mf.valueEnd, end)
      if (b[after] === COMMA) cut = [mf.keyStart, skipSpace(b, after + 1, end)]
      else cut = mf.prevEnd >= 0 ? [mf.prevEnd, mf.valueEnd] : [mf.keyStart, mf.valueEnd]
    }
    return metaEnd
  })
  return cut ? { meta, end: stop, cut } : { meta, end: stop }
}

/** Reads one metadata member into `meta` if it is one the cache needs: the index past its value, or -1. */
function readMetaField(
  b: Uint8Array,
  ks: number,
  ke: number,
  vs: number,
  end: number,
  meta: ScannedMeta,
): number {
  const len = ke - ks - 2
  // Dispatch on length first: most members are not wanted and cost one comparison.
  switch (len) {
    case 4:
      if (keyIs(b, ks, ke, 'name')) return str(b, vs, end, (v) => (meta.name = v))
      break
    case 3:
      if (keyIs(b, ks, ke, 'uid')) return str(b, vs, end, (v) => (meta.uid = v))
      break
    case 6:
      if (keyIs(b, ks, ke, 'labels')) return map(b, vs, end, 'labels', (v) => (meta.labels = v))
      break
    case 9:
      if (keyIs(b, ks, ke, 'namespace')) return str(b, vs, end, (v) => (meta.namespace = v))
      break
    case 10:
      if (keyIs(b, ks, ke, 'generation')) {
        const e = skipValue(b, vs, end)
        const g = readValue(b, vs, e)
        if (typeof g !== 'number') throw scanError('metadata.generation is not a number', vs)
        meta.generation = g
        return e
      }
      break
    case 11:
      if (keyIs(b, ks, ke, 'annotations'))
        return map(b, vs, end, 'annotations', (v) => (meta.annotations = v))
      break
    case 15:
      if (keyIs(b, ks, ke, 'resourceVersion')) return str(b, vs, end, (v) => (meta.resourceVersion = v))
      if (keyIs(b, ks, ke, 'ownerReferences')) return refs(b, vs, end, meta)
      break
    case 17:
      if (keyIs(b, ks, ke, 'deletionTimestamp')) return str(b, vs, end, (v) => (meta.deletionTimestamp = v))
      break
  }
  // An escaped name has another byte length: compare it the slow way.
  if (b.subarray(ks, ke).includes(0x5c)) {
    const name = readString(b, ks, ke)
    if (name !== 'managedFields' && WANTED.has(name)) {
      const e = skipValue(b, vs, end)
      Object.assign(meta, { [name]: readValue(b, vs, e) })
      return e
    }
  }
  return -1
}

/** The metadata members {@link ScannedMeta} holds. */
export const SCANNED_FIELDS: readonly (keyof ScannedMeta)[] = [
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'deletionTimestamp',
  'labels',
  'annotations',
  'ownerReferences',
]
const WANTED = new Set<string>(SCANNED_FIELDS)

function str(b: Uint8Array, vs: number, end: number, set: (v: string) => void): number {
  const e = skipValue(b, vs, end)
  if (b[vs] === 0x6e) return e // null: the field is unset
  set(readString(b, vs, e))
  return e
}

function map(
  b: Uint8Array,
  vs: number,
  end: number,
  field: string,
  set: (v: Record<string, string>) => void,
): number {
  const e = skipValue(b, vs, end)
  const v = readValue(b, vs, e)
  if (v === null) return e
  if (typeof v !== 'object' || Array.isArray(v)) throw scanError(`metadata.${field} is not an object`, vs)
  set(v as Record<string, string>)
  return e
}

function refs(b: Uint8Array, vs: number, end: number, meta: ScannedMeta): number {
  const e = skipValue(b, vs, end)
  const v = readValue(b, vs, e)
  if (v === null) return e
  if (!Array.isArray(v)) throw scanError('metadata.ownerReferences is not an array', vs)
  meta.ownerReferences = v as OwnerReference[]
  return e
}

/** `bytes` with the span `cut` removed (a fresh, exactly sized copy). */
export function spliceOut(
  bytes: Uint8Array,
  start: number,
  end: number,
  cut?: readonly [number, number],
): Uint8Array {
  if (!cut) return bytes.slice(start, end)
  const out = new Uint8Array(end - start - (cut[1] - cut[0]))
  out.set(bytes.subarray(start, cut[0]), 0)
  out.set(bytes.subarray(cut[1], end), cut[0] - start)
  return out
}

/** The whole of `bytes` must be one object (whitespace around it allowed). */
function scanWhole(bytes: Uint8Array): ObjectScan & { start: number } {
  const start = skipSpace(bytes, 0, bytes.length)
  const s = scanObject(bytes, start, bytes.length)
  if (skipSpace(bytes, s.end, bytes.length) !== bytes.length) throw scanError('bytes after the object', s.end)
  return { ...s, start }
}

/**
 * The codec of one JSON object's UTF-8 bytes. `scan` and `stripManagedFields` walk the bytes once and
 * parse only the metadata fields of {@link ScannedMeta}; `decode` is `JSON.parse`.
 */
export const jsonCodec: ObjectCodec = {
  format: 'json',
  scan: (bytes) => scanWhole(bytes).meta,
  decode(bytes: Uint8Array): KubeObject {
    const text = utf8Text(bytes)
    let v: unknown
    try {
      v = JSON.parse(text)
    } catch (cause) {
      throw new EdgeopError('EDGEOP_ERR_DECODE', `malformed JSON object of ${bytes.length} bytes`, {
        step: 'decode JSON',
        cause: quietCause(cause),
      })
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v))
      throw new EdgeopError('EDGEOP_ERR_DECODE', `JSON of ${bytes.length} bytes is not an object`, {
        step: 'decode JSON',
      })
    return v as KubeObject
  },
  stripManagedFields(bytes: Uint8Array): Uint8Array {
    const s = scanWhole(bytes)
    return s.cut ? spliceOut(bytes, 0, bytes.length, s.cut) : bytes
  },
}
