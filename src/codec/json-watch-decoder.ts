/**
 * @module json-watch-decoder — turns a streaming watch body into watch events.
 *
 * The API server writes one JSON object per line (`application/json;stream=watch`).
 * Chunks arrive at arbitrary byte boundaries, possibly inside a multi-byte UTF-8
 * character; the decoder buffers only the current incomplete line, so memory is
 * bounded by the largest event, and refuses a line longer than `maxLineBytes`.
 */
import { isUtf8 } from 'node:buffer'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import type { KubeObject, WatchEvent, WatchEventType } from '../core/types.ts'
import { decodeEventBytes } from './json-stubs.ts'

/**
 * Default cap on one watch event: 16 MiB. etcd's default request limit is 1.5 MiB
 * per object and the apiserver's is 3 MiB; a JSON line of 16 MiB means a broken stream.
 */
export const DEFAULT_MAX_WATCH_LINE_BYTES = 16 * 1024 * 1024

const TYPES = new Set<WatchEventType>(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'])
const NEWLINE = 0x0a

/** Options of {@link decodeWatchStream}. */
export interface DecodeOptions {
  maxLineBytes?: number
  /** Names the stream in errors, e.g. `GET /api/v1/pods?watch=1`. */
  source?: string
  /**
   * Yield ADDED, MODIFIED and DELETED objects as `EncodedObject` stubs of their JSON bytes (metadata
   * scanned, managedFields cut) instead of parsing them. Default false.
   */
  keepBytes?: boolean
}

/**
 * Decodes a watch stream. Yields one event per non-empty line; throws
 * `EDGEOP_ERR_DECODE` on a line that is not a watch event or is too long.
 * A final line without a newline is decoded too (a clean end of stream).
 */
export async function* decodeWatchStream<T extends KubeObject = KubeObject>(
  chunks: AsyncIterable<Uint8Array>,
  options: DecodeOptions = {},
): AsyncGenerator<WatchEvent<T>> {
  const max = options.maxLineBytes ?? DEFAULT_MAX_WATCH_LINE_BYTES
  const source = options.source ?? 'watch stream'
  const keepBytes = options.keepBytes ?? false
  const decoder = new TextDecoder('utf-8', { fatal: true })
  let pending: Uint8Array[] = []
  let pendingBytes = 0
  let lineNo = 0

  const finish = (tail: Uint8Array): WatchEvent<T> | undefined => {
    let bytes: Uint8Array
    if (pending.length === 0) bytes = tail
    else {
      bytes = new Uint8Array(pendingBytes + tail.length)
      let o = 0
      for (const p of pending) {
        bytes.set(p, o)
        o += p.length
      }
      bytes.set(tail, o)
      pending = []
      pendingBytes = 0
    }
    lineNo++
    return keepBytes ? lineBytes<T>(bytes, source, lineNo) : parseLine<T>(bytes, decoder, source, lineNo)
  }

  for await (const chunk of chunks) {
    let start = 0
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start)
      if (nl < 0) break
      if (pendingBytes + (nl - start) > max) throw tooLong(source, max)
      const event = finish(chunk.subarray(start, nl))
      if (event) yield event
      start = nl + 1
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start)
      pendingBytes += rest.length
      if (pendingBytes > max) throw tooLong(source, max)
      // Copy: the producer may reuse its buffer after we return control.
      pending.push(rest.slice())
    }
  }
  if (pendingBytes > 0) {
    const event = finish(new Uint8Array(0))
    if (event) yield event
  }
}

function tooLong(source: string, max: number): EdgeopError {
  return new EdgeopError(
    'EDGEOP_ERR_DECODE',
    `${source}: a watch event is longer than ${max} bytes; refusing it`,
    {
      step: 'decode watch stream',
    },
  )
}

/**
 * One event line in `keepBytes` mode; errors are the eager path's, with the scanner's offset. The whole
 * line is checked for UTF-8 first, as the eager path decodes it: the scanner skips what it does not keep
 * (managedFields, unknown members) without reading it.
 */
function lineBytes<T extends KubeObject>(
  bytes: Uint8Array,
  source: string,
  lineNo: number,
): WatchEvent<T> | undefined {
  if (!isUtf8(bytes)) throw notUtf8(source, lineNo)
  let ev: ReturnType<typeof decodeEventBytes<T>>
  try {
    ev = decodeEventBytes<T>(bytes)
  } catch (cause) {
    throw new EdgeopError(
      'EDGEOP_ERR_DECODE',
      `${source}: event ${lineNo} is not JSON (${errorMessage(cause)})`,
      {
        step: 'decode watch stream',
        cause,
      },
    )
  }
  if (ev === undefined || ev.type !== undefined) return ev
  throw new EdgeopError(
    'EDGEOP_ERR_DECODE',
    `${source}: event ${lineNo} is not a watch event (want {"type":ADDED|MODIFIED|DELETED|BOOKMARK|ERROR,"object":{…}}, got an object of ${bytes.length} bytes)`,
    { step: 'decode watch stream' },
  )
}

function parseLine<T extends KubeObject>(
  bytes: Uint8Array,
  decoder: InstanceType<typeof TextDecoder>,
  source: string,
  lineNo: number,
): WatchEvent<T> | undefined {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch (cause) {
    throw notUtf8(source, lineNo, cause)
  }
  if (text.trim() === '') return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (cause) {
    throw new EdgeopError('EDGEOP_ERR_DECODE', `${source}: event ${lineNo} is not JSON (${describe(text)})`, {
      step: 'decode watch stream',
      cause,
    })
  }
  const ev = value as { type?: unknown; object?: unknown }
  if (
    typeof value !== 'object' ||
    value === null ||
    !TYPES.has(ev.type as WatchEventType) ||
    typeof ev.object !== 'object' ||
    ev.object === null
  ) {
    throw new EdgeopError(
      'EDGEOP_ERR_DECODE',
      `${source}: event ${lineNo} is not a watch event (want {"type":ADDED|MODIFIED|DELETED|BOOKMARK|ERROR,"object":{…}}, got ${describe(text)})`,
      { step: 'decode watch stream' },
    )
  }
  return value as WatchEvent<T>
}

function notUtf8(source: string, lineNo: number, cause?: unknown): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_DECODE', `${source}: event ${lineNo} is not valid UTF-8`, {
    step: 'decode watch stream',
    cause,
  })
}

/** A short, shape-only description of a bad line: never its content (it may hold secrets). */
function describe(text: string): string {
  const t = text.trimStart()
  const kind = t.startsWith('{')
    ? 'an object'
    : t.startsWith('[')
      ? 'an array'
      : t.startsWith('<')
        ? 'markup'
        : 'text'
  return `${kind} of ${text.length} characters`
}
