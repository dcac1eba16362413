/**
 * @module bucket — a `Bucket` custom resource whose reconcile keeps an entry in an external
 * storage system, with a finalizer so that deleting the Bucket deletes the entry first.
 *
 * What it shows:
 * - the CRD written once as zod/mini schemas (`customResourceDefinition`);
 * - `finalize(...)`: the finalizer is on the object before anything external exists, and it
 *   comes off only after cleanup succeeded; a failing cleanup throws, so the controller retries
 *   with backoff while the object stays (with its `deletionTimestamp`);
 * - `LiveCheck`: before touching the external system, confirm that the cached object is the live
 *   one (after a fail-over the cache may be behind and would re-create what was just removed);
 * - status written with `updateStatusIfChanged` and the answer remembered by the check.
 */
import {
  type Controller,
  customResourceDefinition,
  finalize,
  type KubeObject,
  type Manager,
  type ResourceType,
  updateStatusIfChanged,
} from 'edgeop'
import { LiveCheck } from 'edgeop/objects'
import * as z from 'zod/mini'
import type { BucketStore } from './bucket-store.ts'

/** The Bucket's spec, as a schema: the TypeScript type and the CRD's openAPIV3Schema come from it. */
export const BucketSpec = z.object({
  storageClass: z._default(z.enum(['standard', 'archive']), 'standard'),
})

/** The Bucket's status. */
export const BucketStatus = z.object({
  url: z.optional(z.string()),
})

/** A Bucket object. */
export interface Bucket extends KubeObject {
  spec: z.infer<typeof BucketSpec>
  status?: z.infer<typeof BucketStatus>
}

/** Where Buckets are served. */
export const BUCKETS: ResourceType = {
  group: 'storage.example.com',
  version: 'v1alpha1',
  resource: 'buckets',
  namespaced: true,
  kind: 'Bucket',
}

/** The CustomResourceDefinition to install (`node examples/bucket-finalizer/main.ts crd`). */
export const bucketCrd = customResourceDefinition({
  group: BUCKETS.group,
  version: BUCKETS.version,
  kind: 'Bucket',
  plural: 'buckets',
  singular: 'bucket',
  scope: 'Namespaced',
  spec: BucketSpec,
  status: BucketStatus,
})

/** Our finalizer: while it is on a Bucket, the API server keeps the Bucket. */
export const BUCKET_FINALIZER = 'storage.example.com/bucket-cleanup'

/** The external id of a Bucket: unique per namespace and name. */
export const bucketId = (b: Bucket): string => `${b.metadata.namespace}.${b.metadata.name}`

/** Registers the Bucket controller with `manager`, managing buckets in `store`. */
export function addBucketController(manager: Manager, store: BucketStore): Controller<Bucket> {
  const buckets = manager.factory.informer<Bucket>({ type: BUCKETS })
  // One LiveCheck per process (per leadership term): it remembers confirmed resourceVersions.
  const live = new LiveCheck<Bucket>()
  // Options rather than `new Controller(...)`: the manager builds it with its clock and logger.
  return manager.add<Bucket>({
    name: 'bucket',
    for: { source: buckets, kind: 'Bucket', group: BUCKETS.group, namespaced: true },
    async reconcile({ namespace, name }, { signal }) {
      const key = `${namespace}/${name}`
      const api = manager.client.resource<Bucket>(BUCKETS, namespace)
      const cached = buckets.store.get(key)
      if (!cached) {
        live.forget(key) // gone, and our finalizer made sure its bucket went first
        return
      }
      // The cache may lag; act on the live object (or on nothing, when it is already gone).
      const { object } = await live.confirm(api, cached, signal)
      if (!object) return

      const outcome = await finalize(api, object, BUCKET_FINALIZER, (b) => store.remove(bucketId(b)), signal)
      if (outcome.deleting) return // cleanup done and finalizer removed (a throw above retries)
      live.remember(outcome.object) // our own write (the finalizer) is live by definition

      const url = await store.ensure(bucketId(outcome.object), outcome.object.spec.storageClass)
      const written = await updateStatusIfChanged(api, outcome.object, { url }, signal)
      if (written) live.remember(written)
    },
  })
}
