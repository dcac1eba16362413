/**
 * The controller with the classified retry policy: slow 403s, 422s that wait for a change, keys
 * parked after N attempts and re-armed by a change of their object, on a manual clock.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventHandler, HandlerRegistration } from '../../src/cache/listener.ts'
import { Controller } from '../../src/controller/controller.ts'
import type { ControllerOptions } from '../../src/controller/controller-options.ts'
import type { FailureReport } from '../../src/controller/failure-handler.ts'
import { RETRY_NOW_ANNOTATION } from '../../src/controller/parked-keys.ts'
import { generationChanged } from '../../src/controller/predicates.ts'
import {
  defaultRetryPolicy,
  FINALIZER_RETRY_INTERVAL_MS,
  FORBIDDEN_RETRY_DELAY_MS,
} from '../../src/controller/retry-policy.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { reconcileMetrics } from '../../src/metrics/reconcile-metrics.ts'
import { ApiError } from '../../src/transport/api-error.ts'
import { until } from '../support/http-stub.ts'

class Source {
  readonly describe = 'fake'
  handlers: EventHandler[] = []
  addEventHandler(h: EventHandler): HandlerRegistration {
    this.handlers.push(h)
    return { hasSynced: () => true, whenSynced: () => Promise.resolve(), pending: 0, remove() {} }
  }
  add(o: KubeObject) {
    for (const h of this.handlers) h.onAdd?.(o, false)
  }
  update(a: KubeObject, b: KubeObject) {
    for (const h of this.handlers) h.onUpdate?.(a, b)
  }
  delete(o: KubeObject) {
    for (const h of this.handlers) h.onDelete?.(o, { finalStateUnknown: false })
  }
}

const app = (generation: number, annotations?: Record<string, string>): KubeObject => ({
  metadata: {
    namespace: 'shop',
    name: 'web',
    generation,
    resourceVersion: String(generation * 10),
    annotations,
  },
})
const forbidden = () =>
  new ApiError({
    status: 403,
    reason: 'Forbidden',
    message: 'deployments.apps "web" is forbidden',
    method: 'PATCH',
    path: '/apis/apps/v1/namespaces/shop/deployments/web',
  })
const invalid = () =>
  new ApiError({
    status: 422,
    reason: 'Invalid',
    message: 'spec.x: Invalid value',
    method: 'PUT',
    path: '/x',
  })

function setup(fail: () => unknown, extra: Partial<ControllerOptions> = {}) {
  const clock = new ManualClock()
  const primary = new Source()
  const owned = new Source()
  const calls: number[] = []
  const reports: FailureReport[] = []
  const registry = new MetricsRegistry()
  const ctl = new Controller({
    name: 'apps',
    for: {
      source: primary,
      kind: 'App',
      group: 'example.com',
      namespaced: true,
      predicates: [generationChanged],
    },
    owns: [{ source: owned }],
    clock,
    logger: noopLogger,
    observer: reconcileMetrics(registry, 'apps', 1),
    retryPolicy: defaultRetryPolicy({ random: () => 0 }),
    onFailure: async (_req, report) => void reports.push(report),
    reconcile: async () => {
      calls.push(clock.now())
      const err = fail()
      if (err) throw err
    },
    ...extra,
  })
  const ac = new AbortController()
  const done = ctl.run(ac.signal)
  const stop = async () => {
    ac.abort()
    await done
  }
  const child = (): KubeObject => ({
    metadata: {
      namespace: 'shop',
      name: 'web',
      ownerReferences: [
        { apiVersion: 'example.com/v1', kind: 'App', name: 'web', uid: 'u', controller: true },
      ],
    },
  })
  return { clock, primary, owned, child, ctl, calls, reports, registry, stop }
}

/** An object of a mapped watch (the source a child is derived from), at resourceVersion `rv`. */
const relatedObject = (rv: string, team?: string): KubeObject => ({
  metadata: { namespace: 'shop', name: 'creds', resourceVersion: rv, labels: team ? { team } : {} },
})

/** Lets queued work run without moving time further than `ms`. */
async function settle(clock: ManualClock, ms = 0): Promise<void> {
  await clock.advance(ms)
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
}

test('a 403 retries at the slow delay, and the hook names the RBAC rule to grant', async () => {
  const t = setup(forbidden)
  t.primary.add(app(1))
  await until(() => t.calls.length === 1 && t.reports.length === 1)
  await settle(t.clock, FORBIDDEN_RETRY_DELAY_MS - 1)
  assert.equal(t.calls.length, 1, 'not before the slow delay')
  await settle(t.clock, 1)
  await until(() => t.calls.length === 2)
  assert.deepEqual(t.reports[0], {
    errorClass: 'forbidden',
    attempts: 1,
    message: JSON.stringify(forbidden().message),
    missingPermission:
      'Role in namespace "shop": - apiGroups: ["apps"] resources: ["deployments"] verbs: ["patch"]',
  })
  await t.stop()
})

test('a 422 parks at once (no_retry): no retry as time passes nor on a status-only update; a new generation re-arms', async () => {
  let n = 0
  const t = setup(() => (n++ === 0 ? invalid() : undefined))
  t.primary.add(app(1))
  await until(() => t.calls.length === 1 && t.ctl.parked().length === 1)
  const [entry] = t.ctl.parked()
  assert.deepEqual(
    { key: entry!.key, reason: entry!.reason, errorClass: entry!.errorClass, attempts: entry!.attempts },
    { key: 'shop/web', reason: 'no_retry', errorClass: 'invalid', attempts: 1 },
  )
  assert.equal(entry!.firstFailure, new Date(t.clock.now()).toISOString())
  assert.match(t.registry.render(), /edgeop_controller_parked_keys\{controller="apps",reason="no_retry"\} 1/)
  assert.deepEqual(
    t.reports.map((r) => r.parked),
    ['no_retry'],
  )
  await settle(t.clock, 10 * 3_600_000)
  t.primary.update(app(1), { ...app(1), metadata: { ...app(1).metadata, resourceVersion: '11' } })
  await settle(t.clock, 1000)
  assert.equal(
    t.calls.length,
    1,
    'parked: a status-only update (its own condition, say) does not reconcile it',
  )
  t.primary.update(app(1), app(2))
  await until(() => t.calls.length === 2)
  assert.deepEqual(t.ctl.parked(), [])
  assert.match(t.registry.render(), /edgeop_controller_parked_keys\{controller="apps",reason="no_retry"\} 0/)
  await t.stop()
})

test('a transient failure parks after maxAttempts; the retry-now annotation re-arms it, and so does retryParked', async () => {
  const t = setup(() => new Error('database down'), {
    retryPolicy: defaultRetryPolicy({ random: () => 0, maxAttempts: 3 }),
  })
  t.primary.add(app(1))
  await until(() => t.calls.length === 1 && t.clock.pending > 0)
  await settle(t.clock, 5)
  await until(() => t.calls.length === 2 && t.clock.pending > 0)
  await settle(t.clock, 10)
  await until(() => t.calls.length === 3 && t.ctl.parked().length === 1)
  assert.deepEqual(
    t.ctl.parked().map((e) => [e.reason, e.attempts, e.lastError]),
    [['attempts', 3, '"database down"']],
  )
  await settle(t.clock, 3_600_000)
  assert.equal(t.calls.length, 3, 'parked keys stop retrying')
  // A user asks for a retry: an annotation change (no new generation; the predicate would drop it).
  t.primary.update(app(1), app(1, { [RETRY_NOW_ANNOTATION]: '1' }))
  await until(() => t.calls.length === 4 && t.clock.pending > 0)
  // Fresh attempts: it parks again after 3.
  await settle(t.clock, 5)
  await until(() => t.calls.length === 5 && t.clock.pending > 0)
  await settle(t.clock, 10)
  await until(() => t.calls.length === 6 && t.ctl.parked().length === 1)
  assert.equal(t.ctl.retryParked('shop/web'), true)
  assert.equal(t.ctl.retryParked('shop/web'), false, 'no longer parked')
  await until(() => t.calls.length === 7)
  await t.stop()
})

test('the time budget parks a key that keeps failing; a deletion re-arms it', async () => {
  const t = setup(() => new Error('still failing'), {
    retryPolicy: defaultRetryPolicy({ random: () => 0, parkAfterMs: 60_000, maxDelayMs: 10_000 }),
  })
  t.primary.add(app(1))
  for (let i = 0; i < 20 && t.ctl.parked().length === 0; i++) await settle(t.clock, 10_000)
  assert.equal(t.ctl.parked()[0]?.reason, 'time_budget')
  const before = t.calls.length
  t.primary.delete(app(1))
  await until(() => t.calls.length === before + 1)
  await t.stop()
})

test('at the cap a key is not parked: it keeps retrying and the overflow is counted', async () => {
  const t = setup(invalid, { maxParkedKeys: 0 })
  t.primary.add(app(1))
  await until(() => t.calls.length === 1)
  await settle(t.clock)
  assert.deepEqual(t.ctl.parked(), [])
  assert.match(t.registry.render(), /edgeop_controller_park_overflow_total\{controller="apps"\} 1/)
  t.owned.add(t.child())
  // Not parked: any event reconciles it, as before parking existed.
  await until(() => t.calls.length === 2)
  await t.stop()
})

test('F3: an owned object event re-arms a parked owner (a child deleted or changed by someone else)', async () => {
  let n = 0
  const t = setup(() => (n++ === 0 ? invalid() : undefined))
  t.primary.add(app(1))
  await until(() => t.ctl.parked().length === 1)
  t.owned.delete(t.child())
  await until(() => t.calls.length === 2)
  assert.deepEqual(t.ctl.parked(), [])
  await t.stop()
})

test('F3: an event of a mapped watch that maps to a parked key re-arms it; a resync of the same version does not', async () => {
  const related = new Source()
  let n = 0
  const t = setup(() => (n++ === 0 ? invalid() : undefined), {
    watches: [{ source: related, map: () => [{ namespace: 'shop', name: 'web' }] }],
  })
  t.primary.add(app(1))
  await until(() => t.ctl.parked().length === 1)
  related.update(relatedObject('5'), relatedObject('5'))
  await settle(t.clock, 1000)
  assert.equal(t.calls.length, 1, 'a resync (same resourceVersion) is no change: it stays parked')
  related.update(relatedObject('5'), relatedObject('6', 'a'))
  await until(() => t.calls.length === 2)
  assert.deepEqual(t.ctl.parked(), [])
  await t.stop()
})

test('F3: a mapped event during the reconcile that fails keeps the key from parking: it runs again', async () => {
  const related = new Source()
  let calls = 0
  let release: () => void = () => {}
  const t = setup(() => undefined, {
    watches: [{ source: related, map: () => [{ namespace: 'shop', name: 'web' }] }],
    reconcile: async () => {
      if (++calls > 1) return
      await new Promise<void>((r) => {
        release = r
      })
      throw invalid()
    },
  })
  t.primary.add(app(1))
  await until(() => calls === 1)
  related.update(relatedObject('5'), relatedObject('6', 'a'))
  release()
  await until(() => calls === 2)
  assert.deepEqual(t.ctl.parked(), [])
  await t.stop()
})

/** An App that records on itself that it is parked (as a Degraded/Parked condition would), at `generation`. */
const parkedApp = (
  generation: number,
  observedGeneration = generation,
  rv = generation * 10 + 1,
): KubeObject => ({
  ...app(generation),
  metadata: { ...app(generation).metadata, resourceVersion: String(rv) },
  status: { parked: { observedGeneration, reason: 'no_retry', attempts: 1, at: '2026-12-01T00:00:00Z' } },
})
const fromStatus = (obj: KubeObject) => {
  const p = (obj as { status?: { parked?: { observedGeneration: number; attempts: number; at: string } } })
    .status?.parked
  if (!p || p.observedGeneration !== obj.metadata.generation) return undefined
  return {
    reason: 'no_retry' as const,
    errorClass: 'invalid',
    lastError: 'recorded on the object',
    attempts: p.attempts,
    parkedAt: Date.parse(p.at),
  }
}

test('a restart: a key whose object records that it is parked is parked from the initial list, without a reconcile', async () => {
  const t = setup(() => undefined, { parkedFrom: fromStatus })
  for (const h of t.primary.handlers) h.onAdd?.(parkedApp(1), true)
  await settle(t.clock, 1000)
  assert.equal(t.calls.length, 0, 'nothing reconciled: it was parked before the restart')
  assert.deepEqual(
    t.ctl.parked().map((e) => [e.key, e.reason, e.errorClass, e.lastError, e.lastFailure]),
    [['shop/web', 'no_retry', 'invalid', '"recorded on the object"', '2026-12-01T00:00:00.000Z']],
  )
  assert.match(t.registry.render(), /edgeop_controller_parked_keys\{controller="apps",reason="no_retry"\} 1/)
  // Replayable as before: the retry-now annotation re-arms it, and the record, still there, does not park it again.
  const annotated = {
    ...parkedApp(1),
    metadata: { ...parkedApp(1).metadata, annotations: { [RETRY_NOW_ANNOTATION]: '1' } },
  }
  t.primary.update(parkedApp(1), annotated)
  await until(() => t.calls.length === 1)
  t.primary.update(annotated, { ...annotated, metadata: { ...annotated.metadata, resourceVersion: '99' } })
  await settle(t.clock, 1000)
  assert.deepEqual(t.ctl.parked(), [], 'a stale record does not undo a re-arm')
  await t.stop()
})

test('a record of an older generation parks nothing: the object changed while the process was down', async () => {
  const t = setup(() => undefined, { parkedFrom: fromStatus })
  for (const h of t.primary.handlers) h.onAdd?.(parkedApp(2, 1), true)
  await until(() => t.calls.length === 1)
  assert.deepEqual(t.ctl.parked(), [])
  await t.stop()
})

test('a standby replica: a park recorded by the leader reaches its parked view, and its removal leaves it', async () => {
  const t = setup(() => undefined, { parkedFrom: fromStatus })
  t.primary.add(app(1))
  await until(() => t.calls.length === 1)
  // Another replica (the leader) parked it and wrote the record; this one sees the status update.
  t.primary.update(app(1), parkedApp(1))
  await settle(t.clock, 1000)
  assert.deepEqual(
    t.ctl.parked().map((e) => e.key),
    ['shop/web'],
  )
  assert.equal(t.calls.length, 1)
  // The leader re-armed and reconciled it: the record is gone.
  t.primary.update(parkedApp(1), { ...app(1), metadata: { ...app(1).metadata, resourceVersion: '30' } })
  await settle(t.clock, 1000)
  assert.deepEqual(t.ctl.parked(), [])
  await t.stop()
})

test('a finalizer that keeps failing is never parked: it retries every FINALIZER_RETRY_INTERVAL_MS, and onFailure says how long the deletion has waited', async () => {
  const t = setup(invalid, { retryPolicy: defaultRetryPolicy({ random: () => 0, maxAttempts: 2 }) })
  const deletedAt = t.clock.now()
  const deleting: KubeObject = {
    ...app(1),
    metadata: {
      ...app(1).metadata,
      deletionTimestamp: new Date(deletedAt).toISOString(),
      finalizers: ['example.com/cleanup'],
    },
  }
  t.primary.add(deleting)
  await until(() => t.calls.length === 1 && t.reports.length === 1)
  assert.deepEqual(t.ctl.parked(), [], 'a 422 parks anything else at once')
  assert.equal(t.reports[0]!.finalizerWaitingMs, 0)
  await settle(t.clock, FINALIZER_RETRY_INTERVAL_MS - 1)
  assert.equal(t.calls.length, 1, 'not before the interval')
  await settle(t.clock, 1)
  await until(() => t.calls.length === 2 && t.reports.length === 2)
  for (let i = 3; i <= 5; i++) {
    await settle(t.clock, FINALIZER_RETRY_INTERVAL_MS)
    await until(() => t.calls.length === i)
  }
  assert.deepEqual(t.ctl.parked(), [])
  await until(() => t.reports.length === 5)
  assert.equal(t.reports[4]!.finalizerWaitingMs, 4 * FINALIZER_RETRY_INTERVAL_MS)
  await t.stop()
})
