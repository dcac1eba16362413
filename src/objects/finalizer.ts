/**
 * @module finalizer — add and remove finalizers safely, and run cleanup before deletion.
 */

import type { JsonPatchOp, ResourceClient } from '../client/resource-client.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import { isConflict, isInvalid, isNotFound } from '../transport/api-error.ts'

/** Attempts before giving up on concurrent writers (client-go `retry.DefaultRetry` has 5 steps). */
export const FINALIZER_PATCH_ATTEMPTS = 5

/**
 * Patches `metadata.finalizers` guarded by a JSON-patch `test` of the resourceVersion
 * the change was computed from, so a concurrent writer's finalizers are never lost:
 * on a failed guard the object is read again and the change recomputed.
 * Returns the updated object, or undefined when the object is gone.
 */
async function patchFinalizers<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  change: (current: readonly string[]) => string[] | undefined,
  signal?: AbortSignal,
): Promise<T | undefined> {
  let current: T = obj
  for (let attempt = 1; ; attempt++) {
    const list = current.metadata.finalizers ?? []
    const next = change(list)
    if (next === undefined) return current
    const ops: JsonPatchOp[] = [
      { op: 'test', path: '/metadata/resourceVersion', value: current.metadata.resourceVersion },
      {
        op: list.length === 0 && current.metadata.finalizers === undefined ? 'add' : 'replace',
        path: '/metadata/finalizers',
        value: next,
      },
    ]
    try {
      return await client.patch(current.metadata.name!, ops, 'json', {
        namespace: current.metadata.namespace,
        signal,
      })
    } catch (err) {
      if (isNotFound(err)) return undefined
      // A failed `test` is 422 Invalid (or 409 from some servers): someone else wrote first.
      if (!(isConflict(err) || isInvalid(err)) || attempt >= FINALIZER_PATCH_ATTEMPTS) throw err
      try {
        current = await client.get(current.metadata.name!, {
          namespace: current.metadata.namespace,
          signal,
        })
      } catch (e) {
        if (isNotFound(e)) return undefined
        throw e
      }
    }
  }
}

/** Adds `finalizer` if missing. Returns the object as written (or unchanged). */
export function ensureFinalizer<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  finalizer: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  return patchFinalizers(client, obj, (l) => (l.includes(finalizer) ? undefined : [...l, finalizer]), signal)
}

/** Removes `finalizer` if present. A missing object counts as done. */
export function removeFinalizer<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  finalizer: string,
  signal?: AbortSignal,
): Promise<T | undefined> {
  return patchFinalizers(
    client,
    obj,
    (l) => (l.includes(finalizer) ? l.filter((f) => f !== finalizer) : undefined),
    signal,
  )
}

/** What {@link finalize} did. */
export type FinalizeOutcome<T> =
  /** Not being deleted: the finalizer is in place; go on reconciling `object`. */
  | { deleting: false; object: T }
  /** Being deleted: cleanup succeeded and the finalizer is gone (or was never ours). Stop. */
  | { deleting: true }

/**
 * The finalizer protocol (kube-rs `finalizer()`, controller-runtime's usual pattern):
 * - alive object: make sure our finalizer is present **before** anything external is
 *   created, then return it for the normal reconcile;
 * - deleting object with our finalizer: run `cleanup` (idempotent; "already gone"
 *   must count as done), and only after it succeeds remove the finalizer. If cleanup
 *   throws, the finalizer stays and the error propagates (the controller retries).
 */
export async function finalize<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  finalizer: string,
  cleanup: (obj: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<FinalizeOutcome<T>> {
  const has = obj.metadata.finalizers?.includes(finalizer) ?? false
  if (obj.metadata.deletionTimestamp) {
    if (!has) return { deleting: true }
    await cleanup(obj)
    await removeFinalizer(client, obj, finalizer, signal)
    return { deleting: true }
  }
  const written = has ? obj : await ensureFinalizer(client, obj, finalizer, signal)
  if (!written)
    throw new EdgeopError(
      'EDGEOP_ERR_RECONCILE',
      `${obj.metadata.name} disappeared while adding finalizer ${finalizer}`,
      { step: 'add finalizer', retryable: true },
    )
  return { deleting: false, object: written }
}
