/**
 * A warm start from a snapshot older than the server's state, on the real control plane: objects
 * deleted and changed while the process was down. The cache is `restored` (a handler that accepts it
 * sees the deleted object), a controller that did not opt in reconciles nothing until the resumed
 * watch has reached the server's version (a `limit=1` list's) and the informer is `synced`, and then
 * sees the server's state. A restored cache of a
 * CRD deleted while down still fails start-up naming it. (The node agent, which opts in, serving its
 * files from a snapshot while the API is away: snapshots.test.ts.)
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { InformerFactory } from '../../src/cache/factory.ts'
import type { SyncState } from '../../src/cache/sync-state.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { Manager } from '../../src/manager/manager.ts'
import { UnservedResourcesError } from '../../src/manager/served-resources.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

/** Hang guard for a run expected to end by itself (not a latency assertion). */
const EXIT_GUARD_MS = 60_000

const { env, setup, defer } = useTestEnv()
let client: KubeClient
setup(() => {
  client = adminClient(env(), env().server)
  defer(() => client.close())
})

async function cacheDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-sync-states-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  return dir
}

/** Lists and watches `type` into a snapshot in `dir`, then stops (the snapshot is written at the stop). */
async function takeSnapshot(dir: string, type: ResourceType, namespace: string): Promise<void> {
  const factory = new InformerFactory(client)
  factory.persistTo(dir, { tag: 't' })
  const inf = factory.informer({ type, namespace })
  const ac = new AbortController()
  factory.start(ac.signal)
  await inf.whenSynced()
  ac.abort()
  await factory.stopped()
  assert.equal((await readdir(dir)).filter((f) => f.endsWith('.snapshot')).length, 1)
}

test('a snapshot older than the server: nothing is reconciled before synced, then the deletion and the change are seen', async () => {
  const ns = await env().createNamespace('sync-states')
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  const cm = (name: string, v: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    data: { v },
  })
  await cms.create(cm('kept', '1'))
  await cms.create(cm('gone', '1'))
  const dir = await cacheDir()
  await takeSnapshot(dir, CORE_TYPES.configMaps, ns)
  // While the process is down.
  await cms.delete('gone')
  await cms.update({ ...(await cms.get('kept')), data: { v: '2' } })
  await cms.create(cm('new', '1'))

  const manager = new Manager({
    client,
    logger: noopLogger,
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
  })
  manager.factory.persistTo(dir, { tag: 't' })
  const inf = manager.factory.informer({ type: CORE_TYPES.configMaps, namespace: ns })
  const restored: { name: string; state: SyncState; takenAt: number | undefined }[] = []
  inf.addEventHandler(
    {
      onAdd: (o, initial) =>
        void (
          initial &&
          restored.push({
            name: o.metadata.name!,
            state: inf.syncState(),
            takenAt: inf.health().snapshotTakenAt,
          })
        ),
    },
    { acceptRestored: true },
  )
  const reconciled: { name: string; state: SyncState; v: string }[] = []
  manager.add({
    name: 'sync-states',
    for: { source: inf, kind: 'ConfigMap', group: '', namespaced: true },
    reconcile: async (r) => {
      const o = inf.store.get(`${ns}/${r.name}`) as { data?: { v?: string } } | undefined
      reconciled.push({ name: r.name, state: inf.syncState(), v: o ? (o.data?.v ?? '') : 'absent' })
    },
  })
  const ac = new AbortController()
  const running = manager.run(ac.signal)
  try {
    // Synced means the resumed watch reached the server's current resourceVersion, which on the
    // shared control plane other tests keep raising: a quiet namespace then gets there with the
    // apiserver's next bookmark (about once a minute), not with its own events.
    await eventually(() => reconciled.length >= 3, { timeoutMs: 90_000, what: 'three reconciles' })
  } finally {
    ac.abort()
    await running
  }
  assert.deepEqual(
    restored.map((r) => `${r.name}:${r.state}`).sort(),
    ['gone:restored', 'kept:restored'],
    'the snapshot, with the deleted object, was served as restored',
  )
  assert.ok(
    restored.every((r) => r.takenAt !== undefined),
    'with its age',
  )
  assert.deepEqual(
    reconciled.filter((r) => r.state !== 'synced'),
    [],
    'nothing reconciled before the watch caught up',
  )
  const last = new Map(reconciled.map((r) => [r.name, r.v]))
  assert.deepEqual(Object.fromEntries(last), { gone: 'absent', kept: '2', new: '1' })
})

test('a restored cache of a CRD deleted while down: Manager.run still fails naming the CRD', async () => {
  const ns = await env().createNamespace('sync-states-crd')
  const group = `g${randomBytes(4).toString('hex')}.edgeop.test`
  const widgets: ResourceType = { ...CORE_TYPES.configMaps, group, resource: 'widgets', kind: 'Widget' }
  const crds = client.resource(CORE_TYPES.customResourceDefinitions)
  const name = `widgets.${group}`
  await crds.create({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as never)
  defer(() => crds.delete(name).catch(() => {}))
  const items = client.resource(widgets, ns)
  await eventually(
    () =>
      items
        .create({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: ns } })
        .then(() => true)
        .catch(() => false),
    { timeoutMs: 30_000, what: 'the CRD served' },
  )
  const dir = await cacheDir()
  await takeSnapshot(dir, widgets, ns)
  await crds.delete(name)
  await eventually(
    () =>
      crds.get(name).then(
        () => false,
        () => true,
      ),
    { timeoutMs: 30_000, what: 'CRD gone' },
  )

  // A fresh client: nothing cached from the discovery above.
  const fresh = adminClient(env(), env().server)
  defer(() => fresh.close())
  const manager = new Manager({
    client: fresh,
    logger: noopLogger,
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
  })
  manager.factory.persistTo(dir, { tag: 't' })
  const inf = manager.factory.informer({ type: widgets, namespace: ns })
  let guard: NodeJS.Timeout | undefined
  const err = await Promise.race([
    manager.run(new AbortController().signal).then(
      () => assert.fail('run resolved'),
      (e: unknown) => e,
    ),
    new Promise<never>((_, reject) => {
      guard = setTimeout(() => reject(new Error('Manager.run did not end')), EXIT_GUARD_MS)
    }),
  ])
  clearTimeout(guard)
  assert.ok(err instanceof UnservedResourcesError, String(err))
  assert.deepEqual(err.crds, [name])
  assert.equal(inf.syncState(), 'restored', 'the snapshot was restored, and did not hide the missing CRD')
})
