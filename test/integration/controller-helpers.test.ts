/**
 * Operator helpers on the real apiserver: finalizers under concurrent writers, the
 * finalize protocol, server-side apply only on drift, status written only on change,
 * events aggregated into a series.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeEvent, KubeObject } from '../../src/core/types.ts'
import { applyIfDrifted } from '../../src/objects/apply.ts'
import { setCondition, updateStatusIfChanged } from '../../src/objects/conditions.ts'
import { EventRecorder } from '../../src/objects/events.ts'
import { ensureFinalizer, finalize, removeFinalizer } from '../../src/objects/finalizer.ts'
import { withControllerReference } from '../../src/objects/owner.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let ns: string
setup(async () => {
  client = adminClient(env(), env().server)
  defer(() => client.close())
  ns = await env().createNamespace('helpers')
})

test("ensureFinalizer from a stale copy keeps a concurrent writer's finalizer; removal keeps theirs too", async () => {
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  const stale = await cms.create({ metadata: { name: 'fin' } })
  await cms.patch('fin', { metadata: { finalizers: ['someone.else/keep'] } }, 'merge')
  const ours = await ensureFinalizer(cms, stale, 'edgeop.dev/cleanup')
  assert.deepEqual(ours?.metadata.finalizers, ['someone.else/keep', 'edgeop.dev/cleanup'])
  const again = await ensureFinalizer(cms, ours!, 'edgeop.dev/cleanup')
  assert.equal(again?.metadata.resourceVersion, ours?.metadata.resourceVersion, 'already present: no write')
  // Someone adds another finalizer after we read `ours`: removing ours from that stale copy keeps theirs.
  await cms.patch('fin', [{ op: 'add', path: '/metadata/finalizers/-', value: 'late/one' }], 'json')
  const removed = await removeFinalizer(cms, ours!, 'edgeop.dev/cleanup')
  assert.deepEqual(removed?.metadata.finalizers, ['someone.else/keep', 'late/one'])
  await cms.patch('fin', { metadata: { finalizers: null } }, 'merge')
})

test('finalize: finalizer first; on delete, cleanup runs, a failing cleanup keeps the finalizer, success lets the object go', async () => {
  const cms = client.resource(CORE_TYPES.configMaps, ns)
  const created = await cms.create({ metadata: { name: 'ext' } })
  const alive = await finalize(cms, created, 'edgeop.dev/external', async () =>
    assert.fail('no cleanup while alive'),
  )
  assert.equal(alive.deleting, false)
  assert.ok(!alive.deleting && alive.object.metadata.finalizers?.includes('edgeop.dev/external'))
  await cms.delete('ext')
  const deleting = await cms.get('ext')
  assert.ok(deleting.metadata.deletionTimestamp, 'held by the finalizer')
  await assert.rejects(
    finalize(cms, deleting, 'edgeop.dev/external', async () => {
      throw new Error('external API down')
    }),
    /external API down/,
  )
  assert.ok(
    (await cms.get('ext')).metadata.finalizers?.includes('edgeop.dev/external'),
    'finalizer stays when cleanup fails',
  )
  let cleaned = 0
  const done = await finalize(cms, await cms.get('ext'), 'edgeop.dev/external', async () => void cleaned++)
  assert.deepEqual(done, { deleting: true })
  assert.equal(cleaned, 1)
  await assert.rejects(cms.get('ext'), (e: Error) => /404/.test(e.message))
})

test('applyIfDrifted: creates, skips when nothing differs (no request), corrects drift, leaves foreign fields alone', async () => {
  const proxy = await env().startFaultProxy()
  const viaProxy = adminClient(env(), proxy.url)
  defer(
    () => proxy.close(),
    () => viaProxy.close(),
  )
  const deps = viaProxy.resource(CORE_TYPES.deployments, ns)
  const owner = await client
    .resource(CORE_TYPES.configMaps, ns)
    .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } })
  const desired = withControllerReference<KubeObject>(
    { ...owner, apiVersion: 'v1', kind: 'ConfigMap' },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns, labels: { app: 'web' } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] },
        },
      },
    },
  )
  const first = await applyIfDrifted(deps, desired, undefined, 'edgeop-test')
  assert.equal(first.written, true)
  const patchesBefore = proxy.requests((r) => r.method === 'PATCH').length
  const second = await applyIfDrifted(deps, desired, await deps.get('web'), 'edgeop-test')
  assert.equal(second.written, false)
  assert.equal(
    proxy.requests((r) => r.method === 'PATCH').length,
    patchesBefore,
    'no request when nothing differs',
  )

  await client
    .resource(CORE_TYPES.deployments, ns)
    .patch('web', { spec: { replicas: 5 }, metadata: { annotations: { 'someone/else': 'keep' } } }, 'merge')
  const drifted = await deps.get('web')
  const fixed = await applyIfDrifted(deps, desired, drifted, 'edgeop-test')
  assert.equal(fixed.written, true)
  assert.equal((fixed.object.spec as { replicas: number }).replicas, 2, 'drift in our field corrected')
  assert.equal(
    fixed.object.metadata.annotations?.['someone/else'],
    'keep',
    'a field we do not manage is left alone',
  )
})

test('updateStatusIfChanged writes only semantic changes; lastTransitionTime survives a message change', async () => {
  const group = `s${Math.random().toString(16).slice(2, 8)}.edgeop.dev`
  const crds = client.resource(CORE_TYPES.customResourceDefinitions)
  await crds.create({
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  })
  defer(() => crds.delete(`things.${group}`))
  const things = client.resource(
    { group, version: 'v1', resource: 'things', namespaced: true, kind: 'Thing' },
    ns,
  )
  let thing: KubeObject | undefined
  for (let i = 0; i < 100 && !thing; i++) {
    thing = await things.create({ metadata: { name: 't' } }).catch(() => undefined)
    if (!thing) await new Promise((r) => setTimeout(r, 100))
  }
  assert.ok(thing)
  const cond = (message: string) =>
    setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Waiting', message },
      new Date('2026-11-29T10:00:00Z'),
    )
  const first = await updateStatusIfChanged(things, thing, { observedGeneration: 1, conditions: cond('a') })
  assert.ok(first, 'written')
  assert.equal((first.status as { observedGeneration: number }).observedGeneration, 1, 'the server’s answer')
  const read = await things.get('t')
  assert.equal(
    await updateStatusIfChanged(things, read, { observedGeneration: 1, conditions: cond('a') }),
    undefined,
    'nothing to write',
  )
  const later = setCondition(
    read.status ? (read.status as { conditions: never }).conditions : [],
    { type: 'Ready', status: 'False', reason: 'Waiting', message: 'b' },
    new Date('2026-11-29T12:00:00Z'),
  )
  assert.ok(await updateStatusIfChanged(things, read, { observedGeneration: 1, conditions: later }))
  const after = (await things.get('t')).status as {
    conditions: { message: string; lastTransitionTime: string }[]
  }
  assert.deepEqual(
    [after.conditions[0]?.message, after.conditions[0]?.lastTransitionTime],
    ['b', '2026-11-29T10:00:00Z'],
  )
  assert.ok(await updateStatusIfChanged(things, await things.get('t'), {}), 'removed keys are nulled out')
  assert.deepEqual((await things.get('t')).status ?? {}, {})
})

test('events: 50 repeats become one Event with series.count 50; a spamming object is throttled at the burst', async () => {
  const regarding = await client
    .resource(CORE_TYPES.configMaps, ns)
    .create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'noisy' } })
  const recorder = new EventRecorder(client, {
    controller: 'edgeop.dev/test',
    instance: 'test-0',
    seriesFlushMs: 50,
    burst: 5,
  })
  for (let i = 0; i < 50; i++)
    recorder.event(
      { ...regarding, apiVersion: 'v1', kind: 'ConfigMap' },
      'Warning',
      'ExternalAPIUnavailable',
      'Reconcile',
      'db API returned 503',
    )
  for (let i = 0; i < 20; i++)
    recorder.event(
      { ...regarding, apiVersion: 'v1', kind: 'ConfigMap' },
      'Normal',
      `Distinct${i}`,
      'Reconcile',
      'x',
    )
  await new Promise((r) => setTimeout(r, 200))
  await recorder.flush()
  // Only ours: controller-manager and the scheduler report on this namespace's Deployment too.
  const events = (await client.resource<KubeEvent>(CORE_TYPES.events, ns).list()).items.filter(
    (e) => e.reportingController === 'edgeop.dev/test',
  )
  const repeated = events.filter((e) => e.reason === 'ExternalAPIUnavailable')
  assert.equal(repeated.length, 1)
  assert.equal(repeated[0]?.series?.count, 50)
  assert.equal(repeated[0]?.regarding.name, 'noisy')
  assert.equal(events.length, 5, 'burst of 5 per object: 1 series + 4 distinct, the rest dropped')
})
