/**
 * @module request-errors — maps what went wrong with a request to the error the caller sees.
 *
 * HTTP status and body → {@link ApiError} (`EDGEOP_ERR_API`); no response → `EDGEOP_ERR_NETWORK`,
 * `EDGEOP_ERR_TIMEOUT` or `EDGEOP_ERR_ABORTED` (status 0); a body that is not JSON →
 * `EDGEOP_ERR_DECODE`. Messages name the method and path (without the query), never a
 * credential, and never quote more than 200 characters of a response body.
 */
import { EdgeopError } from '../core/errors.ts'
import { ApiError, apiErrorFromResponse } from './api-error.ts'
import { connectTimeoutStep } from './connect-timeout.ts'
import { proxyFailureOf } from './proxy-failure.ts'
import { displayPath, type RequestSpec } from './request-spec.ts'

/** The error for a response with status ≥ 400 whose body text is `text` (JSON or not). */
export function responseError(
  status: number,
  body: string | object,
  spec: RequestSpec,
  retryAfterHeader: string | string[] | undefined,
): ApiError {
  const decoded = typeof body === 'string' ? tryJson(body) : body
  return apiErrorFromResponse(status, decoded, spec.method, displayPath(spec.path), retryAfterHeader)
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * What the transport knows when an attempt ends without a complete response: the request,
 * its limits, and whether the response headers had arrived. Every limit is in ms; 0 = none.
 */
export interface FailureContext {
  spec: RequestSpec
  /** The request's own deadline (`timeoutMs`), when it has one. */
  deadline?: AbortSignal | undefined
  deadlineMs: number
  /** undici `headersTimeout`: the longest wait for the response headers. */
  headersTimeoutMs: number
  /** undici `bodyTimeout`: the longest gap between two chunks of the body. */
  bodyTimeoutMs: number
  /** `'headers'` until the response headers arrive, then `'body'`. */
  phase: 'headers' | 'body'
}

/**
 * Stable `reason` of each timeout (`code` is `EDGEOP_ERR_TIMEOUT`, `retryable` true): the step
 * that ran out of time. undici's connect timeout covers TCP connect and TLS handshake with
 * one timer; which of the two it interrupted is told apart by whether TCP had connected.
 */
export const TIMEOUT_REASONS = {
  connect: 'ConnectTimeout',
  'tls-handshake': 'TLSHandshakeTimeout',
  headers: 'HeadersTimeout',
  body: 'BodyTimeout',
  deadline: 'RequestDeadline',
} as const

/**
 * The error for an attempt that got no (complete) response: the caller's signal aborted →
 * `EDGEOP_ERR_ABORTED`; a timeout → `EDGEOP_ERR_TIMEOUT` whose reason ({@link TIMEOUT_REASONS})
 * and message name the step and its actual limit; anything else → `EDGEOP_ERR_NETWORK`.
 */
export function transportError(cause: unknown, ctx: FailureContext): ApiError {
  const base = { status: 0, method: ctx.spec.method, path: displayPath(ctx.spec.path), cause }
  if (ctx.spec.signal?.aborted)
    return new ApiError({
      ...base,
      code: 'EDGEOP_ERR_ABORTED',
      reason: 'Aborted',
      message: 'the request was aborted',
    })
  const timeout = (step: keyof typeof TIMEOUT_REASONS, message: string): ApiError =>
    new ApiError({ ...base, code: 'EDGEOP_ERR_TIMEOUT', reason: TIMEOUT_REASONS[step], message })
  if (ctx.deadline?.aborted) {
    const when =
      ctx.phase === 'body' ? 'while the response body was read' : 'before the response headers came'
    return timeout('deadline', `the request deadline of ${ctx.deadlineMs} ms (timeoutMs) passed ${when}`)
  }
  const code = errorCodeOf(cause)
  const connect = connectTimeoutStep(cause)
  if (connect?.step === 'tls-handshake')
    return timeout('tls-handshake', `TLS handshake not done within ${connect.timeoutMs} ms (connect timeout)`)
  if (connect || code === 'UND_ERR_CONNECT_TIMEOUT') {
    const limit = connect ? `${connect.timeoutMs} ms` : 'the connect timeout'
    return timeout('connect', `TCP connect not done within ${limit} (connect timeout)`)
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT')
    return timeout('headers', `no response headers within ${ctx.headersTimeoutMs} ms (headers timeout)`)
  if (code === 'UND_ERR_BODY_TIMEOUT')
    return timeout('body', `the response body stalled: no data for ${ctx.bodyTimeoutMs} ms (body timeout)`)
  const proxy = proxyFailureOf(cause)
  if (proxy)
    return new ApiError({
      ...base,
      code: 'EDGEOP_ERR_NETWORK',
      reason: 'NetworkError',
      message: `connection through proxy ${proxy.proxy} failed (${proxy.detail})`,
    })
  const detail = code ?? (cause as Error)?.message ?? 'unknown error'
  return new ApiError({
    ...base,
    code: 'EDGEOP_ERR_NETWORK',
    reason: 'NetworkError',
    message: `connection failed (${detail})`,
  })
}

/** The string `code` of a thrown value (undici, Node and HTTP/2 errors carry one), if any. */
export function errorCodeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'string' ? code : undefined
}

/** The error for an abort that came while waiting before a retry. */
export function abortedWhileWaiting(spec: RequestSpec, cause: unknown): ApiError {
  return new ApiError({
    code: 'EDGEOP_ERR_ABORTED',
    status: 0,
    reason: 'Aborted',
    message: 'aborted while waiting to retry',
    method: spec.method,
    path: displayPath(spec.path),
    cause,
  })
}

/** `err`, noting the different error of the attempt before it (client-go does the same). */
export function withPrevious(err: ApiError, previous: ApiError | undefined): ApiError {
  if (!previous || previous.message === err.message) return err
  return new ApiError({
    code: err.code,
    status: err.status,
    reason: err.reason,
    message: `${err.serverMessage} - error from a previous attempt: ${previous.serverMessage || previous.reason}`,
    method: err.method,
    path: err.path,
    details: err.details,
    retryAfter: err.retryAfter,
    cause: err.cause,
  })
}

/** The error for a successful response whose body is not JSON: names its shape and length, never its text. */
export function decodeError(text: string, spec: RequestSpec, cause: unknown): EdgeopError {
  const shape = text.trimStart().startsWith('<') ? 'markup' : 'text'
  const what = `${spec.method} ${displayPath(spec.path)}`
  return new EdgeopError(
    'EDGEOP_ERR_DECODE',
    `${what}: the response is not JSON (${shape} of ${text.length} characters)`,
    { step: `decode ${what}`, cause },
  )
}
