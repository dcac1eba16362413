/**
 * The REST client against a real kube-apiserver: every verb, conflicts, SSA,
 * pagination, metadata-only, subresources, discovery, raw watches, HTTP/2.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { ConfigMap } from '../../src/api/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { retryOnConflict } from '../../src/client/retry-on-conflict.ts'
import type { KubeObject, WatchEvent } from '../../src/core/types.ts'
import {
  hasStatusCause,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
} from '../../src/transport/api-error.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let ns: string

setup(async () => {
  client = adminClient(env(), env().server)
  defer(() => client.close())
  ns = await env().createNamespace('client')
})

const cm = (
  name: string,
  data: Record<string, string> = {},
  labels: Record<string, string> = {},
): ConfigMap => ({
  metadata: { name, labels },
  data,
})

describe('verbs on ConfigMaps', () => {
  test('create, get, list, update, stale update 409, delete, 404', async () => {
    const cms = client.resource(CORE_TYPES.configMaps, ns)
    const created = await cms.create(cm('a', { k: '1' }))
    assert.equal(created.metadata.namespace, ns)
    assert.equal(created.kind, 'ConfigMap')
    await assert.rejects(cms.create(cm('a')), (e) => isAlreadyExists(e))
    const got = await cms.get('a')
    assert.deepEqual(got.data, { k: '1' })

    const updated = await cms.update({ ...got, data: { k: '2' } })
    assert.notEqual(updated.metadata.resourceVersion, got.metadata.resourceVersion)
    // `got` still carries the old resourceVersion: optimistic concurrency refuses it.
    const stale = await cms.update({ ...got, data: { k: '3' } }).catch((e: unknown) => e)
    assert.ok(isConflict(stale), String(stale))
    assert.equal((stale as { status: number }).status, 409)

    const list = await cms.list()
    assert.ok(list.items.some((i) => i.metadata.name === 'a'))
    assert.ok(list.metadata.resourceVersion)

    await cms.delete('a')
    await assert.rejects(cms.get('a'), (e) => isNotFound(e))
  })

  test('merge, JSON and strategic patches; a failing JSON-patch test op is refused', async () => {
    const cms = client.resource(CORE_TYPES.configMaps, ns)
    await cms.create(cm('p', { a: '1' }))
    await cms.patch('p', { data: { b: '2' } }, 'merge')
    await cms.patch('p', [{ op: 'add', path: '/data/c', value: '3' }], 'json')
    const s = await cms.patch('p', { metadata: { labels: { x: 'y' } } }, 'strategic')
    assert.deepEqual(s.data, { a: '1', b: '2', c: '3' })
    assert.deepEqual(s.metadata.labels, { x: 'y' })
    const failed = await cms
      .patch(
        'p',
        [
          { op: 'test', path: '/data/a', value: 'nope' },
          { op: 'remove', path: '/data/a' },
        ],
        'json',
      )
      .catch((e: unknown) => e)
    assert.ok(isInvalid(failed) || isConflict(failed), String(failed))
    assert.deepEqual((await cms.get('p')).data, { a: '1', b: '2', c: '3' }, 'nothing changed')
  })

  test('delete preconditions: a wrong uid is a conflict and the object survives', async () => {
    const cms = client.resource(CORE_TYPES.configMaps, ns)
    const o = await cms.create(cm('pre'))
    const err = await cms
      .delete('pre', { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } })
      .catch((e: unknown) => e)
    assert.ok(isConflict(err), String(err))
    await cms.delete('pre', {
      preconditions: { uid: o.metadata.uid!, resourceVersion: o.metadata.resourceVersion! },
    })
    await assert.rejects(cms.get('pre'), (e) => isNotFound(e))
  })

  test('dryRun create persists nothing; deleteCollection by label', async () => {
    const cms = client.resource(CORE_TYPES.configMaps, ns)
    const dry = await cms.create(cm('dry'), { dryRun: true })
    assert.equal(dry.metadata.name, 'dry')
    await assert.rejects(cms.get('dry'), (e) => isNotFound(e))
    for (const n of ['g1', 'g2', 'g3']) await cms.create(cm(n, {}, { group: 'del' }))
    await cms.create(cm('keep', {}, { group: 'keep' }))
    await cms.deleteCollection({ labelSelector: 'group=del' })
    const left = await cms.list({ labelSelector: 'group in (del,keep)' })
    assert.deepEqual(
      left.items.map((i) => i.metadata.name),
      ['keep'],
    )
  })

  test('pagination with limit=2 returns every object exactly once', async () => {
    const pns = await env().createNamespace('pages')
    const cms = client.resource(CORE_TYPES.configMaps, pns)
    for (let i = 0; i < 5; i++) await cms.create(cm(`page-${i}`))
    const pages = []
    for await (const page of cms.listPages({ limit: 2 })) pages.push(page)
    const names = pages
      .flatMap((p) => p.items.map((i) => i.metadata.name))
      .filter((n) => n?.startsWith('page-'))
    assert.deepEqual(names.sort(), ['page-0', 'page-1', 'page-2', 'page-3', 'page-4'])
    assert.ok(pages.length >= 3, `got ${pages.length} pages`)
    assert.ok(pages[0]!.metadata.continue, 'first page carries a continue token')
  })

  test('metadata-only get and list return PartialObjectMetadata without data', async () => {
    const cms = client.resource(CORE_TYPES.configMaps, ns)
    await cms.create(cm('meta', { big: 'x'.repeat(1000) }, { m: '1' }))
    const one = await cms.getMetadata('meta')
    assert.equal(one.kind, 'PartialObjectMetadata')
    assert.equal(one.metadata.labels?.m, '1')
    assert.equal((one as Record<string, unknown>).data, undefined)
    const list = await cms.listMetadata({ labelSelector: 'm=1' })
    assert.equal(list.kind, 'PartialObjectMetadataList')
    assert.equal(list.items.length, 1)
    assert.equal((list.items[0] as Record<string, unknown>).data, undefined)
  })
})

describe('server-side apply', () => {
  test('a conflict between managers is a 409 FieldManagerConflict; force takes ownership', async () => {
    const cms = client.resource(CORE_TYPES.configMaps, ns)
    const body = (v: string): ConfigMap => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'ssa' },
      data: { owned: v },
    })
    const first = await cms.apply(body('a'), { fieldManager: 'manager-a' })
    assert.equal((first.data as Record<string, string>).owned, 'a')
    const again = await cms.apply(body('a'), { fieldManager: 'manager-a' })
    assert.equal(
      again.metadata.resourceVersion,
      first.metadata.resourceVersion,
      'an identical apply writes nothing',
    )
    const conflict = await cms.apply(body('b'), { fieldManager: 'manager-b' }).catch((e: unknown) => e)
    assert.ok(isConflict(conflict), String(conflict))
    assert.ok(hasStatusCause(conflict, 'FieldManagerConflict'))
    const forced = await cms.apply(body('b'), { fieldManager: 'manager-b', force: true })
    assert.equal((forced.data as Record<string, string>).owned, 'b')
    const managers = (forced.metadata.managedFields ?? []).map((m) => m.manager)
    assert.ok(managers.includes('manager-b'))
  })
})

describe('subresources', () => {
  test('scale a Deployment through its scale subresource', async () => {
    const deps = client.resource(CORE_TYPES.deployments, ns)
    await deps.create({
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    })
    assert.equal((await deps.getScale('web')).spec?.replicas, 1)
    // controller-manager may update the Deployment between our read and write: retry on 409.
    await retryOnConflict(async () => {
      const scale = await deps.getScale('web')
      return deps.updateScale({ ...scale, spec: { replicas: 3 } })
    })
    const d = await deps.get('web')
    assert.equal((d.spec as { replicas: number }).replicas, 3)
  })
})

describe('custom resources, status subresource and discovery', () => {
  const group = `t${Math.random().toString(16).slice(2, 8)}.edgeop.dev`
  const widgets: ResourceType = {
    group,
    version: 'v1',
    resource: 'widgets',
    namespaced: true,
    kind: 'Widget',
  }

  test('discovery finds a CRD created during the test; status writes leave spec alone', async () => {
    const snap = await client.mapper.snapshot()
    assert.equal(snap.aggregated, true, 'the apiserver serves aggregated discovery')
    const dep = await client.mapper.mapping({ group: 'apps', kind: 'Deployment' })
    assert.deepEqual([dep.resource, dep.version, dep.namespaced], ['deployments', 'v1', true])
    assert.ok(dep.subresources.includes('scale'))
    const byShort = await client.mapper.mapping({ group: '', resource: 'cm' })
    assert.equal(byShort.kind, 'ConfigMap')

    const crds = client.resource(CORE_TYPES.customResourceDefinitions)
    await crds.create({
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wdg'] },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', properties: { size: { type: 'integer' } } },
                  status: { type: 'object', properties: { phase: { type: 'string' } } },
                },
              },
            },
          },
        ],
      },
    })
    // The mapper missed before the CRD existed; a lookup now refreshes and finds it.
    let found: Awaited<ReturnType<typeof client.mapper.mapping>> | undefined
    for (let i = 0; i < 100 && !found; i++) {
      found = await client.mapper.mapping({ group, kind: 'Widget' }).catch(() => undefined)
      if (!found) await new Promise((r) => setTimeout(r, 100))
    }
    assert.ok(found, 'CRD became discoverable')
    assert.deepEqual([found.resource, found.namespaced, found.shortNames], ['widgets', true, ['wdg']])

    const w = client.resource(widgets, ns)
    let created: KubeObject | undefined
    for (let i = 0; i < 100 && !created; i++) {
      created = await w.create({ metadata: { name: 'w1' }, spec: { size: 1 } }).catch(() => undefined)
      if (!created) await new Promise((r) => setTimeout(r, 100))
    }
    assert.ok(created)
    const withStatus = await w.updateStatus({ ...created, spec: { size: 99 }, status: { phase: 'Ready' } })
    assert.deepEqual(withStatus.status, { phase: 'Ready' })
    assert.deepEqual(withStatus.spec, { size: 1 }, 'spec changes through /status are ignored')
    await crds.delete(`widgets.${group}`)
  })
})

describe('raw watch', () => {
  test('events after the list resourceVersion arrive in order; the consumer can stop early', async () => {
    const wns = await env().createNamespace('watch')
    const cms = client.resource(CORE_TYPES.configMaps, wns)
    const list = await cms.list()
    const seen: WatchEvent[] = []
    const ac = new AbortController()
    const done = (async () => {
      for await (const ev of cms.watch({
        resourceVersion: list.metadata.resourceVersion!,
        allowWatchBookmarks: true,
        signal: ac.signal,
      })) {
        if (ev.type === 'BOOKMARK') continue
        seen.push(ev)
        if (seen.length === 3) break
      }
    })()
    await cms.create(cm('w1'))
    await cms.patch('w1', { data: { a: 'b' } })
    await cms.delete('w1')
    await done
    assert.deepEqual(
      seen.map((e) => `${e.type} ${e.object.metadata.name}`),
      ['ADDED w1', 'MODIFIED w1', 'DELETED w1'],
    )
  })

  test('a streaming list (sendInitialEvents) replays state then the initial-events-end bookmark', async () => {
    const sns = await env().createNamespace('stream')
    const cms = client.resource(CORE_TYPES.configMaps, sns)
    for (const n of ['s1', 's2']) await cms.create(cm(n))
    const added: string[] = []
    let endBookmark: KubeObject | undefined
    for await (const ev of cms.watch({
      sendInitialEvents: true,
      resourceVersionMatch: 'NotOlderThan',
      allowWatchBookmarks: true,
    })) {
      if (ev.type === 'ADDED') added.push(ev.object.metadata.name!)
      if (
        ev.type === 'BOOKMARK' &&
        ev.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true'
      ) {
        endBookmark = ev.object
        break
      }
    }
    assert.ok(added.includes('s1') && added.includes('s2'), added.join(','))
    assert.ok(endBookmark?.metadata.resourceVersion)
  })
})

describe('transport against the real server', () => {
  test('HTTP/2: concurrent requests and an open watch share one connection', async () => {
    const c = adminClient(env(), env().server)
    try {
      const cms = c.resource(CORE_TYPES.configMaps, ns)
      const ac = new AbortController()
      const it = cms.watch({ signal: ac.signal, allowWatchBookmarks: true })[Symbol.asyncIterator]()
      const pending = it.next().catch(() => undefined)
      await Promise.all(Array.from({ length: 20 }, () => cms.list({ limit: 1 })))
      assert.equal(c.transport.connections, 1)
      ac.abort()
      await pending
    } finally {
      await c.close()
    }
  })

  test('a 429 with Retry-After from the fault proxy is retried and succeeds', async () => {
    const proxy = await env().startFaultProxy()
    const c = adminClient(env(), proxy.url)
    try {
      proxy.addFault({
        method: 'GET',
        path: /\/configmaps$/,
        action: { type: 'status', status: 429, retryAfterSeconds: 0 },
        times: 2,
      })
      const list = await c.resource(CORE_TYPES.configMaps, ns).list()
      assert.ok(Array.isArray(list.items))
      const statuses = proxy.requests((r) => r.path.endsWith('/configmaps')).map((r) => r.status)
      assert.deepEqual(statuses, [429, 429, 200])
    } finally {
      await c.close()
      await proxy.close()
    }
  })
})
