/**
 * @module encoded-object — an object kept as its encoded bytes, with only the metadata the runtime needs read out.
 *
 * A compact store caches each object as the bytes it arrived in (protobuf for built-in types,
 * JSON for custom resources) instead of as a tree of JavaScript objects. What the watch engine, the relist
 * diff and the store's keys and indexes read (name, namespace, uid, resourceVersion, labels, owner
 * references) is read out of the bytes by a scanner that does not build the object; the whole object is
 * decoded on demand. A {@link EncodedObject} is that pair: a small {@link KubeObject} whose `metadata` holds the
 * scanned fields, plus the bytes and the codec that can decode them, under a symbol so that spreading,
 * `JSON.stringify` and `Object.keys` never see them.
 */
import { Buffer } from 'node:buffer'
import type { KubeObject, OwnerReference } from './types.ts'

/** The metadata a scanner reads out of an object's bytes without building the object. */
export interface ScannedMeta {
  name?: string
  namespace?: string
  uid?: string
  resourceVersion?: string
  generation?: number
  deletionTimestamp?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
  ownerReferences?: OwnerReference[]
}

/**
 * Turns one object's wire bytes into what the runtime needs. Implementations: the protobuf codec of a
 * built-in kind (`src/codec/protobuf/`), the JSON codec of custom resources.
 */
export interface ObjectCodec {
  /** The wire format of the bytes, for metrics and errors. */
  readonly format: 'protobuf' | 'json'
  /** The scanned metadata of `bytes` (never the whole object). @throws EdgeopError `EDGEOP_ERR_DECODE` */
  scan(bytes: Uint8Array): ScannedMeta
  /** The whole object, JSON-shaped exactly as the API server's JSON for it. @throws EdgeopError `EDGEOP_ERR_DECODE` */
  decode(bytes: Uint8Array): KubeObject
  /** `bytes` without `metadata.managedFields`, cut without building the object (the same bytes if there are none). */
  stripManagedFields(bytes: Uint8Array): Uint8Array
}

/** Where a {@link EncodedObject} keeps its bytes and codec: a symbol, so no enumeration or serialization sees them. */
export const ENCODED: unique symbol = Symbol('edgeop.encoded')

/** An object's bytes and the codec that decodes them. */
export interface EncodedBytes {
  /** The bytes (a fresh buffer on each read: they are kept as a string, see {@link StoredBytes}). */
  readonly bytes: Uint8Array
  /** How many bytes there are. */
  readonly length: number
  readonly codec: ObjectCodec
}

/**
 * Bytes kept as a one-byte (latin1) string on the V8 heap rather than in a buffer of their own. A buffer's
 * memory comes from malloc; thousands of small long-lived buffers among the large short-lived ones a sync
 * streams through (TLS records, HTTP/2 frames, chunks) fragment malloc's heap so that it can return almost
 * nothing to the system afterwards: with buffers the bench measured nearly twice the RSS
 * (docs/benchmarks.md#measurements-behind-the-source). Strings live in V8's compacting heap and cost one
 * byte per byte.
 */
class StoredBytes implements EncodedBytes {
  readonly #text: string
  readonly codec: ObjectCodec

  constructor(bytes: Uint8Array, codec: ObjectCodec) {
    this.#text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1')
    this.codec = codec
  }

  get bytes(): Uint8Array {
    return Buffer.from(this.#text, 'latin1')
  }

  get length(): number {
    return this.#text.length
  }
}

/** A stub object: `apiVersion`/`kind` when known, the scanned `metadata`, and the bytes under {@link ENCODED}. */
export interface EncodedObject extends KubeObject {
  readonly [ENCODED]: EncodedBytes
}

/**
 * Builds the stub of `bytes`: scans them once, or takes `meta` when the caller has just scanned them
 * (a decoder that found the object's span in a list or an event line reads its metadata on the way).
 */
export function encodedObject(
  bytes: Uint8Array,
  codec: ObjectCodec,
  type?: { apiVersion?: string; kind?: string },
  meta?: ScannedMeta,
): EncodedObject {
  const stub: KubeObject = { metadata: meta ?? codec.scan(bytes) }
  if (type?.apiVersion) stub.apiVersion = type.apiVersion
  if (type?.kind) stub.kind = type.kind
  Object.defineProperty(stub, ENCODED, { value: new StoredBytes(bytes, codec), enumerable: false })
  return stub as EncodedObject
}

/** Whether `obj` is a stub carrying its wire bytes. */
export function isEncodedObject(obj: unknown): obj is EncodedObject {
  return typeof obj === 'object' && obj !== null && ENCODED in obj
}

/**
 * The whole object behind `obj`: decoded from its bytes (with `apiVersion`/`kind` of the stub) when it is a
 * {@link EncodedObject}, `obj` itself otherwise. Not cached here: the compact store keeps the bounded cache.
 */
export function materialize<T extends KubeObject>(obj: T): T {
  if (!isEncodedObject(obj)) return obj
  const { bytes, codec } = obj[ENCODED]
  const full = codec.decode(bytes)
  if (obj.apiVersion !== undefined && full.apiVersion === undefined) full.apiVersion = obj.apiVersion
  if (obj.kind !== undefined && full.kind === undefined) full.kind = obj.kind
  return full as T
}
