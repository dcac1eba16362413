/**
 * @module status-reporter — writes this node's entry into each NodeConfig's status, once per change.
 *
 * The agent's cache of a NodeConfig moves with every other agent's status write, so it
 * may show a new resourceVersion long before it shows this agent's own last entry. The
 * reporter remembers what it sent, and when, and does not send the same entry again
 * until the cache has had {@link STATUS_RESEND_AFTER_MS} to show it: without that, each
 * of the others' writes re-sent the same entry.
 */
import { isConflict, isNotFound, type ResourceClient } from '../../client/index.ts'
import type { Clock } from '../../core/index.ts'
import { type NodeConfig, REASON, STATE } from './api.ts'
import type { EventSink } from './event-sink.ts'
import { fieldManagerFor, nextEntry, ownEntry, type Report, sameReport, statusApplyBody } from './status.ts'

/**
 * How long a status entry just sent is not sent again while the cache does not show it
 * yet: 10 s. Every agent writes into the same NodeConfig's status, so the cached
 * resourceVersion moves with the others' writes before this agent's own arrives; without
 * the wait each of those moves re-sent the same entry. After it, a write that never shows
 * (lost, or overwritten) is sent again.
 */
export const STATUS_RESEND_AFTER_MS = 10_000

/** What {@link StatusReporter} writes through. */
export interface StatusReporterDeps {
  nodeName: string
  /** Only `apply` on the status subresource is used. */
  nodeConfigs: Pick<ResourceClient<NodeConfig>, 'apply'>
  recorder?: EventSink
  clock: Clock
}

/** What was last sent for one NodeConfig: the entry, the resourceVersion the cache had then, and when. */
interface Sent {
  report: string
  rv: string | undefined
  at: number
}

/** Applies this node's status entries; one per agent, as it remembers what it sent. */
export class StatusReporter {
  readonly #deps: StatusReporterDeps
  readonly #manager: string
  readonly #sent = new Map<string, Sent>()

  constructor(deps: StatusReporterDeps) {
    this.#deps = deps
    this.#manager = fieldManagerFor(deps.nodeName)
  }

  /**
   * Brings this node's entry in each of `configs` to `outcomes` (by UID; a NodeConfig
   * without an outcome loses this node's entry). Skips entries that already say the
   * same, and entries sent before that the cache does not show yet (see the module
   * comment). A NodeConfig gone (404) or re-created (409, the UID guard) is skipped; a
   * Failed entry written is also a Warning event. Every NodeConfig is tried; the first
   * other failure is thrown after the last.
   */
  async report(
    configs: readonly NodeConfig[],
    outcomes: ReadonlyMap<string, Report>,
    signal: AbortSignal,
  ): Promise<void> {
    const { nodeName: node, clock } = this.#deps
    const failures: unknown[] = []
    const now = new Date(clock.now())
    for (const c of configs) {
      const uid = c.metadata.uid!
      const mine = ownEntry(c, node)
      const r = outcomes.get(uid)
      const entry = r ? nextEntry(c, node, r, mine, now) : undefined
      if (sameReport(mine, entry)) continue
      const key = JSON.stringify(entry ? [entry.state, entry.message, entry.observedGeneration] : null)
      if (this.#awaitingCache(uid, key, c.metadata.resourceVersion)) continue
      try {
        await this.#deps.nodeConfigs.apply(statusApplyBody(c, entry) as NodeConfig, {
          fieldManager: this.#manager,
          force: true,
          subresource: 'status',
          signal,
        })
        this.#sent.set(uid, { report: key, rv: c.metadata.resourceVersion, at: clock.monotonic() })
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) failures.push(err)
        continue
      }
      if (entry?.state === STATE.failed)
        this.#deps.recorder?.event(c, 'Warning', REASON.failed, 'Apply', `${node}: ${entry.message}`)
    }
    for (const uid of this.#sent.keys())
      if (!configs.some((c) => c.metadata.uid === uid)) this.#sent.delete(uid)
    if (failures.length > 0) throw failures[0]
  }

  /** True when `report` was sent for `uid` and the cache has not moved since, or only for a short while. */
  #awaitingCache(uid: string, report: string, rv: string | undefined): boolean {
    const last = this.#sent.get(uid)
    return (
      last !== undefined &&
      last.report === report &&
      (last.rv === rv || this.#deps.clock.monotonic() - last.at < STATUS_RESEND_AFTER_MS)
    )
  }
}
