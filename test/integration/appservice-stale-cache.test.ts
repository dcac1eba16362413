/**
 * The AppService reconciler after a fail-over, on the real apiserver: the new leader's
 * cache (warm from its time as a standby, its watch possibly reconnecting) can be older than
 * what its predecessor acted on. Acting on it wrote to the external database what the
 * predecessor had undone, and rolled children back to the old spec — found by the chaos soak (test/soak), the class of defect of
 * kuberay#715 and scylla-operator#2492. Each test plays both replicas with two reconciler
 * instances (two processes' worth of state) and hands the second one a snapshot taken
 * before the predecessor's last change, which is exactly what a lagging cache holds.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Deployment, Service } from '../../src/api/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { ReconcileContext, Reconciler } from '../../src/controller/reconciler.ts'
import { noopLogger } from '../../src/core/log.ts'
import { EventRecorder } from '../../src/objects/events.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { databaseApi } from '../../src/operators/appservice/database-api.ts'
import { appServiceReconciler } from '../../src/operators/appservice/reconcile.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import { appServiceSetup } from '../support/appservice.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let db: DatabaseStandin
let recorder: EventRecorder
let ns: string
const ac = new AbortController()
const ctx: ReconcileContext = { signal: ac.signal, log: noopLogger, reconcileId: 'test' }

setup(async () => {
  ;({ client, db, ns } = await appServiceSetup({ env, defer }, 'stale'))
  recorder = new EventRecorder(client, { controller: 'platform.example.com/appservice', instance: 'test' })
  defer(
    () => ac.abort(),
    () => recorder.flush(),
  )
})

const apps = () => client.resource(APPSERVICES, ns)

/**
 * One replica's reconciler, reading the AppService from `cache` (and its children from it,
 * when given) and counting its GETs of the AppService.
 */
function replica(cache: { app: AppService | undefined; deployment?: Deployment; service?: Service }) {
  const counted = { gets: 0, childWrites: 0 }
  const appClient = apps()
  const get = appClient.get.bind(appClient)
  appClient.get = (...args) => {
    counted.gets++
    return get(...args)
  }
  const reconcile = appServiceReconciler({
    getAppService: () => cache.app,
    getDeployment: () => cache.deployment,
    getService: () => cache.service,
    appServices: () => appClient,
    deployments: (n) => countingApply(client.resource(CORE_TYPES.deployments, n), counted),
    services: (n) => countingApply(client.resource(CORE_TYPES.services, n), counted),
    database: databaseApi(db.url),
    recorder,
  })
  return {
    counted,
    reconcile: (name: string): ReturnType<Reconciler> => reconcile({ namespace: ns, name }, ctx),
  }
}

/** `c`, counting its server-side applies in `counted.childWrites`. */
function countingApply<C extends { apply: (...a: never[]) => unknown }>(
  c: C,
  counted: { childWrites: number },
): C {
  const apply = c.apply.bind(c) as (...a: never[]) => unknown
  c.apply = ((...args: never[]) => {
    counted.childWrites++
    return apply(...args)
  }) as C['apply']
  return c
}

/** Reconciles with an up-to-date cache until nothing is left to do (the predecessor's work). */
async function reconcileFresh(name: string): Promise<void> {
  const cache = { app: undefined as AppService | undefined }
  const fresh = replica(cache)
  for (let i = 0; i < 5; i++) {
    cache.app = await apps()
      .get(name)
      .catch(() => undefined)
    if ((await fresh.reconcile(name)) === undefined) return
  }
  assert.fail(`${name}: still requeueing after 5 reconciles with a fresh cache`)
}

const createdTimes = (uid: string | undefined) => db.created.filter((k) => k === `appsrv-${uid}`).length

test('regression (kuberay#715 class): a new leader whose cache predates "database off" does not re-create the entry', async () => {
  const app = await apps().create({
    metadata: { name: 'off' },
    spec: { image: 'nginx:1.27', replicas: 1, database: { enabled: true, class: 'small' } },
  } as AppService)
  await reconcileFresh('off') // the old leader: finalizer, children, entry
  assert.ok(db.entries.has(`appsrv-${app.metadata.uid}`))
  const lagging = await apps().get('off') // what the standby's cache holds when the old leader dies

  await apps().patch('off', { spec: { image: 'nginx:1.28', database: { enabled: false } } }, 'merge')
  await reconcileFresh('off') // the old leader rolls out 1.28 and removes the entry, then is killed
  assert.ok(!db.entries.has(`appsrv-${app.metadata.uid}`))

  const next = replica({ app: lagging })
  const requestsBefore = db.requests.length
  assert.equal(await next.reconcile('off'), undefined, 'reconciled from the live object')
  assert.deepEqual(
    db.requests.slice(requestsBefore).map((r) => r.method),
    [],
    'the live status records no entry: the database is not called (and never asked to create)',
  )
  assert.equal(createdTimes(app.metadata.uid), 1, 'created once, by the old leader')
  assert.equal(next.counted.gets, 1)
  const dep = await client.resource(CORE_TYPES.deployments, ns).get('off')
  assert.equal(
    (dep.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]
      ?.image,
    'nginx:1.28',
    'the Deployment is not rolled back to the stale spec',
  )
  const status = (await apps().get('off')).status
  assert.equal(status?.observedGeneration, (await apps().get('off')).metadata.generation)
})

test('regression (scylla-operator#2492 class): a new leader whose cache predates the deletion does not leak an entry', async () => {
  const app = await apps().create({
    metadata: { name: 'gone' },
    spec: { image: 'nginx:1.27', replicas: 1, database: { enabled: true, class: 'small' } },
  } as AppService)
  await reconcileFresh('gone')
  const lagging = await apps().get('gone')
  await apps().delete('gone')
  await reconcileFresh('gone') // cleanup, finalizer removed: the object is gone
  await assert.rejects(apps().get('gone'), /404/)

  const next = replica({ app: lagging })
  const requestsBefore = db.requests.length
  assert.equal(await next.reconcile('gone'), undefined, 'nothing to do for an object that is gone')
  assert.deepEqual(db.requests.slice(requestsBefore), [])
  assert.equal(db.entries.has(`appsrv-${app.metadata.uid}`), false, 'no entry leaked')
  assert.equal(createdTimes(app.metadata.uid), 1)
  assert.equal(next.counted.childWrites, 0, 'no child applied for an owner that is gone')
})

test('a cache that is current costs one GET per resourceVersion, not one per reconcile', async () => {
  await apps().create({
    metadata: { name: 'steady' },
    spec: { image: 'nginx:1.27', replicas: 1, database: { enabled: true, class: 'small' } },
  } as AppService)
  await reconcileFresh('steady')
  // Children as a cache would hold them: fixed, so kube-controller-manager (which other
  // files start on the shared control plane) cannot change the status between reconciles.
  const cache = {
    app: await apps().get('steady'),
    deployment: await client.resource(CORE_TYPES.deployments, ns).get('steady'),
    service: await client.resource(CORE_TYPES.services, ns).get('steady'),
  }
  const r = replica(cache)
  assert.equal(await r.reconcile('steady'), undefined)
  assert.equal(r.counted.gets, 1, 'the first reconcile of this version confirms it')
  cache.app = await apps().get('steady') // the watch delivers what that reconcile wrote, if anything
  const version = cache.app.metadata.resourceVersion
  assert.equal(await r.reconcile('steady'), undefined)
  assert.equal(await r.reconcile('steady'), undefined)
  assert.equal(r.counted.gets, 1, 'later reconciles of the same version do not')
  assert.equal((await apps().get('steady')).metadata.resourceVersion, version, 'and write nothing')
})

test('read your own writes: after its status write, a reconcile on the version before it reads the live object', async () => {
  await apps().create({
    metadata: { name: 'ryow' },
    spec: { image: 'nginx:1.27', replicas: 1 },
  } as AppService)
  await reconcileFresh('ryow')
  await apps().patch('ryow', { spec: { image: 'nginx:1.28' } }, 'merge')
  const cache = { app: await apps().get('ryow') } // the spec change, as the watch delivered it
  const r = replica(cache)
  assert.equal(await r.reconcile('ryow'), undefined)
  const written = await apps().get('ryow')
  assert.equal(
    written.status?.observedGeneration,
    written.metadata.generation,
    'status written for the new spec',
  )
  assert.notEqual(written.metadata.resourceVersion, cache.app.metadata.resourceVersion)
  assert.equal(r.counted.gets, 1)

  // The cache has not seen that status write yet. Comparing with the status it holds would
  // write again, or (worse) skip a status that equals the older one: so the live object is
  // read. (Whether a write follows depends on the Deployment's status, which
  // kube-controller-manager may be changing meanwhile; the read is what this proves.)
  assert.equal(await r.reconcile('ryow'), undefined)
  assert.equal(r.counted.gets, 2, 'the version the cache holds is no longer trusted: the live one is read')
})
