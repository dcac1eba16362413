/**
 * @module conditions — `status.conditions` as a list-map keyed by type, written only on change.
 */

import type { ResourceClient } from '../client/resource-client.ts'
import type { Condition, KubeObject } from '../core/types.ts'

/** A condition to set; `lastTransitionTime` is managed by {@link setCondition}. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'>

/**
 * Returns `conditions` with `input` set (metav1 `SetStatusCondition` semantics):
 * `lastTransitionTime` changes only when the status changes; reason, message and
 * observedGeneration are updated in place. The input array is not modified.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  now: Date,
): Condition[] {
  const list = [...(conditions ?? [])]
  const i = list.findIndex((c) => c.type === input.type)
  const existing = i >= 0 ? list[i] : undefined
  const lastTransitionTime =
    existing && existing.status === input.status ? existing.lastTransitionTime : rfc3339(now)
  const next: Condition = { ...input, lastTransitionTime }
  if (existing) list[i] = next
  else list.push(next)
  return list
}

/** The condition of `type`, if any. */
export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type)
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(d: Date): string {
  return `${d.toISOString().slice(0, 19)}Z`
}

/** Structural equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a))
    return a.length === (b as unknown[]).length && a.every((v, i) => jsonEqual(v, (b as unknown[])[i]))
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined)
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined)
  // Own keys only: `b.__proto__` or `b.constructor` of a key `b` lacks is not a value of `b`.
  return (
    ka.length === kb.length &&
    ka.every(
      (k) =>
        Object.hasOwn(b, k) &&
        jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
    )
  )
}

/**
 * Writes `status` to the status subresource (a merge patch) only if it differs
 * semantically from the object's current status. Returns the object as the server
 * answered the write, or undefined when nothing was written.
 *
 * The comparison is with `obj`, so pass the latest version known: after a write of your
 * own, the cache may still hold the version before it, and a status equal to that older
 * one would then not be written (`LiveCheck.remember` keeps track of such answers).
 */
export async function updateStatusIfChanged<T extends KubeObject>(
  client: ResourceClient<T>,
  obj: T,
  status: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<T | undefined> {
  const current = (obj.status ?? {}) as Record<string, unknown>
  if (jsonEqual(current, status)) return undefined
  // A merge patch keeps keys it does not mention: null out the ones that went away. Own keys, set
  // as data properties: `constructor` and `__proto__` are keys as real as any.
  const gone = Object.keys(current).filter((k) => !Object.hasOwn(status, k))
  const patch = Object.fromEntries([...Object.entries(status), ...gone.map((k) => [k, null])])
  return client.patch(obj.metadata.name!, { status: patch }, 'merge', {
    namespace: obj.metadata.namespace,
    subresource: 'status',
    signal,
  })
}
