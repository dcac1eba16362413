/**
 * deploy/ on the real apiserver, as a cluster admin would apply it: every manifest passes a
 * server-side dry run; the ClusterRole's `appservices/finalizers` rule is what the
 * OwnerReferencesPermissionEnforcement admission plugin (on in the test apiserver) requires for
 * the operator's owned objects; the CRD's printer columns and date-time format as the server
 * serves them.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { request } from 'node:https'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { desiredDeployment } from '../../src/operators/appservice/desired.ts'
import { FIELD_MANAGER } from '../../src/operators/appservice/reconcile.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import { installAppServiceCrd } from '../support/appservice.ts'
import { applyObjects, deployObjects, deployYamlFiles } from '../support/deploy-manifests.ts'
import { adminClient, userClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const RBAC = 'rbac.authorization.k8s.io'
const { env, setup, defer } = useTestEnv()
let admin: KubeClient
let ns: string

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
  ns = await env().createNamespace('deploy')
})

test('every manifest in deploy/ and deploy/agent/ passes a server-side dry run, in kubectl apply -f order', async () => {
  // A dry-run Namespace is not stored, so the objects in it would be refused as in a missing
  // namespace: the Namespace files are applied for real (idempotent; they hold nothing).
  await applyObjects(admin, await deployObjects('00-namespace.yaml'))
  const files = [...(await deployYamlFiles()), ...(await deployYamlFiles('agent'))]
  assert.ok(files.length >= 10, `${files.length} files`)
  for (const file of files) {
    const objects = await deployObjects(file)
    const applied = await applyObjects(admin, objects, { dryRun: true }).catch((err: Error) => {
      throw new Error(`deploy/${file}: ${err.message}`)
    })
    assert.deepEqual(
      applied.map((o) => `${o.kind}/${o.metadata.name}`),
      objects.map((o) => `${o.kind}/${o.metadata.name}`),
      `deploy/${file}`,
    )
  }
})

/** A client-certificate user bound to deploy/'s ClusterRole rules, minus those `drop` rejects. */
async function userWithOperatorRules(drop: (resources: string[]) => boolean): Promise<KubeClient> {
  const user = `deploy-rbac-${randomBytes(4).toString('hex')}`
  const role = (await deployObjects('rbac.yaml')).find((o) => o.kind === 'ClusterRole') as KubeObject & {
    rules: { resources: string[] }[]
  }
  const rules = role.rules.filter((r) => !drop(r.resources))
  const type = (resource: string, kind: string) => ({
    group: RBAC,
    version: 'v1',
    resource,
    namespaced: false,
    kind,
  })
  await admin
    .resource(type('clusterroles', 'ClusterRole'))
    .create({ metadata: { name: user }, rules } as KubeObject)
  await admin.resource(type('clusterrolebindings', 'ClusterRoleBinding')).create({
    metadata: { name: user },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: user },
    subjects: [{ kind: 'User', apiGroup: RBAC, name: user }],
  } as KubeObject)
  defer(
    () => admin.resource(type('clusterrolebindings', 'ClusterRoleBinding')).delete(user),
    () => admin.resource(type('clusterroles', 'ClusterRole')).delete(user),
  )
  const creds = await env().userKubeconfig(user)
  const client = userClient(env(), env().server, { name: user, ...creds }, ns)
  defer(() => client.close())
  return client
}

/** Applies the Deployment the operator would own for a fresh AppService `name`, as `client`. */
async function applyOwnedDeployment(client: KubeClient, name: string): Promise<KubeObject> {
  const app = await admin
    .resource(APPSERVICES, ns)
    .create({ metadata: { name }, spec: { image: 'nginx:1.27', replicas: 1, port: 8080 } } as AppService)
  const desired = desiredDeployment(app, app.spec)
  assert.equal(desired.metadata.ownerReferences?.[0]?.blockOwnerDeletion, true)
  return client.resource(CORE_TYPES.deployments, ns).apply(desired, { fieldManager: FIELD_MANAGER })
}

test("the operator's owned Deployment needs `update appservices/finalizers` under OwnerReferencesPermissionEnforcement", async () => {
  // Bound first, so once the second binding is in the authorizer's cache, so is this one.
  const withoutFinalizers = await userWithOperatorRules((r) => r.includes('appservices/finalizers'))
  const full = await userWithOperatorRules(() => false)
  // With deploy/'s rules: allowed (retried while the binding reaches the authorizer's cache and
  // the admission plugin's discovery learns the AppService kind).
  let n = 0
  await eventually(
    async () => (await applyOwnedDeployment(full, `allowed-${n++}`).catch(() => undefined)) !== undefined,
    { timeoutMs: 30_000, what: 'owned Deployment created with the full ClusterRole' },
  )
  // The same rules without that one: the admission plugin refuses blockOwnerDeletion.
  const err = await applyOwnedDeployment(withoutFinalizers, 'refused').then(
    () => assert.fail('created without update on appservices/finalizers'),
    (e: unknown) => e,
  )
  assert.ok(err instanceof ApiError, String(err))
  assert.equal(err.status, 403)
  assert.match(err.serverMessage, /cannot set blockOwnerDeletion .*can't set finalizers on/)
})

/** GET `path` as a kubectl-style Table (server-side printing). */
function getTable(path: string): Promise<{
  columnDefinitions: { name: string }[]
  rows: { cells: unknown[] }[]
}> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, env().server),
      {
        ca: env().caPem,
        cert: env().admin.certPem,
        key: env().admin.keyPem,
        agent: false,
        headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('error', reject)
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          if (res.statusCode !== 200)
            reject(new Error(`GET ${path} as Table: HTTP ${res.statusCode}: ${body.slice(0, 300)}`))
          else resolve(JSON.parse(body))
        })
      },
    )
    req.on('error', reject)
    req.end()
  })
}

test('kubectl get appservices shows Desired from the spec and Ready from the status', async () => {
  const apps = admin.resource(APPSERVICES, ns)
  await apps.create({
    metadata: { name: 'columns' },
    spec: { image: 'nginx:1.27', replicas: 3 },
  } as AppService)
  const ready = {
    type: 'Ready',
    status: 'False',
    reason: 'DeploymentProgressing',
    message: '2/3 replicas ready',
    lastTransitionTime: '2026-01-02T03:04:05Z',
  }
  await apps.patch('columns', { status: { readyReplicas: 2, conditions: [ready] } }, 'merge', {
    subresource: 'status',
  })
  const table = await getTable(
    `/apis/${APPSERVICES.group}/${APPSERVICES.version}/namespaces/${ns}/appservices/columns`,
  )
  const names = table.columnDefinitions.map((c) => c.name)
  assert.deepEqual(names, ['Name', 'Desired', 'Ready', 'Reason', 'Age'])
  const cells = table.rows[0]!.cells
  assert.equal(cells[names.indexOf('Desired')], 3)
  assert.equal(cells[names.indexOf('Ready')], 2)
  assert.equal(cells[names.indexOf('Reason')], 'DeploymentProgressing')
})

test('a condition whose lastTransitionTime is not RFC 3339 is refused (format: date-time)', async () => {
  const apps = admin.resource(APPSERVICES, ns)
  await apps.create({ metadata: { name: 'badtime' }, spec: { image: 'nginx:1.27' } } as AppService)
  const condition = {
    type: 'Ready',
    status: 'True',
    reason: 'X',
    message: '',
    lastTransitionTime: 'yesterday',
  }
  const err = await apps
    .patch('badtime', { status: { conditions: [condition] } }, 'merge', { subresource: 'status' })
    .then(
      () => assert.fail('accepted lastTransitionTime "yesterday"'),
      (e: unknown) => e,
    )
  assert.ok(err instanceof ApiError, String(err))
  assert.equal(err.status, 422)
  assert.match(err.serverMessage, /lastTransitionTime.*date-time/)
  await apps.patch(
    'badtime',
    { status: { conditions: [{ ...condition, lastTransitionTime: '2026-01-02T03:04:05Z' }] } },
    'merge',
    { subresource: 'status' },
  )
})
