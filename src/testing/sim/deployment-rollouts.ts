/**
 * @module deployment-rollouts — kube-controller-manager's Deployment controller, reduced to what an
 * operator observes: some time after a Deployment's spec changes, its status reports every replica
 * updated, ready and available at the new generation.
 */
import type { Clock } from '../../core/clock.ts'
import type { ObjectStore } from './object-store.ts'

/** Virtual time from a Deployment's change to its finished rollout: 5 s, pods that start in a few seconds. */
export const DEFAULT_ROLLOUT_MS = 5_000

const COLLECTION = 'apps/deployments'

/** Rolls out every Deployment of `store` `rolloutMs` after each spec change. Returns the function that stops it. */
export function deploymentRollouts(
  store: ObjectStore,
  clock: Clock,
  rolloutMs = DEFAULT_ROLLOUT_MS,
): () => void {
  const timers = new Map<string, () => void>()
  const unsubscribe = store.subscribe((e) => {
    if (e.collection !== COLLECTION || e.type === 'DELETED') return
    const st = (e.object as { status?: { observedGeneration?: number } }).status
    if (st?.observedGeneration === e.object.metadata.generation) return
    if (timers.has(e.key)) return
    timers.set(
      e.key,
      clock.setTimer(() => {
        timers.delete(e.key)
        const live = store.get(COLLECTION, e.object.metadata.namespace, e.object.metadata.name ?? '')
        if (!live || live.metadata.deletionTimestamp) return
        const replicas = (live as { spec?: { replicas?: number } }).spec?.replicas ?? 1
        const status = {
          observedGeneration: live.metadata.generation,
          replicas,
          updatedReplicas: replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
          conditions: [
            { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
            { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
          ],
        }
        store.update(
          COLLECTION,
          live.metadata.namespace,
          live.metadata.name ?? '',
          { ...live, status } as never,
          'status',
          {
            manager: 'kube-controller-manager',
            now: clock.now(),
          },
        )
      }, rolloutMs),
    )
  })
  return () => {
    for (const cancel of timers.values()) cancel()
    unsubscribe()
  }
}
