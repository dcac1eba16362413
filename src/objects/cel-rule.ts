/**
 * @module cel-rule — the CEL rule a zod check carries: what {@link celRule} (validation.ts) attaches and the
 * CRD generator (crd.ts) reads back.
 *
 * A file of its own, without zod, so that generating a CRD does not import zod: the schemas a user hands
 * to `customResourceDefinition` were built with the user's zod, and the root entry, which exports the
 * generator, stays free of zod's load (about 14 MB of RSS, test/bench/base-rss.bench.ts).
 */

/** `reason` of a failed rule: the cause type the apiserver reports (and the `Required value:`-style prefix). */
export type CelReason =
  | 'FieldValueInvalid'
  | 'FieldValueForbidden'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'

/** A CRD validation rule (apiextensions.k8s.io/v1 `ValidationRule`), copied as is into `x-kubernetes-validations`. */
export interface CelRule {
  /** CEL expression that must be true; `self` is the value the rule is attached to, `oldSelf` its stored value. */
  rule: string
  /** What is wrong, in words; shown by the apiserver and by the operator's own validation. */
  message: string
  /** CEL expression building the apiserver's message (falls back to `message`); the operator shows `message`. */
  messageExpression?: string
  /** The cause type reported; the apiserver's default is `FieldValueInvalid`. */
  reason?: CelReason
  /** Relative JSON path (`.database.class`) of the field to blame, instead of the one the rule is on. */
  fieldPath?: string
  /** Also evaluate the transition rule on create or when the old value is absent; `oldSelf` is then a CEL optional. */
  optionalOldSelf?: boolean
}

const RULES = new WeakMap<object, CelRule>()

/** Records that `check` (a zod check built by `celRule`) enforces `rule`. */
export function attachCelRule(check: object, rule: CelRule): void {
  RULES.set(check, rule)
}

/** The CEL rule a check carries, if it came from `celRule`. */
export function celRuleOf(check: object): CelRule | undefined {
  return RULES.get(check)
}
