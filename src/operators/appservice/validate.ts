/**
 * @module validate — whether an AppService's spec can be honoured, and if not, one message saying why. Pure.
 *
 * Two layers: the zod schema (the same one the CRD is generated from, since the CRD installed in a
 * cluster may be older or looser than this operator: every bound and every CEL rule with a `test` gives
 * the apiserver's message; transition rules need the old spec, so only the apiserver enforces them),
 * then what the CRD leaves to the operator ({@link unusableSpec}).
 */
import { validateAgainst } from '../../objects/index.ts'
import { AppServiceSpec } from './api.ts'

/** Container image references: lowercase repository path, optional registry port, tag and digest. */
const IMAGE_REFERENCE =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/

/** The verdict on a spec: usable (with defaults filled in), or a message naming each unusable field. */
export type SpecCheck = { ok: true; spec: AppServiceSpec } | { ok: false; problem: string }

/**
 * What the CRD does not check but the reconciler cannot honour. Returns a message
 * naming the field, or undefined when the spec is usable.
 */
export function unusableSpec(spec: AppServiceSpec): string | undefined {
  if (!IMAGE_REFERENCE.test(spec.image))
    return `spec.image ${JSON.stringify(spec.image)} is not a valid image reference`
  return undefined
}

/**
 * Checks a raw `spec` (absent counts as `{}`): schema problems first, each as
 * `spec.<path>: <message>` joined by `; `, then {@link unusableSpec}.
 */
export function validateSpec(raw: unknown): SpecCheck {
  const parsed = validateAgainst(AppServiceSpec, raw ?? {}, 'spec')
  if (!parsed.ok) return { ok: false, problem: parsed.problems.join('; ') }
  const problem = unusableSpec(parsed.value)
  return problem === undefined ? { ok: true, spec: parsed.value } : { ok: false, problem }
}
