/**
 * @module body-codec — request bodies out, response bodies in: JSON encoding, text and JSON decoding, streamed chunks.
 */
import { Buffer } from 'node:buffer'
import type { ExchangeBody } from './exchange.ts'
import { decodeError, type FailureContext, transportError } from './request-errors.ts'
import type { RequestSpec } from './request-spec.ts'

/** A response body as either HTTP path hands it over. */
export type ResponseBody = ExchangeBody

/** The wire form of a request body: a string as it is, anything else as JSON; undefined for none. */
export function encodeBody(body: unknown): string | undefined {
  if (body === undefined) return undefined
  return typeof body === 'string' ? body : JSON.stringify(body)
}

/** The whole body as text. A failure while reading is a transport error (phase `body`) of `ctx`. */
export async function readText(body: ResponseBody, ctx: FailureContext): Promise<string> {
  try {
    return await body.text()
  } catch (cause) {
    throw transportError(cause, { ...ctx, phase: 'body' })
  }
}

/** The whole body as bytes. A failure while reading is a transport error (phase `body`) of `ctx`. */
export async function readBytes(body: ResponseBody, ctx: FailureContext): Promise<Buffer> {
  const chunks: Buffer[] = []
  try {
    for await (const chunk of body) chunks.push(chunk as Buffer)
  } catch (cause) {
    throw transportError(cause, { ...ctx, phase: 'body' })
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks as Uint8Array[])
}

/** Decodes a JSON response body; an empty body is `undefined`. @throws EdgeopError `EDGEOP_ERR_DECODE`. */
export function decodeJson(text: string, spec: RequestSpec): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch (cause) {
    throw decodeError(text, spec, cause)
  }
}

/** The chunks of a streamed body; a failure mid-stream is a transport error (phase `body`) of `ctx`. Destroys the body when done. */
export async function* streamChunks(body: ResponseBody, ctx: FailureContext): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk as Uint8Array
  } catch (cause) {
    throw transportError(cause, { ...ctx, phase: 'body' })
  } finally {
    body.destroy()
  }
}
