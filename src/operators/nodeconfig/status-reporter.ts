/**
 * @module status-reporter — writes this node's NodeConfigReports, once per change.
 *
 * Each (NodeConfig, node) pair has its own small report object (report-api.ts); only this
 * agent writes this node's. The reporter compares with its cached reports (it watches
 * only its node's, through the `spec.nodeName` field selector) and remembers what it sent,
 * and when, so a write the cache does not show yet is not sent again until
 * {@link STATUS_RESEND_AFTER_MS} passed. A node that was reported on in the first design's
 * shared `status.nodes[]` starts its report from that entry, keeping its transition time.
 */
import { isConflict, isNotFound, type ResourceClient } from '../../client/index.ts'
import type { Clock } from '../../core/index.ts'
import { type NodeConfig, REASON, STATE } from './api.ts'
import type { EventSink } from './event-sink.ts'
import { type NodeConfigReport, reportBody, reportEntry, reportName, reportOwnerUid } from './report-api.ts'
import { nextEntry, ownEntry, type Report, sameReport } from './status.ts'

/**
 * How long a report just sent is not sent again while the cache does not show it yet: 10 s.
 * After it, a write that never shows (lost, or overwritten) is sent again.
 */
export const STATUS_RESEND_AFTER_MS = 10_000
/** The field manager of every agent's report writes (the report's name already says whose it is). */
export const REPORT_FIELD_MANAGER = 'edgeop-agent'

/** What {@link StatusReporter} writes through. */
export interface StatusReporterDeps {
  nodeName: string
  /** `apply` and `delete` of this node's reports. */
  reports: Pick<ResourceClient<NodeConfigReport>, 'apply' | 'delete'>
  /** This node's cached reports. */
  listReports(): readonly NodeConfigReport[]
  recorder?: EventSink
  clock: Clock
}

/** What was last sent for one NodeConfig: the outcome, the report's resourceVersion then, and when. */
interface Sent {
  report: string
  rv: string | undefined
  at: number
}

/** Applies this node's reports; one per agent, as it remembers what it sent. */
export class StatusReporter {
  readonly #deps: StatusReporterDeps
  readonly #sent = new Map<string, Sent>()

  constructor(deps: StatusReporterDeps) {
    this.#deps = deps
  }

  /**
   * Brings this node's report on each of `configs` to `outcomes` (by UID); a NodeConfig of
   * `configs` without an outcome loses this node's report (it no longer selects the node).
   * NodeConfigs left out of `configs` keep their reports as they are (a rollout wave not yet
   * open to this node). Skips reports that already say the same, and reports sent before
   * that the cache does not show yet. A NodeConfig gone (404, or 409 from its owner reference's
   * UID) is skipped; a Failed report written is also a Warning event. Every NodeConfig is
   * tried; the first other failure is thrown after the last.
   */
  async report(
    configs: readonly NodeConfig[],
    outcomes: ReadonlyMap<string, Report>,
    signal: AbortSignal,
  ): Promise<void> {
    const { nodeName: node, clock, reports } = this.#deps
    const failures: unknown[] = []
    const now = new Date(clock.now())
    const cached = new Map(this.#deps.listReports().map((r) => [r.metadata.name!, r]))
    for (const c of configs) {
      const uid = c.metadata.uid!
      const name = reportName(c.metadata.name!, node)
      const own = cached.get(name)
      const current = own && reportOwnerUid(own) === uid ? reportEntry(own) : undefined
      const r = outcomes.get(uid)
      if (!r) {
        if (own) await reports.delete(name, { signal }).catch((err) => isNotFound(err) || failures.push(err))
        continue
      }
      const previous = current ?? ownEntry(c, node)
      const entry = nextEntry(c, node, r, previous, now)
      if (sameReport(current, entry)) continue
      const key = JSON.stringify([entry.state, entry.message, entry.observedGeneration, uid])
      if (this.#awaitingCache(name, key, own?.metadata.resourceVersion)) continue
      try {
        await reports.apply(reportBody(c, entry), { fieldManager: REPORT_FIELD_MANAGER, force: true, signal })
        this.#sent.set(name, { report: key, rv: own?.metadata.resourceVersion, at: clock.monotonic() })
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) failures.push(err)
        continue
      }
      if (entry.state === STATE.failed)
        this.#deps.recorder?.event(c, 'Warning', REASON.failed, 'Apply', `${node}: ${entry.message}`)
    }
    const names = new Set(configs.map((c) => reportName(c.metadata.name!, node)))
    for (const name of this.#sent.keys()) if (!names.has(name)) this.#sent.delete(name)
    if (failures.length > 0) throw failures[0]
  }

  /** True when `report` was sent as `name` and the cache has not moved since, or only for a short while. */
  #awaitingCache(name: string, report: string, rv: string | undefined): boolean {
    const last = this.#sent.get(name)
    return (
      last !== undefined &&
      last.report === report &&
      ((last.rv !== undefined && last.rv === rv) ||
        this.#deps.clock.monotonic() - last.at < STATUS_RESEND_AFTER_MS)
    )
  }
}
