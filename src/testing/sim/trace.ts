/**
 * @module trace — what a run did, step by step in virtual time, kept bounded for the failure report.
 */

/** One recorded step. */
export interface TraceEntry {
  /** Virtual ms since the start. */
  at: number
  /** The process (or `model`, `fault`). */
  who: string
  /** What happened. */
  what: string
}

/** Entries kept for the report: the latest 400 (older ones are dropped; faults are kept apart). */
export const TRACE_ENTRIES = 400

/** A bounded trace. */
export class Trace {
  readonly #entries: TraceEntry[] = []
  readonly #limit: number

  /** Keeps the latest `limit` entries. */
  constructor(limit = TRACE_ENTRIES) {
    this.#limit = limit
  }

  /** Records one step. */
  add(at: number, who: string, what: string): void {
    this.#entries.push({ at, who, what })
    if (this.#entries.length > this.#limit) this.#entries.splice(0, this.#entries.length - this.#limit)
  }

  /** The kept entries, oldest first. */
  get entries(): readonly TraceEntry[] {
    return this.#entries
  }
}

/** One line per entry: `[  12.345s] who: what`. */
export function formatTrace(entries: readonly TraceEntry[]): string {
  return entries.map((e) => `[${(e.at / 1000).toFixed(3).padStart(9)}s] ${e.who}: ${e.what}`).join('\n')
}
