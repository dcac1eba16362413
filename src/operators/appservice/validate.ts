/**
 * @module validate — whether an AppService's spec can be honoured, and if not, one message saying why. Pure.
 *
 * Two layers: the zod schema (the same one the CRD is generated from, since the CRD
 * installed in a cluster may be older or looser than this operator), then what no
 * OpenAPI schema expresses ({@link unusableSpec}).
 */
import * as z from 'zod/mini'
import { AppServiceSpec } from './api.ts'

/** Container image references: lowercase repository path, optional registry port, tag and digest. */
const IMAGE_REFERENCE =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/

/** A database class as the external database service names them. */
const DATABASE_CLASS = /^[a-z0-9-]{1,63}$/

/** The verdict on a spec: usable (with defaults filled in), or a message naming each unusable field. */
export type SpecCheck = { ok: true; spec: AppServiceSpec } | { ok: false; problem: string }

/**
 * What the schema cannot check but the reconciler cannot honour. Returns a message
 * naming the field, or undefined when the spec is usable.
 */
export function unusableSpec(spec: AppServiceSpec): string | undefined {
  if (!IMAGE_REFERENCE.test(spec.image))
    return `spec.image ${JSON.stringify(spec.image)} is not a valid image reference`
  if (
    spec.database?.enabled &&
    spec.database.class !== undefined &&
    !DATABASE_CLASS.test(spec.database.class)
  ) {
    return `spec.database.class ${JSON.stringify(spec.database.class)} must be 1-63 lowercase letters, digits or dashes`
  }
  return undefined
}

/**
 * Checks a raw `spec` (absent counts as `{}`): schema issues first, each as
 * `spec.<path>: <message>` joined by `; `, then {@link unusableSpec}.
 */
export function validateSpec(raw: unknown): SpecCheck {
  const parsed = z.safeParse(AppServiceSpec, raw ?? {})
  if (!parsed.success) {
    const problem = parsed.error.issues
      .map((i) => `spec.${i.path.map(String).join('.')}: ${i.message}`)
      .join('; ')
    return { ok: false, problem }
  }
  const problem = unusableSpec(parsed.data)
  return problem === undefined ? { ok: true, spec: parsed.data } : { ok: false, problem }
}
