/**
 * @module json-codec — the {@link ObjectCodec} of JSON objects (custom resources, and every type on a JSON wire).
 *
 * The scanner walks one object's bytes once: it reads `metadata`'s small fields (name, namespace, uid,
 * resourceVersion, generation, deletionTimestamp, labels, annotations, ownerReferences), notes where
 * `metadata.managedFields` lies so that it can be cut as bytes, and skips everything else without
 * building it. Only {@link ObjectCodec.decode} parses the whole object.
 */

import type { ObjectCodec, ScannedMeta } from '../core/encoded-object.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
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
    const metaEnd = eachMember(b, m.valueStart, end, (f) => {
      const name = readString(b, f.keyStart, f.keyEnd)
      const ve = skipValue(b, f.valueStart, end)
      if (WANTED.has(name)) readMetaField(b, f.valueStart, ve, name as keyof ScannedMeta, meta)
      else if (name === 'managedFields') {
        // Not last: cut the member and the comma after it, up to the next name. Last: cut from the
        // end of the previous member's value (its comma included). Only member: cut the member.
        const after = skipSpace(b, ve, end)
        if (b[after] === COMMA) cut = [f.keyStart, skipSpace(b, after + 1, end)]
        else cut = prevEnd >= 0 ? [prevEnd, ve] : [f.keyStart, ve]
      }
      prevEnd = ve
      return ve
    })
    return metaEnd
  })
  return cut ? { meta, end: stop, cut } : { meta, end: stop }
}

/** Reads the metadata member `name` spanning `[vs, ve)` into `meta`; null leaves it unset. */
function readMetaField(
  b: Uint8Array,
  vs: number,
  ve: number,
  name: keyof ScannedMeta,
  meta: ScannedMeta,
): void {
  if (b[vs] === 0x6e) return // null
  const v = b[vs] === 0x22 ? readString(b, vs, ve) : readValue(b, vs, ve)
  const want =
    name === 'generation'
      ? 'number'
      : STRINGS.has(name)
        ? 'string'
        : name === 'ownerReferences'
          ? 'array'
          : 'object'
  const got = Array.isArray(v) ? 'array' : typeof v
  if (got !== want)
    throw scanError(
      `metadata.${name} is not ${want === 'array' || want === 'object' ? 'an' : 'a'} ${want}`,
      vs,
    )
  ;(meta as Record<string, unknown>)[name] = v
}

const STRINGS = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'deletionTimestamp'])

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
