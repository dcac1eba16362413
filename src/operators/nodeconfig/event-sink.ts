/**
 * @module event-sink — where the agent's Kubernetes Events go; the reconciler and the status reporter both write them.
 */
import type { KubeObject } from '../../core/index.ts'

/** Where events go (an `EventRecorder` fits). */
export interface EventSink {
  event(regarding: KubeObject, type: 'Normal' | 'Warning', reason: string, action: string, note: string): void
}
