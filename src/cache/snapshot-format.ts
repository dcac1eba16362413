/**
 * @module snapshot-format — a cache snapshot as bytes: header, objects, sha256 trailer; pure.
 *
 * Layout, one JSON value per line (UTF-8):
 *
 * ```
 * {"format":1,"resource":"apps/v1/deployments","namespace":"",…,"resourceVersion":"123","count":2}
 * {"apiVersion":"apps/v1","kind":"Deployment",…}
 * {"apiVersion":"apps/v1","kind":"Deployment",…}
 * sha256:<64 hex digits over every byte above>
 * ```
 *
 * The trailer comes last so that any truncation loses it or breaks it; the checksum
 * catches every other change. {@link decodeSnapshot} never throws: what it cannot use it
 * names in one short reason, and the caller starts cold. A compact store's objects that are JSON
 * bytes are written as they are; `keepBytes` restores each object as a stub of its line's bytes.
 */
import { createHash } from 'node:crypto'
import { jsonCodec } from '../codec/json-codec.ts'
import { ENCODED, encodedObject, isEncodedObject, materialize } from '../core/encoded-object.ts'
import { errorMessage } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'

/** Version of the layout above; a snapshot of another version is ignored. */
export const SNAPSHOT_FORMAT = 1

/** What a snapshot belongs to: a snapshot of anything else is foreign and ignored. */
export interface SnapshotIdentity {
  /** `group/version/resource` (group empty for the core group). */
  resource: string
  /** The watched namespace; `''` for all namespaces or cluster-scoped. */
  namespace: string
  /** Label selector; `''` for none. */
  labelSelector: string
  /** Field selector; `''` for none. */
  fieldSelector: string
  /** Only PartialObjectMetadata was watched. */
  metadataOnly: boolean
  /** The writer's own tag (the binary's version): another binary's transforms may shape objects differently. */
  tag: string
}

/** A decoded snapshot: the objects and the resourceVersion they are consistent at. */
export interface SnapshotContents<T extends KubeObject = KubeObject> {
  /** The resourceVersion the objects are consistent at: the watch resumes from it. */
  resourceVersion: string
  /** The cached objects as they were stored (already transformed). */
  objects: T[]
}

const TRAILER = /^sha256:([0-9a-f]{64})$/

/** Hex sha256 of `b`. */
export const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

/** The bytes of a snapshot of `objects`, consistent at `resourceVersion`, for `identity`. */
export function encodeSnapshot(
  identity: SnapshotIdentity,
  resourceVersion: string,
  objects: readonly KubeObject[],
): Buffer {
  const header = { format: SNAPSHOT_FORMAT, ...identity, resourceVersion, count: objects.length }
  if (!objects.some(isEncodedObject)) {
    const body = Buffer.from(`${[header, ...objects].map((o) => JSON.stringify(o)).join('\n')}\n`)
    return Buffer.concat([body, Buffer.from(`sha256:${sha256(body)}\n`)])
  }
  // A compact store's objects: JSON bytes go out as they are (one line each), anything else encoded.
  const parts: Uint8Array[] = [Buffer.from(`${JSON.stringify(header)}\n`)]
  for (const o of objects) {
    const w = isEncodedObject(o) ? o[ENCODED] : undefined
    parts.push(
      w && w.codec.format === 'json' && !w.bytes.includes(NEWLINE)
        ? w.bytes
        : Buffer.from(JSON.stringify(materialize(o))),
      LINE_END,
    )
  }
  const body = Buffer.concat(parts)
  return Buffer.concat([body, Buffer.from(`sha256:${sha256(body)}\n`)])
}

const NEWLINE = 0x0a
const LINE_END = Buffer.from('\n')

/**
 * Decodes `bytes` as a snapshot of `identity`. Returns the contents, or a short reason
 * that never quotes the file: `truncated`, `checksum mismatch`, `<field> differs` (another
 * format, resource, scope, selector or tag; `count` when objects are missing), `malformed`,
 * or `object <n>: <what>` when an object is not shaped as the cache needs (an object whose
 * `metadata` has a non-empty string `name`): a checksum proves the bytes are the ones written, not that the
 * writer wrote objects, so every object is checked before the store sees it.
 */
export function decodeSnapshot<T extends KubeObject = KubeObject>(
  bytes: Uint8Array,
  identity: SnapshotIdentity,
  o: { keepBytes?: boolean } = {},
): SnapshotContents<T> | { problem: string } {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const end = buf.length - 1
  const start = buf.lastIndexOf(10, end - 1) + 1
  const trailer = buf[end] === 10 && TRAILER.exec(buf.toString('latin1', start, end))
  if (!trailer || start === 0) return { problem: 'truncated' }
  if (sha256(buf.subarray(0, start)) !== trailer[1]) return { problem: 'checksum mismatch' }
  try {
    const [h, ...objects] = o.keepBytes
      ? stubLines(buf.subarray(0, start - 1))
      : buf
          .toString('utf8', 0, start - 1)
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>)
    const want: Record<string, unknown> = { format: SNAPSHOT_FORMAT, ...identity, count: objects.length }
    for (const k in want) if (h![k] !== want[k]) return { problem: `${k} differs` }
    const resourceVersion = h!.resourceVersion
    if (typeof resourceVersion !== 'string' || !resourceVersion) return { problem: 'malformed' }
    for (let i = 0; i < objects.length; i++) {
      const problem = objectProblem(objects[i])
      if (problem) return { problem: `object ${i + 1}: ${problem}` }
    }
    return { resourceVersion, objects: objects as unknown as T[] }
  } catch (err) {
    if (err instanceof LineProblem) return { problem: err.message }
  }
  return { problem: 'malformed' }
}

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x)

/**
 * What makes `o` unusable as a cached object, or undefined: the store keys, indexes and
 * hands out objects by `metadata.name`, `metadata.namespace`, `metadata.resourceVersion`
 * and `metadata.labels`, so it must be an object whose `metadata` is an object with a
 * non-empty string name, string namespace and resourceVersion when present, and labels
 * (when present) an object of strings. Never quotes the value.
 */
function objectProblem(o: unknown): string | undefined {
  if (!isRecord(o))
    return `is ${o === null ? 'null' : Array.isArray(o) ? 'an array' : `a ${typeof o}`}, not an object`
  const m = o.metadata
  if (!isRecord(m)) return 'metadata is not an object'
  if (typeof m.name !== 'string' || m.name === '') return 'metadata.name is not a non-empty string'
  for (const k of ['namespace', 'resourceVersion', 'uid'] as const)
    if (m[k] !== undefined && typeof m[k] !== 'string') return `metadata.${k} is not a string`
  for (const k of ['labels', 'annotations'] as const) {
    const map = m[k]
    if (map !== undefined && (!isRecord(map) || !Object.values(map).every((v) => typeof v === 'string')))
      return `metadata.${k} is not an object of strings`
  }
  return undefined
}

/** An object line a stub cannot be made of (with `keepBytes`): the problem names the line. */
class LineProblem extends Error {}

/** The header line parsed and each object line as a stub of a copy of its bytes (with `keepBytes`). */
function stubLines(b: Buffer): Record<string, unknown>[] {
  let nl = b.indexOf(NEWLINE)
  if (nl < 0) nl = b.length
  const out: Record<string, unknown>[] = [JSON.parse(b.toString('utf8', 0, nl)) as Record<string, unknown>]
  for (let i = nl + 1; i <= b.length && nl < b.length; i = nl + 1) {
    nl = b.indexOf(NEWLINE, i)
    if (nl < 0) nl = b.length
    try {
      out.push(
        encodedObject(new Uint8Array(b.subarray(i, nl)), jsonCodec) as unknown as Record<string, unknown>,
      )
    } catch (err) {
      throw new LineProblem(`object ${out.length}: ${errorMessage(err)}`)
    }
  }
  return out
}
