/**
 * @module wire — the two wire formats of the Kubernetes API as the benchmark handles them: raw HTTPS
 * requests to the apiserver in either format, watch streams cut into events (JSON: one object per
 * line; protobuf: frames with a 4-byte big-endian length), and the few protobuf fields the benchmark
 * reads (an event's type, a list's items, a Pod's managedFields) with a minimal walker. Written for
 * the benchmark only: edgeop's own decoder lives in src/.
 */

import type { IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'

export type Wire = 'json' | 'protobuf'

/** What the benchmark sends as `Accept` for each format (lists; watches add `;stream=watch`). */
export const ACCEPT: Record<Wire, string> = {
  json: 'application/json',
  protobuf: 'application/vnd.kubernetes.protobuf',
}

/** The label a row shows for a format. */
export const WIRE_LABEL: Record<Wire, string> = { json: 'JSON', protobuf: 'protobuf' }

/** The annotation of the bookmark that ends a streaming list's initial events. */
export const INITIAL_EVENTS_END = 'k8s.io/initial-events-end'

/** How the driver reaches the apiserver: its URL and the admin's TLS material. */
export interface ApiTarget {
  server: string
  tls: { ca: string; cert: string; key: string }
}

/** A GET to the apiserver; resolves with the response (body unread). */
export function apiGet(
  target: ApiTarget,
  path: string,
  accept: string,
  signal?: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${target.server}${path}`,
      { ...target.tls, headers: { accept }, agent: false, ...(signal ? { signal } : {}) },
      (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          res.resume()
          reject(new Error(`GET ${path} (${accept}): HTTP ${res.statusCode}`))
        } else resolve(res)
      },
    )
    req.on('error', reject)
    req.end()
  })
}

/** A whole GET body. */
export async function apiGetBody(target: ApiTarget, path: string, accept: string): Promise<Buffer> {
  const res = await apiGet(target, path, accept)
  const chunks: Buffer[] = []
  for await (const c of res) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}

// ---------------------------------------------------------------- protobuf, just enough

/** The 4 bytes (`k8s\0`) before every protobuf-encoded object of the Kubernetes API. */
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00])

interface Field {
  no: number
  wireType: number
  /** Start of the field's tag. */
  start: number
  /** Length-delimited fields: the payload. */
  value?: Buffer
  end: number
}

function varint(buf: Buffer, at: number): [number, number] {
  let n = 0
  let mul = 1
  for (let i = at; i < buf.length; i++) {
    const b = buf[i] as number
    n += (b & 0x7f) * mul
    if (b < 0x80) return [n, i + 1]
    mul *= 128
  }
  throw new Error('protobuf: truncated varint')
}

/** The top-level fields of one message. */
export function fields(buf: Buffer): Field[] {
  const out: Field[] = []
  let at = 0
  while (at < buf.length) {
    const start = at
    const [tag, next] = varint(buf, at)
    at = next
    const no = Math.floor(tag / 8)
    const wireType = tag & 7
    if (wireType === 0) at = varint(buf, at)[1]
    else if (wireType === 1) at += 8
    else if (wireType === 5) at += 4
    else if (wireType === 2) {
      const [len, body] = varint(buf, at)
      if (body + len > buf.length) throw new Error('protobuf: truncated field')
      out.push({ no, wireType, start, value: buf.subarray(body, body + len), end: body + len })
      at = body + len
      continue
    } else throw new Error(`protobuf: wire type ${wireType} not expected here`)
    out.push({ no, wireType, start, end: at })
  }
  return out
}

const field = (buf: Buffer, no: number): Buffer | undefined => fields(buf).find((f) => f.no === no)?.value

/** The message inside the `k8s\0` + runtime.Unknown envelope (its `raw`, field 2). */
export function unwrap(buf: Buffer): Buffer {
  if (!buf.subarray(0, 4).equals(MAGIC)) return buf
  const raw = field(buf.subarray(4), 2)
  if (raw === undefined) throw new Error('protobuf: envelope without raw')
  return raw
}

/** A protobuf watch frame's event type (WatchEvent field 1). */
export function protobufEventType(frame: Buffer): string {
  return field(unwrap(frame), 1)?.toString('utf8') ?? ''
}

/** The items of a protobuf list (field 2 of every `*List`), each an object message without envelope. */
export function protobufListItems(body: Buffer): Buffer[] {
  return fields(unwrap(body))
    .filter((f) => f.no === 2 && f.value)
    .map((f) => f.value as Buffer)
}

/** Bytes of an object message's `metadata.managedFields` entries (ObjectMeta field 17), tags included. */
export function protobufManagedFieldsBytes(obj: Buffer): number {
  const meta = field(obj, 1)
  if (meta === undefined) return 0
  return fields(meta)
    .filter((f) => f.no === 17)
    .reduce((a, f) => a + (f.end - f.start), 0)
}

// ---------------------------------------------------------------- watch streams

/** One recorded event: its type and its bytes exactly as on the wire (the frame or the line). */
export interface WireEvent {
  type: string
  bytes: Buffer
  /** A bookmark ending the initial events of a streaming list. */
  initialEnd: boolean
}

/** Cuts a watch stream into events as bytes arrive; keeps the incomplete tail. */
export class EventSplitter {
  readonly #wire: Wire
  #tail: Buffer = Buffer.alloc(0)

  constructor(wire: Wire) {
    this.#wire = wire
  }

  push(chunk: Buffer): WireEvent[] {
    let buf = this.#tail.length ? Buffer.concat([this.#tail, chunk]) : chunk
    const out: WireEvent[] = []
    if (this.#wire === 'json') {
      for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
        const line = buf.subarray(0, nl + 1)
        buf = buf.subarray(nl + 1)
        if (line.length <= 1) continue
        const type = /^\{"type":"([A-Z]+)"/.exec(line.subarray(0, 32).toString('latin1'))?.[1] ?? ''
        out.push({ type, bytes: line, initialEnd: type === 'BOOKMARK' && line.includes(INITIAL_EVENTS_END) })
      }
    } else {
      while (buf.length >= 4) {
        const len = buf.readUInt32BE(0)
        if (buf.length < 4 + len) break
        const frame = buf.subarray(0, 4 + len)
        buf = buf.subarray(4 + len)
        const type = protobufEventType(frame.subarray(4))
        out.push({
          type,
          bytes: frame,
          initialEnd: type === 'BOOKMARK' && frame.includes(INITIAL_EVENTS_END),
        })
      }
    }
    this.#tail = Buffer.from(buf)
    return out
  }
}
