/**
 * @module invariants — the soak's ledger of invariant checks: how often each was checked,
 * how often it failed, and the first distinct failure messages.
 */

/** The outcome of one invariant over the whole run. */
export interface InvariantResult {
  id: string
  title: string
  /** The bound it is checked against, in words. */
  bound: string
  checks: number
  failures: number
  passed: boolean
  /** The first distinct failure messages (at most {@link MAX_MESSAGES}), with the ms since start. */
  messages: string[]
  /** Informational lines (what was measured). */
  notes: string[]
}

/** Distinct failure messages kept per invariant. */
export const MAX_MESSAGES = 20

interface State {
  title: string
  bound: string
  checks: number
  failures: number
  messages: string[]
  seen: Set<string>
  notes: string[]
}

/** The ledger. Define every invariant first; then record checks. */
export class Invariants {
  readonly #states = new Map<string, State>()
  readonly #start: number
  readonly #onFailure: ((id: string, message: string) => void) | undefined

  constructor(start: number, onFailure?: (id: string, message: string) => void) {
    this.#start = start
    this.#onFailure = onFailure
  }

  define(id: string, title: string, bound: string): void {
    this.#states.set(id, { title, bound, checks: 0, failures: 0, messages: [], seen: new Set(), notes: [] })
  }

  #get(id: string): State {
    const s = this.#states.get(id)
    if (s === undefined) throw new Error(`invariant ${id} is not defined`)
    return s
  }

  /** Records `n` passed checks. */
  pass(id: string, n = 1): void {
    this.#get(id).checks += n
  }

  /** Records one failed check. Messages are deduplicated (the same object failing on every poll is one message). */
  fail(id: string, message: string): void {
    const s = this.#get(id)
    s.checks++
    s.failures++
    if (!s.seen.has(message) && s.messages.length < MAX_MESSAGES) {
      s.seen.add(message)
      s.messages.push(`[+${((Date.now() - this.#start) / 1000).toFixed(1)} s] ${message}`)
      this.#onFailure?.(id, message)
    }
  }

  /** Records a check: passed when `ok`, else failed with `message()`. Returns `ok`. */
  check(id: string, ok: boolean, message: () => string): boolean {
    if (ok) this.pass(id)
    else this.fail(id, message())
    return ok
  }

  /** Adds an informational line to an invariant's result. */
  note(id: string, line: string): void {
    this.#get(id).notes.push(line)
  }

  failures(id: string): number {
    return this.#get(id).failures
  }

  /** Every invariant, in definition order. */
  results(): InvariantResult[] {
    return [...this.#states].map(([id, s]) => ({
      id,
      title: s.title,
      bound: s.bound,
      checks: s.checks,
      failures: s.failures,
      // An invariant that was never checked did not pass: the soak proved nothing about it.
      passed: s.failures === 0 && s.checks > 0,
      messages: [...s.messages],
      notes: [...s.notes],
    }))
  }

  get allPassed(): boolean {
    return this.results().every((r) => r.passed)
  }
}
