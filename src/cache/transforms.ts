/**
 * @module transforms — object transforms applied before objects are cached.
 */
import type { KubeObject } from '../core/types.ts'

/**
 * Drops `metadata.managedFields` (often half an object's bytes; controllers rarely
 * read them). Mutates and returns the freshly decoded object.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields !== undefined) delete obj.metadata.managedFields
  return obj
}

/**
 * Freezes an object and everything inside it, so cached state cannot be mutated by accident. Walks arrays by
 * index and objects with `for…in` (their enumerable properties; decoded API objects have no inherited ones),
 * not with `Object.values`, which allocates an array per object: chosen by measurement, see
 * docs/benchmarks.md#measurements-behind-the-source. Every informer event pays it.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) deepFreeze(value[i])
  } else {
    for (const k in value) deepFreeze((value as Record<string, unknown>)[k])
  }
  return Object.freeze(value)
}
