/**
 * The in-memory API server model under the real client (through the transport's `exchange`):
 * the semantics the simulator promises, each against the client as an operator calls it.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  CORE_TYPES,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  isResourceExpired,
  KubeClient,
} from '../../../src/client/index.ts'
import type { KubeObject, WatchEvent } from '../../../src/core/index.ts'
import { APPSERVICES, AppServiceSpec } from '../../../src/operators/appservice/index.ts'
import { ApiServerModel, statusResponse } from '../../../src/testing/sim/api-server-model.ts'
import { ApiStatus } from '../../../src/testing/sim/api-status.ts'
import { collect } from '../../../src/testing/sim/garbage-collector.ts'
import { ObjectStore } from '../../../src/testing/sim/object-store.ts'
import { Prng } from '../../../src/testing/sim/prng.ts'
import { VirtualClock } from '../../../src/testing/sim/virtual-clock.ts'

function setup() {
  const clock = new VirtualClock(new Prng(1))
  const store = new ObjectStore()
  store.setRules('platform.example.com/appservices', { statusSubresource: true, spec: AppServiceSpec })
  const model = new ApiServerModel(clock, store)
  const client = new KubeClient(
    {
      server: 'https://simulated.invalid',
      tls: { insecureSkipVerify: false },
      namespace: 'default',
      source: 'test',
    },
    { exchange: model.exchange('test'), clock, qps: -1 },
  )
  return { clock, store, model, client }
}

const cm = (
  name: string,
  labels: Record<string, string> = {},
): KubeObject & { data?: Record<string, string> } => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels },
  data: { a: '1' },
})

test('create, get, update with a stale resourceVersion (409), delete (404 after)', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  const created = await cms.create(cm('x'))
  assert.equal(created.metadata.resourceVersion, '2')
  await assert.rejects(cms.create(cm('x')), isAlreadyExists)
  const updated = await cms.update({ ...created, data: { a: '2' } } as KubeObject)
  assert.ok(Number(updated.metadata.resourceVersion) > Number(created.metadata.resourceVersion))
  await assert.rejects(cms.update({ ...created, data: { a: '3' } } as KubeObject), isConflict)
  await cms.delete('x')
  await assert.rejects(cms.get('x'), isNotFound)
})

test('a list pages with limit and continue, at the first page resourceVersion, and selects by label and field', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  for (const n of ['a', 'b', 'c', 'd', 'e']) await cms.create(cm(n, { tier: n < 'c' ? 'front' : 'back' }))
  const first = await cms.list({ limit: 2 })
  assert.deepEqual(
    first.items.map((o) => o.metadata.name),
    ['a', 'b'],
  )
  await cms.create(cm('aa')) // after the first page's snapshot: not in the later pages
  const names: string[] = []
  for await (const page of cms.listPages({ limit: 2, continue: first.metadata?.continue }))
    names.push(...page.items.map((o) => o.metadata.name ?? ''))
  assert.deepEqual(names, ['c', 'd', 'e'])
  assert.deepEqual(
    (await cms.list({ labelSelector: 'tier=front' })).items.map((o) => o.metadata.name),
    ['a', 'b'],
  )
  assert.deepEqual((await cms.list({ labelSelector: 'tier in (back),tier!=front' })).items.length, 3)
  assert.deepEqual(
    (await cms.list({ fieldSelector: 'metadata.name=d' })).items.map((o) => o.metadata.name),
    ['d'],
  )
})

test('a watch replays from its resourceVersion, sends bookmarks, and is 410 once compacted', async () => {
  const { client, clock, store } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  const a = await cms.create(cm('a'))
  await cms.update({ ...a, data: { a: '2' } } as KubeObject)
  const events: WatchEvent<KubeObject>[] = []
  const abort = new AbortController()
  const done = (async () => {
    for await (const e of cms.watch({
      resourceVersion: a.metadata.resourceVersion,
      allowWatchBookmarks: true,
      signal: abort.signal,
    })) {
      events.push(e)
      if (events.length === 3) abort.abort()
    }
  })().catch(() => {})
  await new Promise((r) => setImmediate(r))
  await cms.delete('a')
  await new Promise((r) => setImmediate(r))
  clock.fireNext(clock.now() + 60_000) // the delivery timer
  await new Promise((r) => setImmediate(r))
  while (events.length < 3 && clock.fireNext(clock.now() + 120_000)) await new Promise((r) => setImmediate(r))
  await done
  assert.deepEqual(
    events.map((e) => e.type),
    ['MODIFIED', 'DELETED', 'BOOKMARK'],
  )
  store.compact()
  await assert.rejects(
    (async () => {
      for await (const _ of cms.watch({ resourceVersion: a.metadata.resourceVersion })) break
    })(),
    isResourceExpired,
  )
})

test('generation moves with the spec only; the status subresource writes status only; the spec schema defaults and refuses', async () => {
  const { client } = setup()
  const apps = client.resource(APPSERVICES, 'default')
  const app = await apps.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'web' },
    spec: { image: 'nginx:1' },
  } as never)
  assert.equal(app.metadata.generation, 1)
  assert.equal((app.spec as { replicas?: number }).replicas, 1, 'zod default')
  const st = await apps.updateStatus({
    ...app,
    spec: { ...app.spec, replicas: 5 },
    status: { readyReplicas: 1 },
  } as never)
  assert.equal(st.metadata.generation, 1)
  assert.equal((st.spec as { replicas: number }).replicas, 1)
  const up = await apps.update({ ...st, spec: { ...st.spec, replicas: 3 }, status: {} } as never)
  assert.equal(up.metadata.generation, 2)
  assert.deepEqual(up.status, { readyReplicas: 1 })
  await assert.rejects(apps.update({ ...up, spec: { replicas: -1 } } as never), isInvalid)
})

test('a finalizer holds a deleted object until it is removed; owners take their dependents (background and foreground)', async () => {
  const { client, store, clock } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  const owner = await cms.create({ ...cm('owner'), metadata: { name: 'owner', finalizers: ['x/y'] } })
  const ref = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: 'owner',
    uid: owner.metadata.uid ?? '',
    blockOwnerDeletion: true,
  }
  await cms.create({ ...cm('child'), metadata: { name: 'child', ownerReferences: [ref] } })
  const deleting = (await cms.delete('owner')) as KubeObject
  assert.ok(deleting.metadata.deletionTimestamp)
  await cms.patch('owner', [{ op: 'remove', path: '/metadata/finalizers' }], 'json')
  await assert.rejects(cms.get('owner'), isNotFound)
  collect(store, clock)
  await assert.rejects(cms.get('child'), isNotFound)

  const fg = await cms.create(cm('fg'))
  await cms.create({
    ...cm('dep'),
    metadata: { name: 'dep', ownerReferences: [{ ...ref, name: 'fg', uid: fg.metadata.uid ?? '' }] },
  })
  const held = (await cms.delete('fg', { propagationPolicy: 'Foreground' })) as KubeObject
  assert.deepEqual(held.metadata.finalizers, ['foregroundDeletion'])
  collect(store, clock)
  await assert.rejects(cms.get('dep'), isNotFound)
  collect(store, clock)
  await assert.rejects(cms.get('fg'), isNotFound)
})

test('server-side apply: fields move between managers, a conflict is 409 unless forced, fields no longer applied are removed', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  await cms.apply({ ...cm('s'), data: { a: '1', b: '1' } } as KubeObject, { fieldManager: 'one' })
  await assert.rejects(
    cms.apply({ ...cm('s'), data: { a: '2' } } as KubeObject, { fieldManager: 'two' }),
    isConflict,
  )
  const forced = await cms.apply({ ...cm('s'), data: { a: '2' } } as KubeObject, {
    fieldManager: 'two',
    force: true,
  })
  assert.deepEqual((forced as { data?: unknown }).data, { a: '2', b: '1' })
  const dropped = await cms.apply({ ...cm('s'), data: {} } as KubeObject, { fieldManager: 'one' })
  assert.deepEqual((dropped as { data?: unknown }).data, { a: '2' }, "b was only one's; a is two's")
  assert.deepEqual(
    dropped.metadata.managedFields?.map((m) => m.manager),
    ['one', 'two'],
  )
})

test('a JSON patch whose test fails is 422 Invalid and changes nothing', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  const c = await cms.create(cm('p'))
  await assert.rejects(
    cms.patch(
      'p',
      [
        { op: 'test', path: '/metadata/resourceVersion', value: '1' },
        { op: 'add', path: '/data/b', value: '2' },
      ],
      'json',
    ),
    isInvalid,
  )
  assert.equal((await cms.get('p')).metadata.resourceVersion, c.metadata.resourceVersion)
})

test('a merge patch that changes nothing answers the object at its resourceVersion and leaves the store as it was (found by the differential test, seed 4)', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  await cms.create(cm('n'))
  const once = await cms.patch('n', { data: { w: '1' } })
  const twice = await cms.patch('n', { data: { w: '1' } })
  assert.equal(twice.metadata.resourceVersion, once.metadata.resourceVersion)
  assert.equal((await cms.get('n')).metadata.resourceVersion, once.metadata.resourceVersion)
})

test('a ConfigMap deleted at once answers a Status, a custom resource its last state (found by the differential test, seed 1)', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  await cms.create(cm('d'))
  assert.equal(((await cms.delete('d')) as { kind?: string }).kind, 'Status')
  const apps = client.resource(APPSERVICES, 'default')
  await apps.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'web' },
    spec: { image: 'nginx:1' },
  } as never)
  assert.equal(((await apps.delete('web')) as KubeObject).metadata.name, 'web')
})

test('removing the last finalizer of a deleted object answers it without the finalizer at its last resourceVersion, as etcd answers a delete with the previous state (found by the differential test, seed 4)', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  await cms.create({ ...cm('f'), metadata: { name: 'f', finalizers: ['x/y'] } })
  const deleting = (await cms.delete('f')) as KubeObject
  const gone = await cms.patch('f', { metadata: { finalizers: null } })
  assert.equal(gone.metadata.finalizers, undefined)
  assert.equal(gone.metadata.resourceVersion, deleting.metadata.resourceVersion)
  await assert.rejects(cms.get('f'), isNotFound)
})

test('an apply of the same values by another manager is a write: managedFields change, the resourceVersion moves (found by the differential test, seed 8)', async () => {
  const { client } = setup()
  const cms = client.resource(CORE_TYPES.configMaps, 'default')
  const one = await cms.apply({ ...cm('o'), data: { a: '1' } } as KubeObject, { fieldManager: 'one' })
  const two = await cms.apply({ ...cm('o'), data: { a: '1' } } as KubeObject, { fieldManager: 'two' })
  assert.notEqual(two.metadata.resourceVersion, one.metadata.resourceVersion)
  const again = await cms.apply({ ...cm('o'), data: { a: '1' } } as KubeObject, { fieldManager: 'two' })
  assert.equal(again.metadata.resourceVersion, two.metadata.resourceVersion)
})

test('the transport above the exchange runs unchanged: a 429 with Retry-After is retried after 1 virtual second', async () => {
  const { client, model, clock } = setup()
  const at: number[] = []
  model.interceptor = () => {
    at.push(clock.elapsed)
    return at.length === 1
      ? {
          response: statusResponse(new ApiStatus(429, 'TooManyRequests', 'slow down'), {
            'retry-after': '1',
          }),
        }
      : undefined
  }
  const listing = client.resource(CORE_TYPES.configMaps, 'default').list()
  await new Promise((r) => setImmediate(r))
  while (clock.fireNext(clock.now() + 5_000)) await new Promise((r) => setImmediate(r))
  assert.deepEqual((await listing).items, [])
  assert.deepEqual(at, [0, 1_000])
})

test("a field selector on a resource's selectable field (a CRD's selectableFields) selects by it; any other field is 400", async () => {
  const { client, store } = setup()
  const type = { group: 'example.com', version: 'v1', resource: 'reports', namespaced: false }
  store.setRules('example.com/reports', { statusSubresource: true, selectableFields: ['spec.nodeName'] })
  const reports = client.resource<KubeObject & { spec: { nodeName: string } }>(type)
  for (const [name, nodeName] of [
    ['a.n1', 'n1'],
    ['a.n2', 'n2'],
    ['b.n1', 'n1'],
  ] as const)
    await reports.create({
      apiVersion: 'example.com/v1',
      kind: 'Report',
      metadata: { name },
      spec: { nodeName },
    })
  const names = async (fieldSelector: string) =>
    (await reports.list({ fieldSelector })).items.map((o) => o.metadata.name)
  assert.deepEqual(await names('spec.nodeName=n1'), ['a.n1', 'b.n1'])
  assert.deepEqual(await names('spec.nodeName!=n1,metadata.name=a.n2'), ['a.n2'])
  await assert.rejects(
    reports.list({ fieldSelector: 'spec.other=n1' }),
    (err: { status?: number }) => err.status === 400,
  )
})
