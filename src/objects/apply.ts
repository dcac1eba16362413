/**
 * @module apply — server-side apply of desired children, writing only on drift.
 */

import type { ResourceClient } from '../client/resource-client.ts'
import type { KubeObject } from '../core/types.ts'

/**
 * True when every field set in `desired` has the same value in `live` (objects
 * compared key by key, arrays element by element with equal length). Fields the
 * server defaults or other managers own, present only in `live`, are ignored.
 */
export function isSubset(desired: unknown, live: unknown): boolean {
  if (desired === live) return true
  if (desired === null || typeof desired !== 'object') return false
  if (live === null || typeof live !== 'object') return false
  if (Array.isArray(desired)) {
    if (!Array.isArray(live) || live.length !== desired.length) return false
    return desired.every((d, i) => isSubset(d, live[i]))
  }
  if (Array.isArray(live)) return false
  for (const [k, v] of Object.entries(desired)) {
    if (v === undefined) continue
    // Own keys only: a live object without `__proto__` does not hold Object.prototype there.
    if (!isSubset(v, Object.hasOwn(live, k) ? (live as Record<string, unknown>)[k] : undefined)) return false
  }
  return true
}

/** What {@link applyIfDrifted} did. */
export interface ApplyOutcome<T> {
  /** False when the live object already matched: no request was made. */
  written: boolean
  /** The object as the server returned it after the apply, or the live object when nothing was written. */
  object: T
}

/**
 * Applies `desired` with server-side apply under `fieldManager` (forcing ownership
 * of the fields it sets, as controllers should) unless `live` already holds every
 * desired value. Fields `desired` omits are left to their owners; fields this
 * manager stops setting are removed by the server (SSA semantics).
 *
 * Caveat: the subset check compares values as the server returns them; desired values
 * the server normalises (e.g. `cpu: 1000m` → `1`) would look drifted every time, so
 * write them in canonical form.
 */
export async function applyIfDrifted<T extends KubeObject>(
  client: ResourceClient<T>,
  desired: T,
  live: T | undefined,
  fieldManager: string,
  signal?: AbortSignal,
): Promise<ApplyOutcome<T>> {
  if (live && isSubset(stripMeta(desired), live)) return { written: false, object: live }
  const object = await client.apply(desired, { fieldManager, force: true, signal })
  return { written: true, object }
}

/** Desired metadata without what the server owns (resourceVersion, uid, …). */
function stripMeta<T extends KubeObject>(o: T): T {
  const {
    resourceVersion: _rv,
    uid: _uid,
    generation: _g,
    creationTimestamp: _c,
    managedFields: _m,
    ...meta
  } = o.metadata
  return { ...o, metadata: meta }
}
