/**
 * @module api-error — one error type for every failed API request, and its predicates.
 *
 * Mirrors `k8s.io/apimachinery/pkg/api/errors`: a response whose body is a
 * `metav1.Status` keeps the server's reason, details and causes; any other failed
 * response gets the reason client-go's generic mapping gives its status code.
 * Network failures, timeouts and aborts have the same shape with `status: 0`.
 *
 * Retryable (`err.retryable`): 429, 5xx except 501, "ServerTimeout", network errors
 * and timeouts. Not retryable: every other 4xx, aborts, decode errors.
 */
import { EdgeopError, type ErrorCode } from '../core/errors.ts'
import type { Status, StatusCause, StatusDetails } from '../core/types.ts'

/** The 20 reasons of `metav1.StatusReason` that predicates treat as authoritative. */
const KNOWN_REASONS = new Set([
  'Unauthorized',
  'Forbidden',
  'NotFound',
  'AlreadyExists',
  'Conflict',
  'Gone',
  'Invalid',
  'ServerTimeout',
  'StoreReadError',
  'Timeout',
  'TooManyRequests',
  'BadRequest',
  'MethodNotAllowed',
  'NotAcceptable',
  'RequestEntityTooLarge',
  'UnsupportedMediaType',
  'InternalError',
  'Expired',
  'ServiceUnavailable',
  'Unknown',
])

/** Reason client-go's `NewGenericServerResponse` assigns to a non-Status error body. */
function genericReason(status: number, method: string): string {
  switch (status) {
    case 400:
      return 'BadRequest'
    case 401:
      return 'Unauthorized'
    case 403:
      return 'Forbidden'
    case 404:
      return 'NotFound'
    case 405:
      return 'MethodNotAllowed'
    case 406:
      return 'NotAcceptable'
    case 409:
      return method === 'POST' ? 'AlreadyExists' : 'Conflict'
    case 415:
      return 'UnsupportedMediaType'
    case 422:
      return 'Invalid'
    case 429:
      return 'TooManyRequests'
    case 503:
      return 'ServiceUnavailable'
    case 504:
      return 'Timeout'
    default:
      return status >= 500 ? 'InternalError' : ''
  }
}

/** Fields of an {@link ApiError}. */
export interface ApiErrorInit {
  /** Default `EDGEOP_ERR_API` (retryable by status); `EDGEOP_ERR_NETWORK` and `EDGEOP_ERR_TIMEOUT` are always retryable, any other code never. */
  code?: ErrorCode
  /** HTTP status; 0 when no response was received. */
  status: number
  /** `metav1.StatusReason` (e.g. `NotFound`); `''` when unknown. */
  reason: string
  /** The server's message without prefix (becomes {@link ApiError.serverMessage}); `''` for none. */
  message: string
  /** HTTP method of the request, for the message. */
  method: string
  /** Request path, for the message; must not contain a credential. */
  path: string
  /** `metav1.StatusDetails`; its `causes` become {@link ApiError.causes}. */
  details?: StatusDetails
  /** `Retry-After` in seconds (header, else `details.retryAfterSeconds`). */
  retryAfter?: number
  /** The underlying error (e.g. undici's), kept as `cause`; never shown in the message. */
  cause?: unknown
}

/**
 * A failed Kubernetes API request.
 *
 * `message` reads `<METHOD> <path>: <status> <reason>: <server message>`. The path
 * never contains credentials (they travel in headers), so it is safe to log.
 */
export class ApiError extends EdgeopError {
  /** HTTP status (the Status body's `code` when set); 0 when no response came (network error, timeout, abort). */
  readonly status: number
  /**
   * `metav1.StatusReason` from the Status body, else the reason client-go's `NewGenericServerResponse`
   * gives the status code (`''` if none); with no response, `NetworkError`, `Aborted` or a `TIMEOUT_REASONS` value.
   */
  readonly reason: string
  /** The Status body's `details`; for a body that is not a `Failure` Status, one cause `UnexpectedServerResponse` quoting at most 200 characters. */
  readonly details: StatusDetails | undefined
  /** `details.causes`, else `[]`: e.g. one per invalid field (422) or per `FieldManagerConflict` (apply 409). */
  readonly causes: StatusCause[]
  /** HTTP method of the failed request. */
  readonly method: string
  /** Request path without its query; never contains a credential, so safe to log. */
  readonly path: string
  /** Seconds the server asked to wait: the integer `Retry-After` header, else `details.retryAfterSeconds`; undefined when neither. */
  readonly retryAfter: number | undefined
  /** The server's own message (from the Status body), without the prefix. */
  readonly serverMessage: string

  /** Composes the message; `retryable` is derived from `code`, `status` and `reason` (see the module rules). */
  constructor(init: ApiErrorInit) {
    const prefix = `${init.method} ${init.path}`
    const what = init.status > 0 ? `${init.status}${init.reason ? ` ${init.reason}` : ''}` : init.reason
    super(init.code ?? 'EDGEOP_ERR_API', `${prefix}: ${what}${init.message ? `: ${init.message}` : ''}`, {
      step: prefix,
      retryable: isRetryableStatus(init.status, init.reason, init.code),
      cause: init.cause,
    })
    this.name = 'ApiError'
    this.status = init.status
    this.reason = init.reason
    this.details = init.details
    this.causes = init.details?.causes ?? []
    this.method = init.method
    this.path = init.path
    this.retryAfter = init.retryAfter
    this.serverMessage = init.message
  }
}

function isRetryableStatus(status: number, reason: string, code: ErrorCode | undefined): boolean {
  if (code === 'EDGEOP_ERR_NETWORK' || code === 'EDGEOP_ERR_TIMEOUT') return true
  if (code !== undefined && code !== 'EDGEOP_ERR_API') return false
  return status === 429 || reason === 'ServerTimeout' || (status >= 500 && status !== 501)
}

/** True if `body` looks like a `metav1.Status`. */
export function isStatus(body: unknown): body is Status {
  return typeof body === 'object' && body !== null && (body as { kind?: unknown }).kind === 'Status'
}

/**
 * Builds the error for a failed response. `body` is the decoded JSON body if it was
 * JSON, else the raw text (truncated into the message).
 */
export function apiErrorFromResponse(
  status: number,
  body: unknown,
  method: string,
  path: string,
  retryAfterHeader?: string | string[],
): ApiError {
  const header = parseRetryAfter(retryAfterHeader)
  if (isStatus(body) && body.status === 'Failure') {
    return new ApiError({
      status: body.code || status,
      reason: body.reason ?? genericReason(status, method),
      message: body.message ?? '',
      method,
      path,
      details: body.details,
      ...retryAfterField(header ?? body.details?.retryAfterSeconds),
    })
  }
  const text = typeof body === 'string' ? body.trim().slice(0, 200) : ''
  return new ApiError({
    status,
    reason: genericReason(status, method),
    message: text || 'the server returned an unexpected response',
    method,
    path,
    details: { causes: [{ reason: 'UnexpectedServerResponse', message: text }] },
    ...retryAfterField(header),
  })
}

/** Builds the error carried by a watch `ERROR` event. */
export function apiErrorFromStatus(status: Status, method: string, path: string): ApiError {
  return new ApiError({
    status: status.code ?? 500,
    reason: status.reason ?? '',
    message: status.message ?? '',
    method,
    path,
    details: status.details,
    ...retryAfterField(status.details?.retryAfterSeconds),
  })
}

function retryAfterField(seconds: number | undefined): { retryAfter?: number } {
  return seconds === undefined ? {} : { retryAfter: seconds }
}

/**
 * Parses `Retry-After` as client-go does: an integer number of seconds only
 * (HTTP-date values are ignored). Returns undefined when absent or not an integer.
 */
export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value
  if (v === undefined || !/^\s*\d+\s*$/.test(v)) return undefined
  return Number.parseInt(v, 10)
}

interface ErrorLike {
  code?: unknown
  status?: unknown
  reason?: unknown
  details?: StatusDetails
}

function fields(err: unknown): { status: number; reason: string; details?: StatusDetails } | undefined {
  if (typeof err !== 'object' || err === null) return undefined
  const e = err as ErrorLike
  if (e.code !== 'EDGEOP_ERR_API' || typeof e.status !== 'number') return undefined
  return { status: e.status, reason: typeof e.reason === 'string' ? e.reason : '', details: e.details }
}

/** Reason matches, or the reason is unknown and the status matches (client-go `reasonAndCodeForError`). */
function reasonOrCode(err: unknown, reason: string, status: number): boolean {
  const f = fields(err)
  if (!f) return false
  if (f.reason === reason) return true
  return !KNOWN_REASONS.has(f.reason) && f.status === status
}

function reasonOnly(err: unknown, reason: string): boolean {
  return fields(err)?.reason === reason
}

/** 404 NotFound. */
export const isNotFound = (err: unknown): boolean => reasonOrCode(err, 'NotFound', 404)
/** 409 AlreadyExists (a create of an existing name). Reason only, as client-go. */
export const isAlreadyExists = (err: unknown): boolean => reasonOnly(err, 'AlreadyExists')
/** 409 Conflict (optimistic concurrency or an SSA field-manager conflict). */
export const isConflict = (err: unknown): boolean => reasonOrCode(err, 'Conflict', 409)
/** 422 Invalid; field errors are in `causes`. */
export const isInvalid = (err: unknown): boolean => reasonOrCode(err, 'Invalid', 422)
/** 410 Gone. */
export const isGone = (err: unknown): boolean => reasonOrCode(err, 'Gone', 410)
/** 410 Expired: a resourceVersion or continue token too old. Reason only, as client-go. */
export const isResourceExpired = (err: unknown): boolean => reasonOnly(err, 'Expired')
/** Gone or Expired: the caller must relist. */
export const isGoneOrExpired = (err: unknown): boolean => isGone(err) || isResourceExpired(err)
/** 429 TooManyRequests: by reason or by status regardless of reason (client-go compatibility). */
export const isTooManyRequests = (err: unknown): boolean =>
  reasonOnly(err, 'TooManyRequests') || fields(err)?.status === 429
/** 403 Forbidden. */
export const isForbidden = (err: unknown): boolean => reasonOrCode(err, 'Forbidden', 403)
/** 401 Unauthorized. */
export const isUnauthorized = (err: unknown): boolean => reasonOrCode(err, 'Unauthorized', 401)
/** 504 Timeout (includes "Too large resource version"). */
export const isTimeout = (err: unknown): boolean => reasonOrCode(err, 'Timeout', 504)
/** 500 ServerTimeout. Reason only. */
export const isServerTimeout = (err: unknown): boolean => reasonOnly(err, 'ServerTimeout')
/** 413 RequestEntityTooLarge (an object over the server's limit, 3 MiB by default). */
export const isRequestEntityTooLarge = (err: unknown): boolean =>
  reasonOrCode(err, 'RequestEntityTooLarge', 413)
/** 400 BadRequest. */
export const isBadRequest = (err: unknown): boolean => reasonOrCode(err, 'BadRequest', 400)
/** 500 InternalError. */
export const isInternalError = (err: unknown): boolean => reasonOrCode(err, 'InternalError', 500)
/** 503 ServiceUnavailable. */
export const isServiceUnavailable = (err: unknown): boolean => reasonOrCode(err, 'ServiceUnavailable', 503)

/** True if `details.causes` has a cause of `type` (e.g. `FieldManagerConflict`, `ResourceVersionTooLarge`). */
export function hasStatusCause(err: unknown, type: string): boolean {
  return fields(err)?.details?.causes?.some((c) => c.reason === type) ?? false
}

/**
 * "Too large resource version": the server's cache is behind the requested RV.
 * Detected by cause, or by the legacy message of 1.17–1.18 servers (kubernetes/kubernetes#92537, kubernetes/kubernetes#94316).
 */
export function isTooLargeResourceVersion(err: unknown): boolean {
  if (!isTimeout(err) && !isServerTimeout(err)) return false
  if (hasStatusCause(err, 'ResourceVersionTooLarge')) return true
  const msg = (err as { serverMessage?: unknown }).serverMessage
  return typeof msg === 'string' && msg.includes('Too large resource version')
}

/** Seconds the server asked the client to wait, as client-go `SuggestsClientDelay`. */
export function suggestsClientDelay(err: unknown): number | undefined {
  const f = fields(err)
  if (!f) return undefined
  const s = f.details?.retryAfterSeconds
  if (f.reason === 'ServerTimeout') return s ?? 0
  return s !== undefined && s > 0 ? s : undefined
}
