/**
 * @module decode — protobuf bytes of a built-in kind to the plain object the API server's JSON would give.
 *
 * The decoder does what the API server does when it answers in JSON: it reads the protobuf message into
 * the Go type (absent fields stay at Go's zero value) and writes that value as Go's `encoding/json` would
 * (omitempty and omitzero, pointers, embedded structs, and the types with their own JSON form: times,
 * quantities, int-or-strings, raw JSON). The result deep-equals `JSON.parse` of the server's JSON for the
 * same object; the differential test in test/protobuf/ checks it on objects recorded from a real API server.
 * The cursor over the bytes is reader.ts; the JSON forms of Go's time types are go-json.ts.
 */
import { EdgeopError } from '../../core/errors.ts'
import { goDuration, rfc3339, rfc3339Micro } from './go-json.ts'
import { Code, type FieldSchema, type MessageSchema } from './message-schema.ts'
import { FIXED32, FIXED64, LENGTH_DELIMITED, protobufError, Reader, VARINT } from './reader.ts'

/** Options of {@link decodeMessage}. */
export interface DecodeMessageOptions {
  /** Leave `metadata.managedFields` out (skipped on the wire, never built). */
  dropManagedFields?: boolean
  /**
   * Share one copy of each short string across decoded objects (default true): less memory for objects that
   * are kept. Off for objects decoded on demand from a compact store, which are short-lived.
   */
  shareStrings?: boolean
}

/**
 * Decodes `bytes[start, end)` as `schema` into `out` (a new plain object by default) and returns it.
 * @throws EdgeopError `EDGEOP_ERR_DECODE` on truncated or malformed bytes, naming the message and byte offset.
 */
export function decodeMessage(
  schema: MessageSchema,
  bytes: Uint8Array,
  start = 0,
  end = bytes.byteLength,
  options: DecodeMessageOptions = {},
  out: Record<string, unknown> = newObject(schema),
): Record<string, unknown> {
  const r = new Reader(bytes, start, schema.name)
  if (options.dropManagedFields) r.dropManagedFields = true
  if (options.shareStrings === false) r.shareStrings = false
  decodeInto(r, schema, end, out)
  if (r.pos !== end) r.fail('message does not end at its length')
  return out
}

/**
 * A new plain object for a value of `schema`. Made by a constructor per message whose prototype is
 * `Object.prototype`: V8 then learns how many properties such objects get (slack tracking) and keeps them
 * in the object, where `{}` would move them to a separate, over-allocated backing store. The result is a
 * plain object all the same (`Object.getPrototypeOf(o) === Object.prototype`).
 */
function newObject(schema: MessageSchema): Record<string, unknown> {
  return new (schema.compiled().make)()
}

/** Decodes the message at the cursor up to `end` into `out` (the parent's object for an embedded struct). */
function decodeInto(r: Reader, schema: MessageSchema, end: number, out: Record<string, unknown>): void {
  const { byNumber, whenAbsent } = schema.compiled()
  // Bit i: whenAbsent[i] was on the wire (the generator keeps those lists under 31 fields; checked at compile).
  let seen = 0
  while (r.pos < end) {
    const tagAt = r.pos
    const tag = r.uvarint(end)
    const wt = tag & 7
    const field = byNumber[tag >>> 3]
    if (field === undefined || tag >>> 3 === 0) {
      if (tag >>> 3 === 0) r.fail('field number 0', tagAt)
      r.skip(wt, end)
      continue
    }
    if (field.absentBit !== 0) seen |= field.absentBit
    if (field.map) {
      if (wt !== LENGTH_DELIMITED) r.fail(`map ${field.name} has wire type ${wt}`, tagAt)
      const entryEnd = r.lengthEnd(end)
      let map = out[field.name] as Record<string, unknown> | undefined
      if (map === undefined) out[field.name] = map = {}
      readMapEntry(r, field, entryEnd, map)
      continue
    }
    if (field.repeated) {
      if (r.dropManagedFields && field.name === 'managedFields') {
        r.skip(wt, end)
        continue
      }
      let list = out[field.name] as unknown[] | undefined
      if (list === undefined) out[field.name] = list = []
      if (wt === LENGTH_DELIMITED && isPackable(field.code)) {
        const stop = r.lengthEnd(end)
        while (r.pos < stop) list.push(readValue(r, field, packedWireType(field.code), stop))
        continue
      }
      list.push(readValue(r, field, wt, end))
      continue
    }
    if (field.inline) {
      if (wt !== LENGTH_DELIMITED)
        r.fail(`embedded ${field.name || field.message?.name} has wire type ${wt}`, tagAt)
      const stop = r.lengthEnd(end)
      decodeInto(r, field.message as MessageSchema, stop, out)
      continue
    }
    const value = readValue(r, field, wt, end)
    if (!field.pointer && omitted(field, value)) {
      if (field.name in out) delete out[field.name]
      continue
    }
    out[field.name] = value
  }
  if (whenAbsent.length !== 0) {
    for (const field of whenAbsent) {
      if ((seen & field.absentBit) === 0) fillAbsent(r, field, out)
    }
  }
}

function isPackable(code: Code): boolean {
  return code === Code.Int || code === Code.Bool || code === Code.Double
}

function packedWireType(code: Code): number {
  return code === Code.Double ? FIXED64 : VARINT
}

/** Whether a value read off the wire is left out of the JSON (omitempty on a zero scalar, omitzero on a zero value). */
function omitted(field: FieldSchema, value: unknown): boolean {
  const zero = value === '' || value === 0 || value === false
  if (field.omitZero && (zero || value === null)) return true
  // omitempty never omits a struct, whatever its JSON looks like (a zero quantity, int-or-string, duration).
  return (
    field.omitEmpty &&
    zero &&
    field.code !== Code.Quantity &&
    field.code !== Code.IntOrString &&
    field.code !== Code.Duration
  )
}

function fillAbsent(r: Reader, field: FieldSchema, out: Record<string, unknown>): void {
  if (field.inline) {
    decodeInto(r, field.message as MessageSchema, r.pos, out)
    return
  }
  if (field.repeated || field.map || field.pointer || field.code === Code.Bytes) {
    out[field.name] = null
    return
  }
  // The same rule as for a zero read off the wire: Go cannot tell the two apart.
  const zero = zeroValue(r, field)
  if (zero !== undefined && !omitted(field, zero)) out[field.name] = zero
}

function zeroValue(r: Reader, field: FieldSchema): unknown {
  switch (field.code) {
    case Code.String:
      return ''
    case Code.Bool:
      return false
    case Code.Int:
    case Code.Double:
    case Code.IntOrString:
      return 0
    case Code.Time:
    case Code.MicroTime:
    case Code.RawExtension:
    case Code.FieldsV1:
      return null
    case Code.Quantity:
      return '0'
    case Code.Duration:
      return '0s'
    case Code.Message: {
      const obj = newObject(field.message as MessageSchema)
      decodeInto(r, field.message as MessageSchema, r.pos, obj)
      return obj
    }
    default:
      return undefined
  }
}

function readMapEntry(r: Reader, field: FieldSchema, end: number, map: Record<string, unknown>): void {
  let key = ''
  let value: unknown
  while (r.pos < end) {
    const tagAt = r.pos
    const tag = r.uvarint(end)
    const wt = tag & 7
    const n = tag >>> 3
    if (n === 1) {
      if (wt !== LENGTH_DELIMITED) r.fail(`map ${field.name}'s key has wire type ${wt}`, tagAt)
      key = r.string(end)
    } else if (n === 2) value = readValue(r, field, wt, end)
    else r.skip(wt, end)
  }
  map[key] = value === undefined ? (zeroValue(r, field) ?? null) : value
}

/** One value of `field`'s type at the cursor. */
function readValue(r: Reader, field: FieldSchema, wt: number, end: number): unknown {
  const at = r.pos
  switch (field.code) {
    case Code.String:
      if (wt !== LENGTH_DELIMITED) break
      return r.string(end)
    case Code.Bool:
      if (wt !== VARINT) break
      return r.uvarint(end) !== 0
    case Code.Int:
      if (wt !== VARINT) break
      return r.varint(end)
    case Code.Double:
      if (wt === FIXED64) {
        if (r.pos + 8 > end) r.fail('truncated double')
        const v = r.buf.readDoubleLE(r.pos)
        r.pos += 8
        return v
      }
      if (wt === FIXED32) {
        if (r.pos + 4 > end) r.fail('truncated float')
        const v = r.buf.readFloatLE(r.pos)
        r.pos += 4
        return v
      }
      break
    case Code.Bytes: {
      if (wt !== LENGTH_DELIMITED) break
      const stop = r.lengthEnd(end)
      const s = r.buf.toString('base64', r.pos, stop)
      r.pos = stop
      return s
    }
    default: {
      if (wt !== LENGTH_DELIMITED) break
      const stop = r.lengthEnd(end)
      const v = readEmbedded(r, field, stop)
      r.pos = stop
      return v
    }
  }
  return r.fail(`field ${field.name || field.number} has wire type ${wt}`, at)
}

/** A length-delimited message value whose bytes are `[r.pos, stop)`. */
function readEmbedded(r: Reader, field: FieldSchema, stop: number): unknown {
  switch (field.code) {
    case Code.Message: {
      const schema = field.message as MessageSchema
      const obj = newObject(schema)
      if (schema.typeMeta) {
        obj.apiVersion = schema.typeMeta.apiVersion
        obj.kind = schema.typeMeta.kind
      }
      decodeInto(r, schema, stop, obj)
      return obj
    }
    case Code.Time:
    case Code.MicroTime: {
      const at = r.pos
      const [seconds, nanos] = readTime(r, stop)
      if (seconds === 0 && nanos === 0) return null
      if (seconds < MIN_TIME_SECONDS || seconds > MAX_TIME_SECONDS || nanos < 0 || nanos >= 1e9)
        throw protobufError(r.what, at, 'a time outside years 1-9999')
      return field.code === Code.Time ? rfc3339(seconds) : rfc3339Micro(seconds, nanos)
    }
    case Code.Quantity: {
      let s = '0'
      while (r.pos < stop) {
        const tag = r.uvarint(stop)
        if (tag === 0x0a) s = r.string(stop)
        else r.skip(tag & 7, stop)
      }
      return s === '' ? '0' : s
    }
    case Code.IntOrString: {
      let type = 0
      let intVal = 0
      let strVal = ''
      while (r.pos < stop) {
        const tag = r.uvarint(stop)
        if (tag === 0x08) type = r.varint(stop)
        else if (tag === 0x10) intVal = r.varint(stop)
        else if (tag === 0x1a) strVal = r.string(stop)
        else r.skip(tag & 7, stop)
      }
      return type === 1 ? strVal : intVal
    }
    case Code.RawExtension:
    case Code.FieldsV1: {
      let raw: unknown = null
      while (r.pos < stop) {
        const tagAt = r.pos
        const tag = r.uvarint(stop)
        if (tag === 0x0a) {
          const s = r.string(stop)
          try {
            raw = JSON.parse(s)
          } catch (cause) {
            throw new EdgeopError(
              'EDGEOP_ERR_DECODE',
              `protobuf ${r.what}: ${field.name} holds ${s.length} bytes that are not JSON at byte ${tagAt}`,
              { step: 'decode protobuf', cause },
            )
          }
        } else r.skip(tag & 7, stop)
      }
      return raw
    }
    case Code.Duration: {
      let ns = 0
      while (r.pos < stop) {
        const tag = r.uvarint(stop)
        if (tag === 0x08) ns = r.varint(stop)
        else r.skip(tag & 7, stop)
      }
      return goDuration(ns)
    }
  }
  return undefined
}

/**
 * The range of a protobuf `Timestamp` (google/protobuf `timestamp.proto`: seconds from
 * 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, nanos from 0 to 999,999,999), which is also what RFC 3339
 * and Go's `Time.MarshalJSON` can write. Outside it `Date` cannot give an RFC 3339 string.
 */
const MIN_TIME_SECONDS = -62_135_596_800
const MAX_TIME_SECONDS = 253_402_300_799

function readTime(r: Reader, stop: number): [number, number] {
  let seconds = 0
  let nanos = 0
  while (r.pos < stop) {
    const tag = r.uvarint(stop)
    if (tag === 0x08) seconds = r.varint(stop)
    else if (tag === 0x10) nanos = r.varint(stop)
    else r.skip(tag & 7, stop)
  }
  return [seconds, nanos]
}
