/**
 * @module watch-frames — a protobuf watch stream (`application/vnd.kubernetes.protobuf;stream=watch`) to watch events.
 *
 * Each event is a frame: a 4-byte big-endian length, then a `metav1.WatchEvent` message without the envelope
 * (`type` in field 1, the object as a `runtime.RawExtension` in field 2, whose `raw` (field 1) is the enveloped
 * object: `k8s\0` + `runtime.Unknown`). Chunks arrive at any byte boundary; the decoder keeps only the current
 * incomplete frame, so memory is bounded by the largest event, and refuses a frame longer than the cap.
 */
import { EdgeopError } from '../../core/errors.ts'
import type { KubeObject, WatchEvent, WatchEventType } from '../../core/types.ts'
import type { KindSchema, ProtobufObjectOptions, ProtobufWatchOptions } from './kind-schema.ts'
import { decodeProtobufObject } from './objects.ts'
import { Reader } from './reader.ts'

const TYPES = new Set<string>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'])

/**
 * Default cap on one frame: 16 MiB, as for a JSON watch line (etcd's request limit is 1.5 MiB per object,
 * the API server's 3 MiB; a 16 MiB frame means a broken stream).
 */
export const DEFAULT_MAX_WATCH_FRAME_BYTES = 16 * 1024 * 1024

function streamError(source: string, why: string, cause?: unknown): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_DECODE', `${source}: ${why}`, {
    step: 'decode watch stream',
    cause,
  })
}

/**
 * Decodes a protobuf watch stream of `kind` objects. ERROR events carry the decoded `Status`.
 * @throws EdgeopError `EDGEOP_ERR_DECODE` on a malformed or oversized frame, or a stream cut inside a frame.
 */
export async function* decodeProtobufWatchStream<T extends KubeObject = KubeObject>(
  chunks: AsyncIterable<Uint8Array>,
  kind: KindSchema,
  options: ProtobufWatchOptions = {},
): AsyncGenerator<WatchEvent<T>> {
  const max = options.maxFrameBytes ?? DEFAULT_MAX_WATCH_FRAME_BYTES
  const source = options.source ?? 'watch stream'
  const lengthOf = (b: Buffer, at: number): number => {
    const len = b.readUInt32BE(at)
    if (len > max) throw streamError(source, `a watch frame is longer than ${max} bytes; refusing it`)
    return len
  }
  // Frames inside a chunk are decoded where they are; only a frame split across chunks is copied, once,
  // into a buffer of its exact size (no concatenation of whole chunks: less short-lived memory per sync).
  let frame: Buffer | undefined
  let filled = 0
  let head: number[] = []
  let frameNo = 0
  for await (const chunk of chunks) {
    const c = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    let at = 0
    while (at < c.length && (frame !== undefined || head.length > 0)) {
      if (frame === undefined) {
        head.push(c[at++] as number)
        if (head.length < 4) continue
        const h = Buffer.from(head)
        frame = Buffer.allocUnsafe(4 + lengthOf(h, 0))
        h.copy(frame, 0)
        filled = 4
        head = []
      } else {
        const n = Math.min(frame.length - filled, c.length - at)
        c.copy(frame, filled, at, at + n)
        filled += n
        at += n
      }
      if (filled === frame.length) {
        frameNo++
        const done = frame
        frame = undefined
        yield frameEvent<T>(done, 4, done.length, kind, options, source, frameNo)
      }
    }
    for (;;) {
      if (c.length - at < 4) break
      const len = lengthOf(c, at)
      if (c.length - at - 4 < len) break
      frameNo++
      // Decoded before the yield (objects or stubs with their own bytes): the producer may reuse `c` afterwards.
      yield frameEvent<T>(c, at + 4, at + 4 + len, kind, options, source, frameNo)
      at += 4 + len
    }
    if (at < c.length) {
      if (c.length - at >= 4) {
        frame = Buffer.allocUnsafe(4 + lengthOf(c, at))
        filled = c.copy(frame, 0, at)
      } else head = [...c.subarray(at)]
    }
  }
  if (frame !== undefined || head.length > 0) {
    throw streamError(source, `the stream ended inside a frame (${frame ? filled : head.length} bytes)`)
  }
}

function frameEvent<T extends KubeObject>(
  buf: Buffer,
  start: number,
  end: number,
  kind: KindSchema,
  options: ProtobufObjectOptions,
  source: string,
  frameNo: number,
): WatchEvent<T> {
  try {
    const r = new Reader(buf, start, `watch event ${frameNo}`)
    let type = ''
    let objStart = -1
    let objEnd = -1
    while (r.pos < end) {
      const tag = r.uvarint(end)
      if (tag === 0x0a) type = r.string(end)
      else if (tag === 0x12) {
        const stop = r.lengthEnd(end)
        while (r.pos < stop) {
          const t = r.uvarint(stop)
          if (t === 0x0a) {
            objEnd = r.lengthEnd(stop)
            objStart = r.pos
            r.pos = objEnd
          } else r.skip(t & 7, stop)
        }
      } else r.skip(tag & 7, end)
    }
    if (!TYPES.has(type) || objStart < 0) {
      throw streamError(
        source,
        `event ${frameNo} is not a watch event (want type ADDED|MODIFIED|DELETED|BOOKMARK|ERROR and an object, got ${TYPES.has(type) ? 'no object' : `type of ${type.length} characters`})`,
      )
    }
    const object = decodeProtobufObject(kind, buf, type === 'ERROR' ? {} : options, objStart, objEnd)
    return { type: type as WatchEventType, object: object as T }
  } catch (cause) {
    if (cause instanceof EdgeopError && cause.message.startsWith(source)) throw cause
    throw streamError(source, `event ${frameNo} is not a valid protobuf watch event`, cause)
  }
}
