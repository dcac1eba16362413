/**
 * @module reader — a cursor over protobuf bytes: varints, lengths, strings, skipping, and the decode error
 * that names the message and byte offset.
 */
import { Buffer } from 'node:buffer'
import { EdgeopError } from '../../core/errors.ts'

/** Protobuf wire type of varints (ints, bools, enums). */
export const VARINT = 0
/** Protobuf wire type of 8-byte values (doubles). */
export const FIXED64 = 1
/** Protobuf wire type of length-prefixed values (strings, bytes, messages, packed lists). */
export const LENGTH_DELIMITED = 2
/** Protobuf wire type of 4-byte values (floats). */
export const FIXED32 = 5

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
