/**
 * LeaseLock against an in-memory Lease API with the apiserver's resourceVersion check: what it sends,
 * and what it keeps when a call fails.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { CallOptions } from '../../src/client/call-options.ts'
import { isEdgeopError } from '../../src/core/errors.ts'
import type { Lease } from '../../src/core/types.ts'
import { type LeaseApi, LeaseLock } from '../../src/leader/lease-lock.ts'
import { isAlreadyExists, isConflict } from '../../src/transport/api-error.ts'
import { apiError } from './support.ts'

/** One Lease, RV-checked like the apiserver; records every request; can fail the next calls. */
class FakeLeaseApi implements LeaseApi {
  stored: Lease | undefined
  rv = 100
  readonly requests: { verb: string; body?: Lease; options?: CallOptions }[] = []
  readonly failures: unknown[] = []

  async get(name: string, options?: CallOptions): Promise<Lease> {
    this.requests.push({ verb: `get ${name}`, ...(options ? { options } : {}) })
    this.#maybeFail()
    if (this.stored === undefined) throw apiError(404, 'NotFound')
    return structuredClone(this.stored)
  }

  async create(lease: Lease, options?: CallOptions): Promise<Lease> {
    this.requests.push({ verb: 'create', body: structuredClone(lease), ...(options ? { options } : {}) })
    this.#maybeFail()
    if (this.stored !== undefined) throw apiError(409, 'AlreadyExists', 'POST')
    this.stored = {
      ...structuredClone(lease),
      metadata: { ...lease.metadata, resourceVersion: String(++this.rv), uid: 'u1' },
    }
    return structuredClone(this.stored)
  }

  async update(lease: Lease, options?: CallOptions): Promise<Lease> {
    this.requests.push({ verb: 'update', body: structuredClone(lease), ...(options ? { options } : {}) })
    this.#maybeFail()
    if (lease.metadata.resourceVersion !== this.stored?.metadata.resourceVersion)
      throw apiError(409, 'Conflict', 'PUT')
    this.stored = {
      ...structuredClone(lease),
      metadata: { ...lease.metadata, resourceVersion: String(++this.rv) },
    }
    return structuredClone(this.stored)
  }

  /** Someone else writes the Lease. */
  touch(): void {
    this.stored = {
      ...this.stored!,
      metadata: { ...this.stored!.metadata, resourceVersion: String(++this.rv) },
    }
  }

  #maybeFail(): void {
    const f = this.failures.shift()
    if (f !== undefined) throw f
  }
}

const RECORD = {
  holderIdentity: 'pod-a',
  leaseDurationSeconds: 15,
  acquireTime: '2026-11-29T10:00:00.000001Z',
  renewTime: '2026-11-29T10:00:00.000001Z',
  leaderTransitions: 0,
}

function lock(api: FakeLeaseApi, extra: { labels?: Record<string, string>; timeoutMs?: number } = {}) {
  return new LeaseLock(api, { namespace: 'ops', name: 'my-operator', identity: 'pod-a', ...extra })
}

test('get of a missing Lease resolves undefined; create sends a whole coordination.k8s.io/v1 Lease', async () => {
  const api = new FakeLeaseApi()
  const l = lock(api, { labels: { app: 'op' } })
  assert.equal(l.describe(), 'ops/my-operator')
  assert.equal(await l.get(), undefined)
  await l.create(RECORD)
  assert.deepEqual(api.requests[1]!.body, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'my-operator', namespace: 'ops', labels: { app: 'op' } },
    spec: {
      holderIdentity: 'pod-a',
      leaseDurationSeconds: 15,
      acquireTime: '2026-11-29T10:00:00.000001Z',
      renewTime: '2026-11-29T10:00:00.000001Z',
      leaseTransitions: 0,
    },
  })
  assert.deepEqual(await l.get(), RECORD)
})

test('update PUTs the last-read object (its resourceVersion and metadata) with the spec replaced', async () => {
  const api = new FakeLeaseApi()
  api.stored = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: 'my-operator',
      namespace: 'ops',
      resourceVersion: '7',
      annotations: { keep: 'me' },
      labels: { a: '1' },
    },
    spec: { holderIdentity: 'old', leaseDurationSeconds: 15, leaseTransitions: 2 },
  }
  const l = lock(api, { labels: { b: '2' } })
  assert.equal((await l.get())!.holderIdentity, 'old')
  await l.update({ ...RECORD, leaderTransitions: 3 })
  const put = api.requests.at(-1)!.body!
  assert.equal(put.metadata.resourceVersion, '7')
  assert.deepEqual(put.metadata.annotations, { keep: 'me' })
  assert.deepEqual(put.metadata.labels, { a: '1', b: '2' }, 'labels merged')
  assert.deepEqual(put.spec, { ...recordSpec(RECORD), leaseTransitions: 3 })
  // The next update carries the RV the server returned.
  await l.update(RECORD)
  assert.equal(api.requests.at(-1)!.body!.metadata.resourceVersion, '101')
  assert.equal(api.stored.metadata.resourceVersion, '102')
})

test('a write between our read and our update → 409 Conflict', async () => {
  const api = new FakeLeaseApi()
  const l = lock(api)
  await l.create(RECORD)
  api.touch()
  await assert.rejects(l.update(RECORD), (e: unknown) => isConflict(e))
  await assert.rejects(l.create(RECORD), (e: unknown) => isAlreadyExists(e))
})

test('update before any get/create fails with EDGEOP_ERR_LEADER "not initialized" and sends nothing', async () => {
  const api = new FakeLeaseApi()
  await assert.rejects(
    lock(api).update(RECORD),
    (e: unknown) => isEdgeopError(e, 'EDGEOP_ERR_LEADER') && /not initialized/.test((e as Error).message),
  )
  assert.equal(api.requests.length, 0)
})

test('kubernetes/kubernetes#95939: a failed update keeps the cached Lease: the next update is sent with the same resourceVersion', async () => {
  const api = new FakeLeaseApi()
  const l = lock(api)
  await l.create(RECORD)
  const rv = api.stored!.metadata.resourceVersion
  for (const failure of [
    apiError(500, 'InternalError', 'PUT'),
    apiError(409, 'Conflict', 'PUT'),
    new Error('socket hang up'),
  ]) {
    api.failures.push(failure)
    await assert.rejects(l.update(RECORD), (e: unknown) => e === failure)
    assert.equal(api.requests.at(-1)!.body!.metadata.resourceVersion, rv)
  }
  await l.update({ ...RECORD, holderIdentity: '' })
  assert.equal(
    api.requests.at(-1)!.body!.metadata.resourceVersion,
    rv,
    'still the cached object, not "not initialized"',
  )
  assert.equal(api.stored!.spec!.holderIdentity, '')
})

test('a failed get keeps the cached Lease too; a get refreshes it', async () => {
  const api = new FakeLeaseApi()
  const l = lock(api)
  await l.create(RECORD)
  api.touch()
  api.failures.push(apiError(503, 'ServiceUnavailable'))
  await assert.rejects(l.get())
  await assert.rejects(l.update(RECORD), (e: unknown) => isConflict(e), 'the stale cached RV')
  await l.get()
  await l.update(RECORD)
})

test('every call passes the signal and the per-call timeout', async () => {
  const api = new FakeLeaseApi()
  const l = lock(api, { timeoutMs: 1234 })
  const ac = new AbortController()
  await l.get(ac.signal)
  await l.create(RECORD, ac.signal)
  await l.update(RECORD, ac.signal)
  for (const r of api.requests) assert.deepEqual(r.options, { signal: ac.signal, timeoutMs: 1234 })
})

function recordSpec(r: typeof RECORD) {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime,
    renewTime: r.renewTime,
    leaseTransitions: r.leaderTransitions,
  }
}
