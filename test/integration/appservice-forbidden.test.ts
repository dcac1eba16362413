/**
 * RBAC removed at runtime: the AppService operator, running as a restricted user, gets a 403 on
 * the Deployment apply; the AppService shows Degraded=True Forbidden naming the exact rule to grant
 * (as the `check` command prints it), with a Warning event; granting the rule recovers without a
 * restart or an object change.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import type { ResourceType } from '../../src/client/resource.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { defaultRetryPolicy } from '../../src/controller/retry-policy.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { operatorRules } from '../../src/operators/appservice/manifests.ts'
import { eventually } from '../../src/testing/eventually.ts'
import {
  appServiceWhere,
  condition,
  installAppServiceCrd,
  runAppServiceController,
} from '../support/appservice.ts'
import { adminClient, userClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const ROLES: ResourceType = {
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  resource: 'roles',
  namespaced: true,
  kind: 'Role',
}
const BINDINGS: ResourceType = { ...ROLES, resource: 'rolebindings', kind: 'RoleBinding' }

const { env, setup, defer } = useTestEnv()
let admin: KubeClient
let ns: string
const user = `appsrv-${randomBytes(4).toString('hex')}`
/** The operator's rules, with `patch` on Deployments taken out when `withPatch` is false. */
const rules = (withPatch: boolean) =>
  operatorRules().map((r) =>
    r.resources[0] === 'deployments' && !withPatch
      ? { ...r, verbs: r.verbs.filter((v) => v !== 'patch') }
      : r,
  )
const setRole = (withPatch: boolean) =>
  admin.resource(ROLES, ns).apply(
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: user },
      rules: rules(withPatch),
    } as KubeObject,
    { fieldManager: 'edgeop-tests', force: true },
  )

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
  ns = await env().createNamespace('forbidden')
  await setRole(true)
  await admin.resource(BINDINGS, ns).create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: user },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: user },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
  } as KubeObject)
  const creds = await env().userKubeconfig(user)
  const client = userClient(env(), env().server, { name: user, ...creds }, ns)
  const { stop } = await runAppServiceController(client, {
    namespaces: [ns],
    database: undefined,
    // A short slow-retry so that the recovery shows within the test; the class decides, not the delay.
    retryPolicy: defaultRetryPolicy({ forbiddenDelayMs: 1000 }),
  })
  defer(async () => {
    await stop()
    await client.close()
  })
})

test('a 403 after RBAC is removed names the rule to grant; granting it recovers', async () => {
  const apps = admin.resource(APPSERVICES, ns)
  await apps.create({ metadata: { name: 'web' }, spec: { image: 'nginx:1.27', replicas: 1 } } as AppService)
  await appServiceWhere(
    apps,
    'web',
    (a) => condition(a, 'Degraded')?.status === 'False',
    'reconciled with full RBAC',
  )

  await setRole(false)
  await apps.patch('web', { spec: { image: 'nginx:1.28' } }, 'merge')
  const stuck = await appServiceWhere(
    apps,
    'web',
    (a) => condition(a, 'Degraded')?.reason === 'Forbidden',
    'Degraded=True Forbidden',
  )
  assert.equal(condition(stuck, 'Degraded')?.status, 'True')
  assert.match(
    condition(stuck, 'Degraded')?.message ?? '',
    new RegExp(
      `^missing permission, grant Role in namespace "${ns}": - apiGroups: \\["apps"\\] resources: \\["deployments"\\] verbs: \\["patch"\\]: `,
    ),
  )
  await eventually(
    async () =>
      (
        (await admin.resource(CORE_TYPES.events, ns).list()).items as (KubeObject & { reason?: string })[]
      ).some((e) => e.reason === 'Forbidden'),
    { timeoutMs: 30_000, what: 'a Warning event Forbidden' },
  )

  await setRole(true)
  await appServiceWhere(
    apps,
    'web',
    (a) => condition(a, 'Degraded')?.status === 'False',
    'recovered after the grant',
  )
  const dep = await admin.resource(CORE_TYPES.deployments, ns).get('web')
  const image = (dep.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
    .containers[0]?.image
  assert.equal(image, 'nginx:1.28', 'the change held back by the 403 is applied')
})
