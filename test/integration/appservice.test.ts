/**
 * The AppService controller in-process on the real control plane with
 * kube-controller-manager, kube-scheduler and KWOK, so Deployments really get Ready Pods.
 * (The e2e suite runs the built artifact as a separate process under deploy/ RBAC.)
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { retryOnConflict } from '../../src/client/retry-on-conflict.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { databaseApi } from '../../src/operators/appservice/database-api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import {
  appServiceGone,
  appServiceSetup,
  appServiceWhere,
  condition,
  runAppServiceController,
} from '../support/appservice.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let db: DatabaseStandin
let ns: string
const reconciled: string[] = []

setup(async () => {
  await env().startControllers()
  ;({ client, db, ns } = await appServiceSetup({ env, defer }, 'appsrv'))
  const { stop } = await runAppServiceController(
    client,
    { namespaces: [ns], database: databaseApi(db.url) },
    (controller) => {
      // Count reconciles per key by watching what the workers take from the queue.
      const queue = controller.queue
      const get = queue.get.bind(queue)
      queue.get = async () => {
        const r = await get()
        if (!r.shutdown) reconciled.push(r.item)
        return r
      }
    },
  )
  defer(stop)
})

const apps = () => client.resource(APPSERVICES, ns)
const appWhere = (name: string, pred: (a: AppService) => boolean, what: string, timeoutMs?: number) =>
  appServiceWhere(apps(), name, pred, what, timeoutMs)

test('create → Deployment and Service with owner refs; status Ready with the right observedGeneration', async () => {
  const created = await apps().create({
    metadata: { name: 'web' },
    spec: { image: 'nginx:1.27', replicas: 2 },
  } as AppService)
  const ready = await appWhere('web', (a) => condition(a, 'Ready')?.status === 'True', 'Ready')
  assert.equal(ready.status?.observedGeneration, created.metadata.generation)
  assert.equal(ready.status?.readyReplicas, 2)
  assert.equal(ready.status?.endpoint, `http://web.${ns}.svc:8080`)
  assert.equal(ready.spec.port, 8080, 'defaulted by the CRD schema')
  const dep = await client.resource(CORE_TYPES.deployments, ns).get('web')
  const svc = await client.resource(CORE_TYPES.services, ns).get('web')
  for (const child of [dep, svc])
    assert.deepEqual(
      child.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.controller]),
      [['AppService', 'web', true]],
    )
  assert.ok(ready.metadata.finalizers?.includes('platform.example.com/database-cleanup'))
})

test('scale through the scale subresource; edit the image → rollout reflected', async () => {
  // The operator writes status between our read and write: retry on 409, as kubectl scale would.
  await retryOnConflict(async () => {
    const scale = await apps().getScale('web')
    return apps().updateScale({ ...scale, spec: { replicas: 3 } })
  })
  await appWhere(
    'web',
    (a) => a.status?.readyReplicas === 3 && condition(a, 'Ready')?.status === 'True',
    'scaled to 3',
  )
  await apps().patch('web', { spec: { image: 'nginx:1.28' } }, 'merge')
  await eventually(
    async () => {
      const d = await client.resource(CORE_TYPES.deployments, ns).get('web')
      return (
        (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]
          ?.image === 'nginx:1.28'
      )
    },
    { timeoutMs: 30_000, what: 'image rolled out to the Deployment' },
  )
  const a = await appWhere(
    'web',
    (x) => x.status?.observedGeneration === x.metadata.generation && condition(x, 'Ready')?.status === 'True',
    'ready after rollout',
  )
  assert.equal(a.status?.readyReplicas, 3)
})

test('a deleted child is recreated; a hand-edited managed field is corrected', async () => {
  const deps = client.resource(CORE_TYPES.deployments, ns)
  const oldUid = (await deps.get('web')).metadata.uid
  await deps.delete('web')
  await eventually(
    async () => {
      const now = await deps.get('web').catch(() => undefined)
      return now !== undefined && now.metadata.uid !== oldUid
    },
    { timeoutMs: 30_000, what: 'deployment recreated with a new UID' },
  )
  await deps.patch('web', { spec: { replicas: 7 } }, 'merge')
  await eventually(async () => ((await deps.get('web')).spec as { replicas: number }).replicas === 3, {
    timeoutMs: 30_000,
    what: 'replicas corrected back to 3',
  })
})

test('an invalid spec: Ready=False InvalidConfiguration, a Warning event, and no retry storm', async () => {
  await apps().create({ metadata: { name: 'bad' }, spec: { image: 'Not A Valid Image' } } as AppService)
  const bad = await appWhere(
    'bad',
    (a) => condition(a, 'Ready')?.reason === 'InvalidConfiguration',
    'InvalidConfiguration',
  )
  assert.match(
    condition(bad, 'Ready')?.message ?? '',
    /spec.image "Not A Valid Image" is not a valid image reference/,
  )
  const count = () => reconciled.filter((k) => k === `${ns}/bad`).length
  const before = count()
  await new Promise((r) => setTimeout(r, 3000))
  assert.ok(
    count() - before <= 1,
    `reconciles of ${ns}/bad in 3 s after the terminal error: ${count() - before}`,
  )
  const events = (await client.resource(CORE_TYPES.events, ns).list()).items as (KubeObject & {
    reason?: string
  })[]
  assert.ok(events.some((e) => e.reason === 'InvalidConfiguration'))
  await apps().patch('bad', { spec: { image: 'nginx:1.27' } }, 'merge')
  await appWhere('bad', (a) => condition(a, 'Ready')?.status === 'True', 'fixed spec becomes Ready')
})

test('database: one entry despite failures; deletion cleans it up, and waits while the API is down', async () => {
  db.failNext(3)
  const created = await apps().create({
    metadata: { name: 'withdb' },
    spec: { image: 'nginx:1.27', database: { enabled: true, class: 'small' } },
  } as AppService)
  const key = `appsrv-${created.metadata.uid}`
  await eventually(() => db.entries.has(key), { timeoutMs: 60_000, what: 'database entry provisioned' })
  await appWhere('withdb', (a) => condition(a, 'Degraded')?.status === 'False', 'not degraded after recovery')
  assert.deepEqual(
    db.created.filter((k) => k === key),
    [key],
    'created exactly once',
  )
  db.down = true
  await apps().delete('withdb')
  // FinalizationFailed at the first failures; ExternalAPIUnavailable once the breaker opened.
  const stuck = await appWhere(
    'withdb',
    (a) => /^(FinalizationFailed|ExternalAPIUnavailable)$/.test(condition(a, 'Degraded')?.reason ?? ''),
    'cleanup failing while the API is down',
  )
  assert.ok(stuck.metadata.finalizers?.includes('platform.example.com/database-cleanup'), 'finalizer stays')
  assert.ok(db.entries.has(key))
  db.down = false
  await appServiceGone(apps(), 'withdb')
  assert.equal(db.entries.has(key), false, 'entry removed')
})
