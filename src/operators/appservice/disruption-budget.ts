/**
 * @module disruption-budget — the operator Deployment's PodDisruptionBudget.
 *
 * Two replicas run leader-elected: one reconciles, the other waits to take over. A voluntary
 * disruption (a node drain, a cluster upgrade) that evicted both at once would leave no
 * operator until the Deployment's replacements start; the budget lets the eviction API take
 * one pod at a time. It is written as `maxUnavailable: 1` rather than `minAvailable: 1` so that
 * a one-replica install (the `dev` overlay, `replicas: 1` in the chart) is still drainable:
 * with `minAvailable: 1` and one replica, every eviction is refused
 * (https://kubernetes.io/docs/tasks/run-application/configure-pdb/).
 */
import type { KubeObject } from '../../core/index.ts'

/** How many operator pods a voluntary disruption may take at once (see the module comment). */
export const OPERATOR_MAX_UNAVAILABLE = 1

/**
 * The PodDisruptionBudget (policy/v1) named and labelled by `metadata`, covering the pods that
 * match `selector` — the operator Deployment's own selector.
 */
export function disruptionBudget(
  metadata: { name: string; namespace?: string; labels?: Record<string, string> },
  selector: Record<string, string>,
): KubeObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata,
    spec: { maxUnavailable: OPERATOR_MAX_UNAVAILABLE, selector: { matchLabels: selector } },
  }
}
