/**
 * @module rule-permissions — RBAC rules (what a ClusterRole grants) as the permission checks `check`
 * runs: one per resource, subresource and watched namespace.
 */
import { definedProps } from '../core/defined-props.ts'
import type { PermissionRequirement } from '../manager/index.ts'

/** One rule of a (Cluster)Role, as in its manifest (`rbac.authorization.k8s.io/v1` `PolicyRule`). */
export interface RbacRule {
  /** API groups; `''` is the core group. Only the first is checked. */
  apiGroups: readonly string[]
  /** Resources, `deployments` or with a subresource, `appservices/status`. */
  resources: readonly string[]
  /** Verbs the rule grants. */
  verbs: readonly string[]
}

/**
 * The permission checks that `rules` grant what the operator does, in each of `namespaces` (none: in
 * all namespaces, cluster-wide).
 *
 * @example
 * rulePermissions([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['get'] }], ['a'])
 * // [{ group: 'apps', resource: 'deployments', verbs: ['get'], namespace: 'a' }]
 */
export function rulePermissions(
  rules: readonly RbacRule[],
  namespaces: readonly string[],
): PermissionRequirement[] {
  const scopes = namespaces.length ? namespaces : [undefined]
  return rules.flatMap((rule) =>
    rule.resources.flatMap((r) => {
      const [resource, subresource] = r.split('/') as [string, string | undefined]
      return scopes.map((namespace) => ({
        group: rule.apiGroups[0] ?? '',
        resource,
        ...definedProps({ subresource: subresource || undefined }),
        verbs: rule.verbs,
        ...definedProps({ namespace: namespace || undefined }),
      }))
    }),
  )
}
