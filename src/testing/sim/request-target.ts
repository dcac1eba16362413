/**
 * @module request-target — what an API path and query address: group, version, resource, namespace, name, subresource.
 */

/** The parts of `/api/v1/namespaces/ns/pods/name/status?x=y` (and `/apis/group/version/…`). */
export interface RequestTarget {
  /** `''` for the core group. */
  group: string
  /** API version, e.g. `v1`. */
  version: string
  /** Plural resource name. */
  resource: string
  /** Undefined for cluster-scoped paths and all-namespace collections. */
  namespace: string | undefined
  /** Undefined for a collection. */
  name: string | undefined
  /** E.g. `status`. */
  subresource: string | undefined
  /** The query parameters. */
  query: URLSearchParams
}

/**
 * Parses `path` (with its query) as a resource path, or undefined when it is not one (discovery,
 * `/version`, …). `namespaces/<ns>/<resource>` is read as namespaced, so `/api/v1/namespaces/x` is
 * the Namespace `x`.
 */
export function parseRequestTarget(path: string): RequestTarget | undefined {
  const q = path.indexOf('?')
  const query = new URLSearchParams(q < 0 ? '' : path.slice(q + 1))
  const parts = (q < 0 ? path : path.slice(0, q)).split('/').filter(Boolean).map(decodeURIComponent)
  let group: string
  let rest: string[]
  if (parts[0] === 'api' && parts.length >= 3) {
    group = ''
    rest = parts.slice(1)
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1] as string
    rest = parts.slice(2)
  } else return undefined
  const version = rest[0] as string
  let namespace: string | undefined
  let tail = rest.slice(1)
  if (tail[0] === 'namespaces' && tail.length >= 3) {
    namespace = tail[1]
    tail = tail.slice(2)
  }
  if (tail.length === 0 || tail.length > 3) return undefined
  return {
    group,
    version,
    resource: tail[0] as string,
    namespace,
    name: tail[1],
    subresource: tail[2],
    query,
  }
}
