/**
 * @module object-reference-schema — references to other objects as zod schemas for a CRD's spec or
 * status: by name in the same namespace, or by kind, name and namespace anywhere.
 */
import * as z from 'zod/mini'

/** A name the apiserver accepts for an object: not empty (each kind checks its own format). */
const NAME = z.string().check(z.minLength(1), z.meta({ description: 'Name of the referenced object.' }))

/**
 * An object of a kind the field implies, in the referring object's namespace: `{ name }`, as
 * core/v1 `LocalObjectReference` (e.g. a Secret's name).
 */
export const LocalObjectReferenceSchema = z.object({ name: NAME })

/**
 * An object of any kind: `apiVersion` and `kind` (optional where the field implies them), `name`,
 * and `namespace` (absent: the referring object's, or a cluster-scoped object). The fields of
 * core/v1 `ObjectReference` an operator sets; `uid`, `resourceVersion` and `fieldPath` are left out.
 *
 * @example
 * const BackupSpec = z.object({ target: ObjectReferenceSchema, credentials: LocalObjectReferenceSchema })
 */
export const ObjectReferenceSchema = z.object({
  apiVersion: z.optional(z.string()),
  kind: z.optional(z.string()),
  name: NAME,
  namespace: z.optional(z.string()),
})
