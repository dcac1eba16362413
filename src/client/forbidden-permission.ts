/**
 * @module forbidden-permission — the RBAC rule a refused request needed, read from its {@link ApiError}.
 *
 * A 403 names the verb, resource, group and namespace only in prose (`User "x" cannot patch resource
 * "deployments" in API group "apps" in the namespace "shop"`); the request that failed names them
 * exactly: the method gives the verb, the path the group, resource, subresource and namespace.
 */
import { quoteInput } from '../core/quote-input.ts'
import { isForbidden } from '../transport/api-error.ts'

/** One permission: a verb on a resource in a group, in a namespace or cluster-wide. */
export interface RbacPermission {
  /** The verb, e.g. `patch`. */
  verb: string
  /** API group, `''` for core. */
  group: string
  /** Plural resource, with `/subresource` when there is one, e.g. `deployments/status`. */
  resource: string
  /** Undefined: cluster-wide (a cluster-scoped resource, or all namespaces). */
  namespace: string | undefined
}

/** The verb a request means (kube-apiserver `RequestInfoFactory`); `list` for a GET without a name. */
function verbOf(method: string, named: boolean): string {
  const m = method.toUpperCase()
  if (m === 'DELETE') return named ? 'delete' : 'deletecollection'
  return (
    ({ POST: 'create', PUT: 'update', PATCH: 'patch' } as Record<string, string>)[m] ??
    (named ? 'get' : 'list')
  )
}

/**
 * The permission a 403 Forbidden lacked, from the failed request's method and path
 * (`/api/v1/…` or `/apis/<group>/<version>/…`, optionally `namespaces/<ns>/`, then
 * `<resource>[/<name>[/<subresource>]]`). Undefined for anything else (another error, a path that
 * is not a resource path).
 */
export function forbiddenPermission(err: unknown): RbacPermission | undefined {
  if (!isForbidden(err)) return undefined
  const { method, path } = err as { method?: unknown; path?: unknown }
  if (typeof method !== 'string' || typeof path !== 'string') return undefined
  const parts = path.split('?')[0]!.split('/').filter(Boolean).map(decodeURIComponent)
  const core = parts[0] === 'api'
  if (!core && parts[0] !== 'apis') return undefined
  const group = core ? '' : (parts[1] ?? '')
  let rest = parts.slice(core ? 2 : 3)
  let namespace: string | undefined
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1]
    rest = rest.slice(2)
  }
  const [resource, name, subresource] = rest
  if (!resource) return undefined
  return {
    verb: verbOf(method, name !== undefined),
    group,
    resource: subresource ? `${resource}/${subresource}` : resource,
    namespace,
  }
}

const list = (items: readonly string[]): string => `[${items.map((i) => JSON.stringify(i)).join(', ')}]`

/**
 * The RBAC rule granting `verbs` on `resource` in `group`, as the lines of a Role's `rules` entry:
 * `- apiGroups: ["apps"]`, `  resources: ["deployments"]`, `  verbs: ["patch"]`. Join them with a
 * line break for YAML, or with a space for one line.
 */
export function rbacRuleLines(group: string, resource: string, verbs: readonly string[]): string[] {
  return [`- apiGroups: ${list([group])}`, `  resources: ${list([resource])}`, `  verbs: ${list(verbs)}`]
}

/** Where a rule goes: `ClusterRole:` or `Role in namespace "shop":`. */
export function rbacScope(namespace: string | undefined): string {
  return namespace === undefined ? 'ClusterRole:' : `Role in namespace ${quoteInput(namespace)}:`
}

/** One line naming the rule to grant, e.g. `Role in namespace "shop": - apiGroups: ["apps"] resources: ["deployments"] verbs: ["patch"]`. */
export function formatRbacPermission(p: RbacPermission): string {
  return [rbacScope(p.namespace), ...rbacRuleLines(p.group, p.resource, [p.verb])]
    .join(' ')
    .replace(/\s+/g, ' ')
}
