/**
 * @module predicates — drop events that cannot change a reconcile's outcome.
 *
 * Filtering is an optimisation, never a correctness tool: a reconciler must give the
 * same result whether or not an event was dropped (controller-runtime `predicate`).
 */
import type { KubeObject } from '../core/types.ts'

/** Decides per event whether to enqueue. Omitted methods pass everything. */
export interface Predicate<T extends KubeObject = KubeObject> {
  /**
   * `metadata`: the methods read only `apiVersion`, `kind` and the metadata a compact store scans (see
   * `EventHandler.reads`); with every predicate and key function of a watch so marked, a compact store
   * decodes nothing to deliver its events. The predicates here all are.
   */
  readonly reads?: 'metadata'
  /** Whether the creation (or first sight) of `obj` enqueues. */
  create?(obj: T): boolean
  /** Whether the change from `oldObj` to `newObj` enqueues. */
  update?(oldObj: T, newObj: T): boolean
  /** Whether the deletion of `obj` enqueues. */
  delete?(obj: T): boolean
}

/**
 * Updates pass only when `metadata.generation` changed: spec edits, not status
 * writes, so a controller writing its own status does not wake itself up. Objects
 * without a generation (most built-ins' metadata-only changes) pass.
 */
export const generationChanged: Predicate = {
  reads: 'metadata',
  update: (a, b) => a.metadata.generation === undefined || a.metadata.generation !== b.metadata.generation,
}

/** Updates pass only when labels changed. */
export const labelsChanged: Predicate = {
  reads: 'metadata',
  update: (a, b) => !shallowEqual(a.metadata.labels, b.metadata.labels),
}

/** Updates pass only when annotations changed. */
export const annotationsChanged: Predicate = {
  reads: 'metadata',
  update: (a, b) => !shallowEqual(a.metadata.annotations, b.metadata.annotations),
}

/** Updates pass only when the resourceVersion changed (drops resync re-deliveries). */
export const resourceVersionChanged: Predicate = {
  reads: 'metadata',
  update: (a, b) => a.metadata.resourceVersion !== b.metadata.resourceVersion,
}

/** Passes when any of `preds` passes (for each event kind); reads only metadata when each of them does. */
export function anyOf<T extends KubeObject>(...preds: Predicate<T>[]): Predicate<T> {
  return {
    ...(readsMetadata(preds) ? { reads: 'metadata' as const } : {}),
    create: (o) => preds.some((p) => p.create?.(o) ?? true),
    update: (a, b) => preds.some((p) => p.update?.(a, b) ?? true),
    delete: (o) => preds.some((p) => p.delete?.(o) ?? true),
  }
}

/** Passes when all predicates pass (none: every event passes); the counterpart of {@link anyOf}. */
export function allOf<T extends KubeObject>(...preds: Predicate<T>[]): Predicate<T> {
  return {
    create: (o) => passes(preds, 'create', o),
    update: (a, b) => passes(preds, 'update', a, b),
    delete: (o) => passes(preds, 'delete', o),
  }
}

/** True when every predicate of `preds` passes the event (a predicate without its method passes). */
export function passes<T extends KubeObject>(
  preds: readonly Predicate<T>[],
  kind: 'create' | 'delete',
  obj: T,
): boolean
export function passes<T extends KubeObject>(
  preds: readonly Predicate<T>[],
  kind: 'update',
  obj: T,
  newObj: T,
): boolean
export function passes<T extends KubeObject>(
  preds: readonly Predicate<T>[],
  kind: 'create' | 'update' | 'delete',
  obj: T,
  newObj?: T,
): boolean {
  for (const p of preds) {
    const ok =
      kind === 'update'
        ? (p.update?.(obj, newObj as T) ?? true)
        : kind === 'create'
          ? (p.create?.(obj) ?? true)
          : (p.delete?.(obj) ?? true)
    if (!ok) return false
  }
  return true
}

/** Whether every one of `preds` reads only metadata. */
export function readsMetadata(preds: readonly Predicate<never>[]): boolean {
  return preds.every((p) => p.reads === 'metadata')
}

function shallowEqual(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {})
  const kb = Object.keys(b ?? {})
  return ka.length === kb.length && ka.every((k) => a?.[k] === b?.[k])
}
