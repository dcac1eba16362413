/**
 * @module decode — protobuf bytes of a built-in kind to the plain object the API server's JSON would give.
 *
 * The decoder does what the API server does when it answers in JSON: it reads the protobuf message into
 * the Go type (absent fields stay at Go's zero value) and writes that value as Go's `encoding/json` would
 * (omitempty and omitzero, pointers, embedded structs, and the types with their own JSON form: times,
 * quantities, int-or-strings, raw JSON). The result deep-equals `JSON.parse` of the server's JSON for the
 * same object; the differential test in test/protobuf/ checks it on objects recorded from a real API server.
 */
import { Buffer } from 'node:buffer'
import { EdgeopError } from '../core/errors.ts'
import { Code, type FieldSchema, type MessageSchema } from './message-schema.ts'

/** Protobuf wire types. */
const VARINT = 0
const FIXED64 = 1
const LENGTH_DELIMITED = 2
const FIXED32 = 5

const TWO_32 = 4294967296

/** Strings up to this length are checked for ASCII and sliced as latin1 (measured faster below ~64 bytes). */
const SHORT_STRING = 64

/**
 * Short strings repeat across objects (enum values, label keys and values, image names, node names); the
 * decoder hands out one copy of each, as V8's JSON.parse does for the strings it internalizes. Bounded:
 * the table is dropped when it reaches this many strings.
 */
const SHARED_STRINGS_MAX = 8192
let sharedStrings = new Map<string, string>()

function shared(s: string): string {
  const hit = sharedStrings.get(s)
  if (hit !== undefined) return hit
  if (sharedStrings.size === SHARED_STRINGS_MAX) sharedStrings = new Map()
  sharedStrings.set(s, s)
  return s
}

/** Buffer's slicing methods without `toString`'s argument handling (present on every Node Buffer). */
interface FastSlices {
  latin1Slice(start: number, end: number): string
  utf8Slice(start: number, end: number): string
}

/** A decode failure: which message, at which byte, and why. Not retryable: the same bytes fail again. */
export function protobufError(what: string, at: number, why: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_DECODE', `protobuf ${what}: ${why} at byte ${at}`, {
    step: 'decode protobuf',
  })
}

/** A cursor over a buffer: the decoder's only mutable state. */
export class Reader {
  readonly buf: Buffer
  pos: number
  /** What is being decoded, for errors. */
  what: string
  /** Skip `metadata.managedFields` instead of building them (an informer would drop them anyway). */
  dropManagedFields = false
  /** Hand out one shared copy of each short string (for objects that are kept; see {@link shared}). */
  shareStrings = true

  constructor(bytes: Uint8Array, start = 0, what = 'message') {
    this.buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.pos = start
    this.what = what
  }

  fail(why: string, at = this.pos): never {
    throw protobufError(this.what, at, why)
  }

  /** A varint as an unsigned number (exact up to 2^53; beyond, rounded, as `JSON.parse` would). */
  uvarint(end: number): number {
    const buf = this.buf
    let pos = this.pos
    let b = pos < end ? (buf[pos++] as number) : this.fail('truncated varint')
    if (b < 0x80) {
      this.pos = pos
      return b
    }
    let lo = b & 0x7f
    let shift = 7
    for (;;) {
      if (pos >= end) this.fail('truncated varint')
      b = buf[pos++] as number
      if (shift < 28) {
        lo |= (b & 0x7f) << shift
      } else if (shift === 28) {
        // Bits 28..34: four go into the low word, three into the high one.
        lo = (lo | ((b & 0x0f) << 28)) >>> 0
        let hi = (b & 0x7f) >>> 4
        let hshift = 3
        while (b >= 0x80) {
          if (pos >= end) this.fail('truncated varint')
          if (hshift > 31) this.fail('varint longer than 10 bytes')
          b = buf[pos++] as number
          hi = (hi | ((b & 0x7f) << hshift)) >>> 0
          hshift += 7
        }
        this.pos = pos
        return hi * TWO_32 + lo
      }
      if (b < 0x80) {
        this.pos = pos
        return lo >>> 0
      }
      shift += 7
    }
  }

  /** A varint as a signed 64-bit (or sign-extended 32-bit) integer. */
  varint(end: number): number {
    const start = this.pos
    const v = this.uvarint(end)
    if (v < 2 ** 63) return v
    // Negative: two's complement over 64 bits. Recompute from the bytes to keep the low bits exact.
    let lo = 0
    let hi = 0
    const buf = this.buf
    for (let i = 0, p = start; p < this.pos; i++, p++) {
      const b = (buf[p] as number) & 0x7f
      const shift = i * 7
      if (shift < 28) lo |= b << shift
      else if (shift === 28) {
        lo |= (b & 0x0f) << 28
        hi |= b >>> 4
      } else hi |= b << (shift - 32)
    }
    return -((~hi >>> 0) * TWO_32 + (~lo >>> 0) + 1)
  }

  /** The end of a length-delimited value starting at the cursor (the cursor moves past the length). */
  lengthEnd(end: number): number {
    const len = this.uvarint(end)
    const stop = this.pos + len
    if (stop > end) this.fail(`length ${len} runs past the end`)
    return stop
  }

  /** Skips one value of wire type `wt`. */
  skip(wt: number, end: number): void {
    switch (wt) {
      case VARINT:
        this.uvarint(end)
        return
      case FIXED64:
        this.pos += 8
        break
      case LENGTH_DELIMITED:
        this.pos = this.lengthEnd(end)
        return
      case FIXED32:
        this.pos += 4
        break
      default:
        this.fail(`wire type ${wt} is not supported`)
    }
    if (this.pos > end) this.fail('truncated fixed-width value')
  }

  string(end: number): string {
    const stop = this.lengthEnd(end)
    const start = this.pos
    this.pos = stop
    if (stop === start) return ''
    const buf = this.buf
    // Short ASCII strings (names, keys, enum values) are most strings: latin1 skips UTF-8 validation.
    if (stop - start <= SHORT_STRING) {
      let ascii = true
      for (let i = start; i < stop; i++) {
        if ((buf[i] as number) >= 0x80) {
          ascii = false
          break
        }
      }
      if (ascii) {
        const s = (buf as unknown as FastSlices).latin1Slice(start, stop)
        return this.shareStrings ? shared(s) : s
      }
    }
    return (buf as unknown as FastSlices).utf8Slice(start, stop)
  }
}

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

let lastSeconds = Number.NaN
let lastTime = ''

/** `metav1.Time`'s JSON: RFC 3339 in UTC, whole seconds (`2006-01-02T15:04:05Z`). */
export function rfc3339(seconds: number): string {
  // Objects of one list often share their timestamps: keep the last one.
  if (seconds === lastSeconds) return lastTime
  const iso = new Date(seconds * 1000).toISOString()
  lastSeconds = seconds
  lastTime = `${iso.slice(0, 19)}Z`
  return lastTime
}

/** `metav1.MicroTime`'s JSON: RFC 3339 in UTC with six fractional digits. */
export function rfc3339Micro(seconds: number, nanos: number): string {
  const iso = new Date(seconds * 1000).toISOString()
  const micros = Math.floor(nanos / 1000)
  return `${iso.slice(0, 19)}.${String(micros).padStart(6, '0')}Z`
}

const UNITS: readonly [string, number][] = [
  ['h', 3600e9],
  ['m', 60e9],
]

/** `metav1.Duration`'s JSON: Go's `time.Duration.String()` (`1h2m3.5s`, `150ms`, `0s`). */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s'
  const sign = ns < 0 ? '-' : ''
  let rest = Math.abs(ns)
  if (rest < 1e9) {
    if (rest < 1e3) return `${sign}${rest}ns`
    if (rest < 1e6) return `${sign}${trim(rest / 1e3)}µs`
    return `${sign}${trim(rest / 1e6)}ms`
  }
  let out = sign
  let started = false
  for (const [unit, size] of UNITS) {
    const n = Math.floor(rest / size)
    if (n > 0 || started) {
      out += `${n}${unit}`
      started = true
    }
    rest -= n * size
  }
  return `${out}${trim(rest / 1e9)}s`
}

function trim(n: number): string {
  return String(Number(n.toFixed(9)))
}
