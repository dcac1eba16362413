/**
 * @module condition-schema — `status.conditions` as a zod schema for a CRD: one condition
 * (metav1.Condition) and the list of them, keyed by `type` (a list-map, so server-side apply merges
 * each condition by its type).
 */
import * as z from 'zod/mini'

/**
 * One status condition, the shape of apimachinery's `metav1.Condition` (the {@link Condition} type of
 * `edgeop/core`), for a CRD's status schema; `setCondition` writes it. `lastTransitionTime` is
 * RFC 3339 (`format: date-time`, checked by the apiserver).
 *
 * @example
 * const WidgetStatus = z.object({ conditions: ConditionsSchema })
 */
export const ConditionSchema = z.object({
  type: z.string(),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.optional(z.int()),
  // The operator only writes it, so no zod date parser is bundled.
  lastTransitionTime: z.string().check(z.meta({ kubernetes: { format: 'date-time' } })),
  reason: z.string(),
  message: z.string(),
})

/**
 * `status.conditions`: optional, a list of {@link ConditionSchema} with `x-kubernetes-list-type: map`
 * keyed by `type`, as Kubernetes' own types declare it (`+listType=map`, `+listMapKey=type`).
 */
export const ConditionsSchema = z.optional(
  z.array(ConditionSchema).check(z.meta({ kubernetes: { listType: 'map', listMapKeys: ['type'] } })),
)
