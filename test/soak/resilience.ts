/**
 * @module resilience — what the soak sees of the operator's own resilience: circuit-breaker phase
 * changes (`edgeop_circuit_breaker_transitions_total{dependency,from,to}`, scraped from every operator
 * replica's /metrics every second and once more at the end) and parked keys
 * (`edgeop_controller_parked_keys{controller,reason}` on every scrape; the leader's
 * `GET /debug/parked` at the end).
 */
import type { ParkedKeyInfo } from '../../src/server/parked-keys-view.ts'

/** At most this many breaker changes are kept for the timeline. */
const MAX_TIMELINE = 500

/** One sample of a Prometheus text exposition. */
export interface MetricSample {
  labels: Record<string, string>
  value: number
}

/** Every sample of metric `name` in `text`, with its labels. */
export function metricSamples(text: string, name: string): MetricSample[] {
  const out: MetricSample[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (!Number.isFinite(value)) continue
    const labels: Record<string, string> = {}
    const open = line.indexOf('{')
    const close = line.lastIndexOf('}')
    if (open === name.length && close > open)
      for (const m of line.slice(open + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
        labels[m[1]!] = m[2]!.replace(/\\(.)/g, '$1')
    out.push({ labels, value })
  }
  return out
}

/** What one scrape of an operator says about its resilience. */
export interface ResilienceScrape {
  /** Breaker transitions so far, by `dependency from→to`. */
  transitions: Record<string, number>
  /** Parked keys now (all controllers and reasons); undefined when the metric is absent. */
  parked: number | undefined
}

/** The `dependency from→to` key of a transition. */
export const transitionKey = (dependency: string, from: string, to: string): string =>
  `${dependency} ${from}→${to}`

/** The resilience metrics of one scrape of `/metrics`. */
export function resilienceOf(text: string): ResilienceScrape {
  const transitions: Record<string, number> = {}
  for (const s of metricSamples(text, 'edgeop_circuit_breaker_transitions_total')) {
    const { dependency = '', from = '', to = '' } = s.labels
    transitions[transitionKey(dependency, from, to)] = s.value
  }
  const parked = metricSamples(text, 'edgeop_controller_parked_keys')
  return {
    transitions,
    parked: parked.length === 0 ? undefined : parked.reduce((x, s) => x + s.value, 0),
  }
}

/** Breaker transitions between two scrapes of one process (ms since start of the later one). */
export interface BreakerChange {
  atMs: number
  process: string
  transition: string
  count: number
}

/** The report's resilience section. */
export interface ResilienceReport {
  breaker: {
    /** Transitions over the run, summed over every operator process, by `dependency from→to`. */
    transitions: Record<string, number>
    /** The same per process (its last scrape). */
    byProcess: Record<string, Record<string, number>>
    /** When each transition was first seen (scrape time, so up to a second late), at most {@link MAX_TIMELINE}. */
    timeline: BreakerChange[]
  }
  parked: {
    /** The most parked keys any operator reported at once, when and by whom. */
    peak: number
    peakAtMs: number | undefined
    peakProcess: string | undefined
    /** The leader's `GET /debug/parked` at the end (undefined when it could not be read; see `endError`). */
    atEnd: ParkedKeyInfo[] | undefined
    endProcess: string | undefined
    endError: string | undefined
  }
}

/** Accumulates the resilience scrapes of a run. */
export class ResilienceLog {
  readonly #last = new Map<string, Record<string, number>>()
  readonly #timeline: BreakerChange[] = []
  #peak = 0
  #peakAtMs: number | undefined
  #peakProcess: string | undefined
  #atEnd: ParkedKeyInfo[] | undefined
  #endProcess: string | undefined
  #endError: string | undefined

  /** Records one scrape of `process` at `atMs` (ms since start). */
  observe(process: string, atMs: number, s: ResilienceScrape): void {
    const before = this.#last.get(process) ?? {}
    for (const [transition, n] of Object.entries(s.transitions)) {
      const count = n - (before[transition] ?? 0)
      if (count > 0 && this.#timeline.length < MAX_TIMELINE)
        this.#timeline.push({ atMs, process, transition, count })
    }
    this.#last.set(process, { ...before, ...s.transitions })
    if (s.parked !== undefined && s.parked > this.#peak) {
      this.#peak = s.parked
      this.#peakAtMs = atMs
      this.#peakProcess = process
    }
  }

  /** Records the leader's `/debug/parked` at the end (or why it could not be read). */
  parkedAtEnd(process: string | undefined, keys: ParkedKeyInfo[] | undefined, error?: string): void {
    this.#endProcess = process
    this.#atEnd = keys
    this.#endError = error
  }

  /** The report section. */
  report(): ResilienceReport {
    const transitions: Record<string, number> = {}
    for (const counts of this.#last.values())
      for (const [k, n] of Object.entries(counts)) transitions[k] = (transitions[k] ?? 0) + n
    return {
      breaker: {
        transitions,
        byProcess: Object.fromEntries(this.#last),
        timeline: [...this.#timeline],
      },
      parked: {
        peak: this.#peak,
        peakAtMs: this.#peakAtMs,
        peakProcess: this.#peakProcess,
        atEnd: this.#atEnd,
        endProcess: this.#endProcess,
        endError: this.#endError,
      },
    }
  }
}
