/**
 * @module coverage — which source text of edgeop's `src/` ran, from V8's precise block coverage (the
 * inspector's `Profiler.takePreciseCoverage`), as the feedback of the long fuzz run: an input that runs
 * source text no input ran before is kept and mutated further.
 *
 * V8 reports nested ranges per function, a range's count holding for the text its inner ranges do not
 * cover, and leaves out a range whose count equals its parent's. So ranges are no stable unit; each
 * read is painted onto the script's characters (outer functions first, then inner ones and inner
 * ranges over them), and a character counts as covered when the innermost range holding it ran.
 * `takePreciseCoverage` resets the counters: each read sees what ran since the last one.
 */
import { Session } from 'node:inspector/promises'
import { sep } from 'node:path'

/** Characters of the source text inside reported functions: seen at all, and run by some input. */
export class SourceCoverage {
  readonly #session = new Session()
  readonly #marker: string
  /** Per script: 0 never seen, 1 seen in a reported function, 2 run. */
  readonly #state = new Map<string, Uint8Array>()

  /** `srcDir` is the absolute path of the sources that count. */
  constructor(srcDir: string) {
    this.#marker = `${srcDir}${sep}`
  }

  /** Starts V8's precise block coverage with counts. */
  async start(): Promise<void> {
    this.#session.connect()
    await this.#session.post('Profiler.enable')
    await this.#session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true })
    await this.take()
  }

  /**
   * How many characters ran for the first time since the last read (0: nothing new). With `commit`
   * false they are counted but not remembered, so a caller can re-run the inputs one by one to learn
   * which of them ran them.
   */
  async take(commit = true): Promise<number> {
    const { result } = await this.#session.post('Profiler.takePreciseCoverage')
    let fresh = 0
    for (const script of result) {
      if (!script.url.includes(this.#marker) || script.functions.length === 0) continue
      const fns = script.functions
        .map((f) => ({ ranges: f.ranges, size: f.ranges[0]!.endOffset - f.ranges[0]!.startOffset }))
        .sort((a, b) => b.size - a.size)
      const length = Math.max(...fns.map((f) => f.ranges[0]!.endOffset))
      let state = this.#state.get(script.url)
      if (!state || state.length < length) {
        const grown = new Uint8Array(length)
        if (state) grown.set(state)
        state = grown
        this.#state.set(script.url, state)
      }
      const ran = new Int8Array(length).fill(-1)
      for (const f of fns) for (const r of f.ranges) ran.fill(r.count > 0 ? 1 : 0, r.startOffset, r.endOffset)
      for (let i = 0; i < length; i++) {
        const r = ran[i]!
        if (r === -1) continue
        if (r === 1 && state[i] !== 2) {
          fresh++
          if (commit) state[i] = 2
        } else if (state[i] === 0) state[i] = 1
      }
    }
    return fresh
  }

  /** Characters run by some input, characters inside the functions V8 reported, and source files loaded. */
  get totals(): { covered: number; known: number; files: number } {
    let covered = 0
    let known = 0
    for (const state of this.#state.values()) {
      for (const s of state) {
        if (s > 0) known++
        if (s === 2) covered++
      }
    }
    return { covered, known, files: this.#state.size }
  }

  /** Forgets what was seen (the next target counts its own); the counters keep running. */
  async reset(): Promise<void> {
    await this.take()
    this.#state.clear()
  }

  /** Stops coverage and disconnects. */
  async stop(): Promise<void> {
    await this.#session.post('Profiler.stopPreciseCoverage')
    this.#session.disconnect()
  }
}
