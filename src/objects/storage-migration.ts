/**
 * @module storage-migration — rewrites every stored object of a CRD in its storage version, then trims
 * `status.storedVersions` to that version alone (what kube-storage-version-migrator does, in-process).
 *
 * An update that changes nothing still makes the apiserver write the object when the bytes it would
 * store differ from those stored — and an object stored in an older version is encoded differently
 * (its `apiVersion` at least) — so a PUT of the object as read, with its `resourceVersion`, moves it
 * to the storage version; an object already there is a no-op the apiserver does not write. A
 * conflict means someone wrote the object since it was read, which stored it in the storage version
 * too; a 404 means it is gone: both count as done. Only when every page was rewritten is
 * `storedVersions` trimmed, so an interrupted run leaves it as it was and a rerun (from the start, or
 * from the last page's `continue` token) completes it: every step is idempotent.
 */
// From their files, not the client barrel: the barrel would make edgeop/objects load the whole client
// (transport, undici, the protobuf tables) for three predicates and a table of types.
import type { KubeClient } from '../client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../client/resource.ts'
import type { KubeObject } from '../core/index.ts'
import { isConflict, isGoneOrExpired, isNotFound } from '../transport/api-error.ts'

/**
 * Objects per page: 500, client-go's pager default (`defaultPageSize`), the size kube-storage-version-
 * migrator lists by as well; an AppService is ~1 KB, so a page stays well under a megabyte.
 */
export const DEFAULT_MIGRATION_CHUNK_SIZE = 500

/** Options of {@link migrateStorage}. */
export interface StorageMigrationOptions {
  /** Admin rights on the CRD (`customresourcedefinitions/status`) and update on its objects. */
  client: Pick<KubeClient, 'resource'>
  /** The CRD's name, e.g. `appservices.platform.example.com`. */
  crd: string
  /** Objects per list page; default {@link DEFAULT_MIGRATION_CHUNK_SIZE}. */
  chunkSize?: number
  /** Resume from this page (a `continue` token an earlier run reported); an expired one restarts from the first page. */
  continue?: string
  /** Stops between objects (the run then rejects; rerun to finish). */
  signal?: AbortSignal
  /** Told after each page: objects done so far and the next page's token (undefined after the last). */
  onPage?(progress: StorageMigrationResult & { continue: string | undefined }): void
}

/** What {@link migrateStorage} did. */
export interface StorageMigrationResult {
  /** The CRD's storage version. */
  storageVersion: string
  /** Objects the apiserver wrote (their resourceVersion changed). */
  rewritten: number
  /** Objects already in the storage version (no-op updates), changed meanwhile (conflict), or gone. */
  unchanged: number
  /** `status.storedVersions` before the run; after it, `[storageVersion]`. */
  storedVersions: string[]
}

type Crd = KubeObject & {
  spec: {
    group: string
    scope: string
    names: { plural: string; kind: string }
    versions: { name: string; storage: boolean }[]
  }
  status?: { storedVersions?: string[] }
}

/**
 * Migrates the objects of `crd` to its storage version and trims `status.storedVersions` (nothing to do
 * when it already holds that version alone).
 *
 * @throws the first failed request (an `ApiError`), or the signal's reason; `storedVersions` is then
 * unchanged and a rerun continues.
 */
export async function migrateStorage(o: StorageMigrationOptions): Promise<StorageMigrationResult> {
  const crds = o.client.resource(CORE_TYPES.customResourceDefinitions)
  const crd = (await crds.get(o.crd)) as Crd
  const storageVersion = crd.spec.versions.find((v) => v.storage)!.name
  const storedVersions = crd.status?.storedVersions ?? []
  const done = { storageVersion, rewritten: 0, unchanged: 0, storedVersions }
  if (storedVersions.length === 1 && storedVersions[0] === storageVersion) return done
  const type: ResourceType = {
    group: crd.spec.group,
    version: storageVersion,
    resource: crd.spec.names.plural,
    namespaced: crd.spec.scope === 'Namespaced',
    kind: crd.spec.names.kind,
  }
  const objects = o.client.resource(type)
  let cont = o.continue
  for (;;) {
    let page: Awaited<ReturnType<typeof objects.list>>
    try {
      page = await objects.list({
        limit: o.chunkSize ?? DEFAULT_MIGRATION_CHUNK_SIZE,
        continue: cont || undefined,
      })
    } catch (err) {
      if (!cont || !isGoneOrExpired(err)) throw err
      cont = undefined // the token expired: start over (done objects are no-ops now)
      continue
    }
    for (const item of page.items) {
      o.signal?.throwIfAborted()
      try {
        const after = await objects.update(item)
        if (after.metadata.resourceVersion === item.metadata.resourceVersion) done.unchanged++
        else done.rewritten++
      } catch (err) {
        if (!isConflict(err) && !isNotFound(err)) throw err
        done.unchanged++
      }
    }
    cont = page.metadata?.continue || undefined
    o.onPage?.({ ...done, continue: cont })
    if (!cont) break
  }
  await crds.patch(o.crd, { status: { storedVersions: [storageVersion] } }, 'merge', {
    subresource: 'status',
  })
  return done
}
