/**
 * @module preflight — before running, check that the operator can work: the cluster answers, the
 * credentials authenticate, the resources it needs exist, and RBAC grants every verb it uses.
 *
 * Uses only APIs every authenticated identity may call (`system:public-info-viewer`,
 * `system:discovery`, `system:basic-user`): `GET /version`, `SelfSubjectReview`, discovery and one
 * `SelfSubjectAccessReview` per group/resource/verb/namespace. It never tries the real verbs.
 */
import type { MappingQuery } from '../client/discovery.ts'
import { rbacRuleLines, rbacScope } from '../client/forbidden-permission.ts'
import { errorMessage } from '../core/errors.ts'
import type { RequestSpec } from '../transport/transport.ts'

/** A resource the operator needs (a CRD's or a built-in), looked up through discovery. */
export interface ResourceRequirement {
  /** API group, `''` for core. */
  group: string
  /** Default: the group's preferred version. */
  version?: string
  /** Plural resource name, e.g. `widgets`. */
  resource: string
}

/** Verbs the operator needs on one resource. */
export interface PermissionRequirement {
  /** API group, `''` for core. */
  group: string
  /** Plural resource name. */
  resource: string
  /** E.g. `status` for `deployments/status`. */
  subresource?: string
  /** Verbs that must all be allowed, e.g. `['get', 'list', 'watch']`. */
  verbs: readonly string[]
  /** Undefined: cluster-wide (all namespaces, or a cluster-scoped resource). */
  namespace?: string
}

/** What {@link preflight} checks. */
export interface PreflightRequirements {
  /** Resources that must be served (a CRD that must be installed). */
  resources?: readonly ResourceRequirement[]
  /** Verbs the identity must be allowed. */
  permissions?: readonly PermissionRequirement[]
}

/** One checked verb. */
export interface PermissionResult {
  /** API group, `''` for core. */
  group: string
  /** Plural resource name. */
  resource: string
  /** Subresource, e.g. `status`, or undefined. */
  subresource: string | undefined
  /** The verb reviewed. */
  verb: string
  /** The namespace reviewed, or undefined for cluster-wide. */
  namespace: string | undefined
  /** Whether the authorizer allowed it. */
  allowed: boolean
  /** The authorizer's reason or the error that prevented the review. */
  reason?: string
}

/** The outcome of {@link preflight}; `ok` is true only when everything passed. */
export interface PreflightReport {
  /** True only when the server answered, the identity authenticated, every resource was found and every verb allowed. */
  ok: boolean
  /** `GET /version`: reachable means the server answered at all (even 401). */
  server: { reachable: boolean; version?: string; error?: string }
  /**
   * `SelfSubjectReview`: `authenticated` false only on 401; `username` undefined when the API is absent
   * (before Kubernetes 1.28) or refused, and the identity is unknown.
   */
  identity: { authenticated: boolean; username?: string; groups?: string[]; error?: string }
  /** One entry per required resource: whether discovery found it. */
  resources: { requirement: ResourceRequirement; found: boolean; error?: string }[]
  /** One entry per required verb. */
  permissions: PermissionResult[]
}

/** The slice of `KubeClient` that preflight uses (a seam for tests). */
export interface PreflightClient {
  /** Sends one request and decodes the JSON answer (a KubeClient does). */
  request<T = unknown>(spec: RequestSpec): Promise<T>
  /** Resolves a group/resource to its served version (a KubeClient's RESTMapper). */
  readonly mapper: { mapping(query: MappingQuery): Promise<unknown> }
}

const status = (err: unknown): number => (err as { status?: unknown })?.status as number

/**
 * The permissions leader election needs on its Lease (client-go `resourcelock.LeaseLock`: get, create,
 * update), for adding to the requirements when `--leader-elect` is on.
 */
export function leaderElectionPermissions(namespace: string): PermissionRequirement {
  return { group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'create', 'update'], namespace }
}

/**
 * Runs every check and reports. Never throws for a failed check; stops after the first two steps when
 * the server is unreachable or rejects the credentials (nothing else could succeed).
 *
 * @example
 * const report = await preflight(client, {
 *   resources: [{ group: 'example.com', resource: 'widgets' }],
 *   permissions: [{ group: 'example.com', resource: 'widgets', verbs: ['get', 'list', 'watch'] }],
 * })
 * if (!report.ok) console.error(formatPreflight(report))
 */
export async function preflight(
  client: PreflightClient,
  requirements: PreflightRequirements,
): Promise<PreflightReport> {
  const report: PreflightReport = {
    ok: false,
    server: { reachable: true },
    identity: { authenticated: true },
    resources: [],
    permissions: [],
  }
  try {
    const v = await client.request<{ gitVersion?: string }>({ method: 'GET', path: '/version' })
    if (v?.gitVersion) report.server.version = v.gitVersion
  } catch (err) {
    report.server = { reachable: status(err) > 0, error: errorMessage(err) }
    if (!report.server.reachable) {
      // No response: either the network failed, or no credential could be obtained (exec plugin, token file).
      const code = (err as { code?: unknown })?.code
      const noCredential = code === 'EDGEOP_ERR_AUTH' || code === 'EDGEOP_ERR_EXEC_PLUGIN'
      report.identity = {
        authenticated: false,
        error: noCredential ? errorMessage(err) : 'not checked: the server is unreachable',
      }
      return report
    }
  }
  try {
    const self = await client.request<{ status?: { userInfo?: { username?: string; groups?: string[] } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    })
    const user = self?.status?.userInfo
    report.identity = { authenticated: true }
    if (user?.username) report.identity.username = user.username
    if (user?.groups) report.identity.groups = user.groups
  } catch (err) {
    report.identity = { authenticated: status(err) !== 401, error: errorMessage(err) }
    if (!report.identity.authenticated) return report
  }
  report.resources = await Promise.all(
    (requirements.resources ?? []).map(async (requirement) => {
      try {
        await client.mapper.mapping(requirement)
        return { requirement, found: true }
      } catch (err) {
        return { requirement, found: false, error: errorMessage(err) }
      }
    }),
  )
  report.permissions = await Promise.all(
    (requirements.permissions ?? []).flatMap((p) => p.verbs.map((verb) => review(client, p, verb))),
  )
  report.ok =
    report.server.error === undefined &&
    report.identity.authenticated &&
    report.resources.every((r) => r.found) &&
    report.permissions.every((p) => p.allowed)
  return report
}

async function review(
  client: PreflightClient,
  p: PermissionRequirement,
  verb: string,
): Promise<PermissionResult> {
  const result: PermissionResult = {
    group: p.group,
    resource: p.resource,
    subresource: p.subresource,
    verb,
    namespace: p.namespace,
    allowed: false,
  }
  try {
    const r = await client.request<{
      status?: { allowed?: boolean; reason?: string; evaluationError?: string }
    }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: {
          resourceAttributes: {
            group: p.group,
            resource: p.resource,
            subresource: p.subresource,
            verb,
            namespace: p.namespace,
          },
        },
      },
    })
    result.allowed = r?.status?.allowed === true
    const reason = r?.status?.reason || r?.status?.evaluationError
    if (reason) result.reason = reason
  } catch (err) {
    result.reason = errorMessage(err)
  }
  return result
}

/**
 * The report for a terminal: one `[+]`/`[-]` line per check, then, when permissions are missing, the
 * RBAC rules that would grant them, grouped into one rule per scope, group and resource, e.g.
 *
 * ```text
 * Role in namespace "shop":
 * - apiGroups: ["apps"]
 *   resources: ["deployments"]
 *   verbs: ["patch"]
 * ```
 */
export function formatPreflight(report: PreflightReport): string {
  const out: string[] = []
  const line = (ok: boolean, text: string) => out.push(`[${ok ? '+' : '-'}]${text}`)
  const s = report.server
  line(!s.error, s.error ? `cluster: ${s.error}` : `cluster reachable${s.version ? ` (${s.version})` : ''}`)
  const id = report.identity
  if (!id.authenticated) line(false, `authentication: ${id.error}`)
  else if (id.username)
    line(
      true,
      `authenticated as ${id.username}${id.groups?.length ? ` (groups: ${id.groups.join(', ')})` : ''}`,
    )
  else line(true, `authenticated; identity unknown (${id.error ?? 'SelfSubjectReview gave no user'})`)
  for (const r of report.resources) {
    const what = `${r.requirement.resource}${r.requirement.group ? `.${r.requirement.group}` : ''}`
    line(r.found, r.found ? `resource ${what} exists` : `resource ${what} is missing: ${r.error}`)
  }
  const rules = new Map<string, { scope: string; group: string; resource: string; verbs: string[] }>()
  for (const p of report.permissions) {
    const resource = p.subresource ? `${p.resource}/${p.subresource}` : p.resource
    const where = p.namespace === undefined ? 'cluster-wide' : `in namespace ${JSON.stringify(p.namespace)}`
    const what = `${p.verb} ${resource}${p.group ? `.${p.group}` : ''} ${where}`
    line(p.allowed, p.allowed ? `may ${what}` : `may not ${what}${p.reason ? `: ${p.reason}` : ''}`)
    if (p.allowed) continue
    const scope = rbacScope(p.namespace)
    const key = `${scope}\n${p.group}\n${resource}`
    const rule = rules.get(key) ?? { scope, group: p.group, resource, verbs: [] }
    rule.verbs.push(p.verb)
    rules.set(key, rule)
  }
  if (rules.size > 0) out.push('', 'RBAC rules that would grant the missing permissions:')
  let scope = ''
  for (const r of [...rules.values()].sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0))) {
    if (r.scope !== scope) {
      scope = r.scope
      out.push(scope)
    }
    out.push(...rbacRuleLines(r.group, r.resource, r.verbs))
  }
  return `${out.join('\n')}\n`
}
