/**
 * @module api-status — the model's refusals as the API server words them: a meta/v1 Status with code and reason.
 */

/** A refusal the model answers with a Status body (`code`, `reason` as the real server uses them). */
export class ApiStatus extends Error {
  readonly code: number
  readonly reason: string
  readonly causes: { reason: string; message: string; field?: string }[]

  /** A Status `reason` with HTTP `code`, and its causes. */
  constructor(code: number, reason: string, message: string, causes: ApiStatus['causes'] = []) {
    super(message)
    this.code = code
    this.reason = reason
    this.causes = causes
  }

  /** The Status body. */
  toJSON(): object {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
      ...(this.causes.length ? { details: { causes: this.causes } } : {}),
    }
  }
}

/** 404 NotFound for `resource` `name`. */
export const notFound = (resource: string, name: string): ApiStatus =>
  new ApiStatus(404, 'NotFound', `${resource} "${name}" not found`)

/** 409 Conflict: the object was modified since `resourceVersion` was read. */
export const conflict = (resource: string, name: string): ApiStatus =>
  new ApiStatus(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
  )

/** 410 Expired: `resourceVersion` is older than the oldest the model keeps. */
export const expired = (rv: string | number): ApiStatus =>
  new ApiStatus(410, 'Expired', `too old resource version: ${rv}`)

/** 422 Invalid with one message. */
export const invalid = (resource: string, name: string, message: string): ApiStatus =>
  new ApiStatus(422, 'Invalid', `${resource} "${name}" is invalid: ${message}`, [
    { reason: 'FieldValueInvalid', message },
  ])
