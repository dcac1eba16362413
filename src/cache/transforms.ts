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

/** Freezes an object and everything inside it, so cached state cannot be mutated by accident. */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  for (const v of Object.values(value as object)) deepFreeze(v)
  return Object.freeze(value)
}
