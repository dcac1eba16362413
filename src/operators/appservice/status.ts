/**
 * @module status — pure: an AppService's status fields and conditions from what was observed.
 *
 * Ready and Progressing come from the Deployment's rollout; Degraded says whether the
 * operator itself is stuck (an unusable spec, the external database API failing). The
 * reconciler merges these into `status.conditions` with `setCondition`, which keeps
 * `lastTransitionTime` unless the status flips.
 */
import type { Deployment } from '../../api/index.ts'
import type { ConditionInput } from '../../objects/index.ts'
import { type AppService, type AppServiceSpec, type AppServiceStatus, CONDITION, REASON } from './api.ts'
import { endpointOf, selectorOf } from './desired.ts'

/** Shown when a Deployment's Progressing condition is False without a message of its own. */
const STALLED = 'rollout stalled'

/**
 * The status fields other than conditions: everything already in `app.status`, with
 * `observedGeneration`, `readyReplicas` (from the Deployment), `selector` and `endpoint`
 * set for this generation.
 */
export function observedStatus(
  app: AppService,
  spec: AppServiceSpec,
  deployment: Deployment,
): AppServiceStatus {
  return {
    ...(app.status ?? {}),
    observedGeneration: app.metadata.generation,
    readyReplicas: deployment.status?.readyReplicas ?? 0,
    selector: selectorOf(app),
    endpoint: endpointOf(app, spec),
  }
}

/**
 * Ready and Progressing from the live Deployment. Ready means the rollout is complete, as
 * `kubectl rollout status` decides it: the controller has seen this generation, every
 * replica runs the new template, no old replica is left, and they are all available. Ready
 * replicas alone are not enough: in a rolling update with surge there are more ready
 * replicas than wanted while old ones still serve. A Deployment whose own Progressing
 * condition is False (its progress deadline passed) is Unavailable, not progressing.
 */
export function rolloutConditions(deployment: Deployment, replicas: number): ConditionInput[] {
  const st = deployment.status ?? {}
  const ready = st.readyReplicas ?? 0
  const updated = st.updatedReplicas ?? 0
  const observed = (st.observedGeneration ?? 0) >= (deployment.metadata.generation ?? 0)
  const progressing = st.conditions?.find((c) => c.type === 'Progressing')
  const stuck = progressing?.status === 'False'
  const done =
    observed &&
    updated >= replicas &&
    (st.replicas ?? 0) <= updated &&
    (st.availableReplicas ?? 0) >= updated &&
    ready >= replicas
  const message = `${ready}/${replicas} replicas ready`
  if (done)
    return [
      { type: CONDITION.ready, status: 'True', reason: REASON.available, message },
      { type: CONDITION.progressing, status: 'False', reason: REASON.available, message },
    ]
  const reason = stuck ? REASON.unavailable : REASON.progressing
  return [
    {
      type: CONDITION.ready,
      status: 'False',
      reason,
      message: stuck ? `${message}: ${progressing?.message ?? STALLED}` : message,
    },
    { type: CONDITION.progressing, status: stuck ? 'False' : 'True', reason, message },
  ]
}

/** An unusable spec: not Ready and Degraded, both saying why. */
export function invalidSpecConditions(problem: string): ConditionInput[] {
  return [
    { type: CONDITION.ready, status: 'False', reason: REASON.invalid, message: problem },
    { type: CONDITION.degraded, status: 'True', reason: REASON.invalid, message: problem },
  ]
}

/** Degraded=True for `reason` (one of {@link REASON}), saying why. */
export function degraded(reason: string, message: string): ConditionInput {
  return { type: CONDITION.degraded, status: 'True', reason, message }
}

/** Degraded=False: everything the operator manages is as expected. */
export const NOT_DEGRADED: ConditionInput = {
  type: CONDITION.degraded,
  status: 'False',
  reason: REASON.asExpected,
  message: '',
}
