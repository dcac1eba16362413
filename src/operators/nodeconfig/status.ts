/**
 * @module status — pure: one node's outcome as an entry (the shape of a report's outcome), and the first design's shared list.
 *
 * {@link nextEntry} and {@link sameReport} shape and compare what a NodeConfigReport says.
 * The rest is the first design, where each agent applied its entry of the NodeConfig's
 * `status.nodes[]` under its own field manager: the agent reads its old entry from there
 * once (the migration), and the fleet measurements write it to compare.
 */
import { createHash } from 'node:crypto'
import type { KubeObject } from '../../core/index.ts'
import { rfc3339 } from '../../objects/index.ts'
import {
  GROUP,
  KIND,
  MAX_MESSAGE_LENGTH,
  type NodeConfig,
  type NodeConfigNodeStatus,
  VERSION,
} from './api.ts'

/** Field managers are `edgeop-agent-<node>`. */
export const FIELD_MANAGER_PREFIX = 'edgeop-agent-'
/** The API server refuses field manager names longer than 128 characters. */
export const MAX_FIELD_MANAGER_LENGTH = 128

/** The outcome the agent reports for one NodeConfig. */
export interface Report {
  state: NodeConfigNodeStatus['state']
  message: string
}

/**
 * The field manager of `node`'s agent: `edgeop-agent-<node>`, or, for node names too
 * long for the 128-character limit, a prefix of the name plus a hash of all of it.
 */
export function fieldManagerFor(node: string): string {
  const name = FIELD_MANAGER_PREFIX + node
  if (name.length <= MAX_FIELD_MANAGER_LENGTH) return name
  const hash = createHash('sha256').update(node).digest('hex').slice(0, 16)
  return `${name.slice(0, MAX_FIELD_MANAGER_LENGTH - hash.length - 1)}-${hash}`
}

/** `node`'s entry in `config`'s status, if any. */
export function ownEntry(config: NodeConfig, node: string): NodeConfigNodeStatus | undefined {
  return config.status?.nodes?.find((e) => e.name === node)
}

/**
 * An informer transform for agents: keeps only `node`'s own status entry, so an agent's
 * cache does not grow with the number of nodes (and never reads the others).
 */
export function keepOwnEntry(node: string): (config: NodeConfig) => NodeConfig {
  return (config) => {
    const nodes = config.status?.nodes
    if (!nodes) return config
    return { ...config, status: { ...config.status, nodes: nodes.filter((e) => e.name === node) } }
  }
}

/** `problems` as one status message, capped at {@link MAX_MESSAGE_LENGTH}. */
export function failureMessage(problems: readonly string[]): string {
  const text = problems.join('; ')
  return text.length <= MAX_MESSAGE_LENGTH ? text : `${text.slice(0, MAX_MESSAGE_LENGTH - 3)}...`
}

/** The message of an Applied entry. */
export function appliedMessage(files: number): string {
  return `${files} file${files === 1 ? '' : 's'} in place`
}

/**
 * The entry to report: `lastTransitionTime` moves only when the state changes (as
 * metav1 conditions do); observedGeneration is the NodeConfig's generation.
 */
export function nextEntry(
  config: NodeConfig,
  node: string,
  report: Report,
  previous: NodeConfigNodeStatus | undefined,
  now: Date,
): NodeConfigNodeStatus {
  return {
    name: node,
    observedGeneration: config.metadata.generation,
    state: report.state,
    message: report.message.length > MAX_MESSAGE_LENGTH ? failureMessage([report.message]) : report.message,
    lastTransitionTime:
      previous?.state === report.state && previous.lastTransitionTime
        ? previous.lastTransitionTime
        : rfc3339(now),
  }
}

/** True when `a` and `b` report the same thing (the transition time aside). */
export function sameReport(
  a: NodeConfigNodeStatus | undefined,
  b: NodeConfigNodeStatus | undefined,
): boolean {
  if (!a || !b) return a === b
  return (
    a.name === b.name &&
    a.state === b.state &&
    (a.message ?? '') === (b.message ?? '') &&
    a.observedGeneration === b.observedGeneration
  )
}

/**
 * The server-side apply body for the status subresource: exactly `entry`, or — with no
 * entry — nothing, which removes what this field manager wrote before.
 */
export function statusApplyBody(config: NodeConfig, entry: NodeConfigNodeStatus | undefined): KubeObject {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: KIND,
    // The UID makes the write conditional: a NodeConfig deleted and re-created under the
    // same name is not reported on with the old one's outcome.
    metadata: { name: config.metadata.name!, uid: config.metadata.uid || undefined },
    ...(entry ? { status: { nodes: [entry] } } : {}),
  }
}
