/**
 * @module auth-headers — the headers of one attempt: identity, content negotiation and the credentials of the moment.
 *
 * Credentials are fetched per attempt (an exec plugin or token file may rotate them) and
 * travel only in the `authorization` header; no message here ever contains them.
 */
import type { CredentialProvider, Credentials } from '../config/cluster-config.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import { displayPath, type RequestSpec } from './request-spec.ts'

/** The `authorization` header value for `credentials`: bearer token first, else basic auth; undefined for neither. */
export function authorizationHeader(credentials: Credentials): string | undefined {
  if (credentials.token) return `Bearer ${credentials.token}`
  if (credentials.basic) {
    const { username, password } = credentials.basic
    return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`
  }
  return undefined
}

/**
 * Gets the current credentials from `provider`.
 *
 * @throws the provider's edgeop error as it is; anything else as `EDGEOP_ERR_AUTH` naming the provider.
 */
export async function currentCredentials(
  provider: CredentialProvider,
  spec: RequestSpec,
  signal: AbortSignal | undefined,
): Promise<Credentials> {
  try {
    return await provider.get(signal)
  } catch (cause) {
    if (isEdgeopError(cause)) throw cause
    throw new EdgeopError(
      'EDGEOP_ERR_AUTH',
      `${spec.method} ${displayPath(spec.path)}: getting credentials from ${provider.describe} failed`,
      { step: 'get credentials', cause },
    )
  }
}

/**
 * The headers of one attempt of `spec`: User-Agent, Accept, Content-Type when there is a body,
 * Authorization when credentials give one, `traceparent` when the call is traced.
 */
export function requestHeaders(
  spec: RequestSpec,
  userAgent: string,
  credentials: Credentials | undefined,
  traceparent?: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    'user-agent': userAgent,
    accept: spec.accept ?? 'application/json',
  }
  if (spec.body !== undefined) headers['content-type'] = spec.contentType ?? 'application/json'
  const authorization = credentials && authorizationHeader(credentials)
  if (authorization) headers.authorization = authorization
  if (traceparent) headers.traceparent = traceparent
  return headers
}
