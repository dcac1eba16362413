/**
 * The Bucket controller against a real etcd + kube-apiserver started by `edgeop/testing`, with the
 * CRD generated from its zod schemas and the in-memory storage system passed in:
 *
 *     npm run build && node --test examples/bucket-finalizer/bucket.test.ts
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { isNotFound, Manager } from 'edgeop'
import { noopLogger } from 'edgeop/core'
import { eventually, startTestEnvironment, type TestEnvironment, waitFor } from 'edgeop/testing'
import { addBucketController, BUCKET_FINALIZER, BUCKETS, type Bucket, bucketCrd } from './bucket.ts'
import { InMemoryBucketStore } from './bucket-store.ts'

let env: TestEnvironment
const store = new InMemoryBucketStore()
const stop = new AbortController()
let running: Promise<void> | undefined

before(async () => {
  env = await startTestEnvironment({ crds: [bucketCrd] })
  const manager = new Manager({
    client: env.client,
    metricsBindAddress: '0',
    healthProbeBindAddress: '0',
    logger: noopLogger, // the failing cleanups below would otherwise log their errors
  })
  addBucketController(manager, store)
  running = manager.run(stop.signal)
})

after(async () => {
  stop.abort()
  await running
  await env?.stop()
})

/** True once `ns/name` is not found; other errors reject. */
async function gone(ns: string, name: string): Promise<boolean> {
  try {
    await env.client.resource<Bucket>(BUCKETS, ns).get(name)
    return false
  } catch (err) {
    if (isNotFound(err)) return true
    throw err
  }
}

test('a new Bucket gets the finalizer, an entry in the store, and its URL in status', async () => {
  const ns = await env.createNamespace('bucket')
  await env.client.resource<Bucket>(BUCKETS, ns).create({
    apiVersion: 'storage.example.com/v1alpha1',
    kind: 'Bucket',
    metadata: { name: 'photos' },
    spec: { storageClass: 'archive' },
  })
  const bucket = await waitFor<Bucket>(env.client, BUCKETS, 'photos', (b) => b.status?.url !== undefined, {
    namespace: ns,
  })
  assert.deepEqual(bucket.metadata.finalizers, [BUCKET_FINALIZER])
  assert.equal(bucket.status?.url, `memory://${ns}.photos`)
  assert.equal(store.buckets.get(`${ns}.photos`), 'archive')
})

test('the finalizer holds a deleted Bucket while cleanup fails, retries, and lets go once it succeeds', async () => {
  const ns = await env.createNamespace('bucket-delete')
  const buckets = env.client.resource<Bucket>(BUCKETS, ns)
  await buckets.create({
    apiVersion: 'storage.example.com/v1alpha1',
    kind: 'Bucket',
    metadata: { name: 'logs' },
    spec: { storageClass: 'standard' },
  })
  await waitFor<Bucket>(env.client, BUCKETS, 'logs', (b) => b.status?.url !== undefined, { namespace: ns })
  assert.ok(store.buckets.has(`${ns}.logs`))

  store.failRemovals = true
  const failedBefore = store.failedRemovals
  await buckets.delete('logs')
  // Cleanup throws; the controller retries with per-item backoff (5 ms, 10 ms, …).
  await eventually(() => store.failedRemovals >= failedBefore + 3, { what: 'three failed cleanups' })
  const held = await buckets.get('logs')
  assert.ok(held.metadata.deletionTimestamp, 'deletion requested')
  assert.deepEqual(held.metadata.finalizers, [BUCKET_FINALIZER], 'the finalizer still holds it')
  assert.ok(store.buckets.has(`${ns}.logs`), 'the external bucket still exists')

  store.failRemovals = false
  await eventually(() => gone(ns, 'logs'), { what: 'Bucket logs deleted' })
  assert.equal(store.buckets.has(`${ns}.logs`), false, 'cleanup ran before the Bucket went')
})
