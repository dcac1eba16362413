/**
 * @module validation — one rule, two enforcers: a CEL rule attached to a zod/mini schema becomes
 * `x-kubernetes-validations` in the generated CRD (the apiserver refuses a bad object at admission)
 * and a zod check (the operator refuses it too, when the installed CRD is older or looser), with the
 * same message. {@link validateAgainst} turns zod's issues into `spec.<path>: <message>` lines a
 * person can read.
 */
import * as z from 'zod/mini'
import { attachCelRule, type CelRule } from './cel-rule.ts'

/** What {@link celRule} takes: the CEL rule and, where it can be written, the same rule in TypeScript. */
export interface CelCheck<T> extends CelRule {
  /**
   * The same rule for the operator's own validation: true when `value` passes. Omit it for a transition rule
   * (one reading `oldSelf`): the operator validates an object without its previous version, so only the
   * apiserver enforces those.
   */
  test?: (value: T) => boolean
}

/**
 * A zod check carrying a CEL rule: `schema.check(celRule({ rule, message, test }))`. The CRD generator
 * emits the rule on the schema it is attached to; parsing runs `test` (when given) and reports `message`
 * at `fieldPath` (dotted names only). Keep the rule's inputs bounded (`maxLength`, `maxItems`): the
 * apiserver refuses a CRD whose rules' estimated cost exceeds its budget.
 */
export function celRule<T>(r: CelCheck<T>): z.core.$ZodCheck<T> {
  const { test, ...rule } = r
  const check = z.refine<T>(test ?? (() => true), {
    message: r.message,
    path: r.fieldPath?.split('.').slice(1),
  })
  attachCelRule(check, rule)
  return check
}

/** A value parsed against a schema: its output (defaults filled in), or one readable line per problem. */
export type SchemaCheck<T> = { ok: true; value: T } | { ok: false; problems: string[] }

/**
 * Parses `value` with `schema`. Each problem reads `<where>.<path>: <message>`, with `[i]` for list items:
 * a check's own message (a {@link celRule}, a regular expression's), else words for zod's issue
 * (`must be at most 65535`, `is required`) — zod/mini bundles no messages of its own.
 */
export function validateAgainst<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
  where: string,
): SchemaCheck<z.output<S>> {
  const parsed = z.safeParse(schema, value, { error: issueWords })
  if (parsed.success) return { ok: true, value: parsed.data }
  return {
    ok: false,
    problems: parsed.error.issues.map(
      (i) =>
        `${where}${i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('')}: ${i.message}`,
    ),
  }
}

function issueWords(i: z.core.$ZodRawIssue): string {
  const n = i as { code: string; origin?: string; minimum?: unknown; maximum?: unknown; values?: unknown[] }
  const unit = n.origin === 'string' ? ' characters' : n.origin === 'array' ? ' items' : ''
  const small = n.code === 'too_small'
  if (small || n.code === 'too_big')
    return `must be at ${small ? `least ${n.minimum}` : `most ${n.maximum}`}${unit}`
  if (n.code === 'invalid_value') return `must be one of ${n.values?.join(', ')}`
  if (n.code === 'invalid_type') return i.input === undefined ? 'is required' : `must be ${i.expected}`
  return 'is invalid'
}
