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
import { displayPath, type RequestSpec } from './request-spec.ts'

/** The error for a response with status ≥ 400 whose body text is `text` (JSON or not). */
export function responseError(
  status: number,
  text: string,
  spec: RequestSpec,
  retryAfterHeader: string | string[] | undefined,
): ApiError {
  return apiErrorFromResponse(status, tryJson(text), spec.method, displayPath(spec.path), retryAfterHeader)
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * The error for a request that got no (complete) response. `callerSignal` aborted → aborted;
 * `deadline` aborted or an undici timeout → timeout; anything else → a network error.
 */
export function transportError(
  cause: unknown,
  spec: RequestSpec,
  callerSignal: AbortSignal | undefined,
  deadline: AbortSignal | undefined,
  timeoutMs: number,
): ApiError {
  const base = { status: 0, method: spec.method, path: displayPath(spec.path), cause }
  if (callerSignal?.aborted)
    return new ApiError({
      ...base,
      code: 'EDGEOP_ERR_ABORTED',
      reason: 'Aborted',
      message: 'the request was aborted',
    })
  const code = errorCodeOf(cause)
  if (
    deadline?.aborted ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return new ApiError({
      ...base,
      code: 'EDGEOP_ERR_TIMEOUT',
      reason: 'Timeout',
      message: `no answer within ${timeoutMs} ms`,
    })
  }
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
    ...(err.details === undefined ? {} : { details: err.details }),
    ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
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
