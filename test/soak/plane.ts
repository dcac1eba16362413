/**
 * @module plane — the cluster side of a soak: the control plane with its controllers, the CRDs,
 * namespaces, RBAC of the operator and the agents, three fake Nodes with their roots, the fault
 * proxy and the database stand-in. Everything made here is undone by the run's cleanups.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { leaseRules, operatorRules } from '../../src/operators/appservice/manifests.ts'
import { trackTempDir, untrackTempDir } from '../controlplane/cleanup.ts'
import { getTestEnv, type TestEnv } from '../controlplane/env.ts'
import type { FaultProxy } from '../controlplane/fault-proxy.ts'
import { grantAgentRbac, installNodeConfigCrd } from '../integration/fixtures/nodeconfig-harness.ts'
import { type DatabaseStandin, startDatabaseStandin } from '../standin/database-api.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { adminClient } from '../support/kube.ts'
import type { SoakRun } from './context.ts'
import { nodeObject, RUN_LABEL, type SoakNode } from './workload.ts'

/** What the plane phase made. */
export interface Plane {
  env: TestEnv
  admin: KubeClient
  /** The namespaces the operator watches. */
  namespaces: string[]
  /** The namespace of the operator's leader-election Lease. */
  opNs: string
  /** The operator replicas' client-certificate user. */
  user: string
  /** The agents' group. */
  group: string
  nodes: SoakNode[]
  proxy: FaultProxy
  db: DatabaseStandin
}

const RBAC = 'rbac.authorization.k8s.io'
const rbacType = (resource: string, kind: string, namespaced: boolean): ResourceType => ({
  group: RBAC,
  version: 'v1',
  resource,
  namespaced,
  kind,
})
const CLUSTER_ROLES = rbacType('clusterroles', 'ClusterRole', false)
const CLUSTER_ROLE_BINDINGS = rbacType('clusterrolebindings', 'ClusterRoleBinding', false)

/**
 * The rule the rbac-revoked fault takes away: `patch` on Deployments, which every Deployment write
 * of the reconciler needs (server-side apply is a PATCH, creating included).
 */
export const REVOKED_RULE = { apiGroup: 'apps', resource: 'deployments', verb: 'patch' } as const

/** {@link operatorRules} without {@link REVOKED_RULE}. */
export function revokedRules(): ReturnType<typeof operatorRules> {
  const { apiGroup, resource, verb } = REVOKED_RULE
  return operatorRules().map((r) =>
    r.apiGroups.includes(apiGroup) && r.resources.includes(resource)
      ? { ...r, verbs: r.verbs.filter((v) => v !== verb) }
      : r,
  )
}

/** Takes {@link REVOKED_RULE} away from the operators' ClusterRole. */
export async function revokeOperatorRule(plane: Plane): Promise<void> {
  await plane.admin.resource(CLUSTER_ROLES).patch(plane.user, { rules: revokedRules() }, 'merge')
}

/** Gives the operators' ClusterRole deploy/'s rules back. */
export async function restoreOperatorRules(plane: Plane): Promise<void> {
  await plane.admin.resource(CLUSTER_ROLES).patch(plane.user, { rules: operatorRules() }, 'merge')
}

/** The labels of the three fake Nodes, by slot. */
const NODE_LABELS = [
  ['a', { role: 'edge', zone: 'north' }],
  ['b', { role: 'edge', zone: 'south' }],
  ['c', { role: 'core', zone: 'south' }],
] as const

/** Takes the control plane exclusively and makes everything the processes need. */
export async function startPlane(ctx: SoakRun): Promise<Plane> {
  const { cleanups, run } = ctx
  const env = await getTestEnv({ exclusive: true })
  ctx.env = env
  await env.startControllers()
  const a = adminClient(env, env.server)
  cleanups.push(() => a.close())
  await installAppServiceCrd(a)
  await installNodeConfigCrd(a)
  const namespaces = [await env.createNamespace('soak-a'), await env.createNamespace('soak-b')]
  const opNs = await env.createNamespace('soak-op')
  cleanups.push(async () => {
    for (const ns of [...namespaces, opNs])
      await a
        .resource(CORE_TYPES.namespaces)
        .delete(ns)
        .catch(() => {})
  })
  const user = `edgeop-soak-${run}`
  await grantOperatorRbac(ctx, a, user, opNs)
  // The agents: deploy/agent/rbac.yaml, bound to a group.
  const group = `edgeop:soak-agents-${run}`
  const agentBinding = `edgeop-soak-agents-${run}`
  await grantAgentRbac(a, group, agentBinding)
  cleanups.push(async () => {
    await a
      .resource(CLUSTER_ROLE_BINDINGS)
      .delete(agentBinding)
      .catch(() => {})
    await a
      .resource(rbacType('rolebindings', 'RoleBinding', true), 'default')
      .delete(agentBinding)
      .catch(() => {})
  })
  const nodes = await createNodes(ctx, a)
  const proxy = await env.startFaultProxy()
  cleanups.push(() => proxy.close())
  const db = await startDatabaseStandin()
  cleanups.push(() => db.close())
  return { env, admin: a, namespaces, opNs, user, group, nodes, proxy, db }
}

/** The operator: deploy/'s ClusterRole and leader-election Role, bound to a client-certificate user. */
async function grantOperatorRbac(ctx: SoakRun, a: KubeClient, user: string, opNs: string): Promise<void> {
  const ref = (kind: string, name: string) => ({ apiGroup: RBAC, kind, name })
  await a.resource(CLUSTER_ROLES).create({
    metadata: { name: user },
    rules: operatorRules(),
  } as never)
  await a.resource(CLUSTER_ROLE_BINDINGS).create({
    metadata: { name: user },
    roleRef: ref('ClusterRole', user),
    subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
  } as never)
  ctx.cleanups.push(async () => {
    await a
      .resource(CLUSTER_ROLE_BINDINGS)
      .delete(user)
      .catch(() => {})
    await a
      .resource(CLUSTER_ROLES)
      .delete(user)
      .catch(() => {})
  })
  await a
    .resource(rbacType('roles', 'Role', true), opNs)
    .create({ metadata: { name: 'leader' }, rules: leaseRules() } as never)
  await a.resource(rbacType('rolebindings', 'RoleBinding', true), opNs).create({
    metadata: { name: 'leader' },
    roleRef: ref('Role', 'leader'),
    subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
  } as never)
}

/** Three fake Nodes with different labels, three roots. */
async function createNodes(ctx: SoakRun, a: KubeClient): Promise<SoakNode[]> {
  const nodes: SoakNode[] = []
  for (const [slot, labels] of NODE_LABELS) {
    const name = `soak-${ctx.run}-${slot}`
    const root = await realpath(await mkdtemp(join(tmpdir(), `edgeop-soak-${slot}-`)))
    trackTempDir(root)
    ctx.cleanups.push(async () => {
      await rm(root, { recursive: true, force: true })
      untrackTempDir(root)
    })
    const node: SoakNode = { slot: `agent-${slot}`, name, root, labels: { [RUN_LABEL]: ctx.run, ...labels } }
    await a.resource(CORE_TYPES.nodes).create(nodeObject(node))
    ctx.cleanups.push(() =>
      a
        .resource(CORE_TYPES.nodes)
        .delete(name)
        .catch(() => {}),
    )
    nodes.push(node)
  }
  return nodes
}
