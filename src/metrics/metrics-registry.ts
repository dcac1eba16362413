/**
 * @module metrics-registry — a tiny Prometheus registry: counters, gauges and histograms rendered in the
 * text exposition format 0.0.4.
 *
 * Hand-written because the format is small and a client library is not: `# HELP` / `# TYPE` lines, one
 * sample per label set, cumulative `_bucket{le=…}` lines ending in `+Inf`, then `_sum` and `_count`
 * (Prometheus "Exposition formats", text format 0.0.4). Families render sorted by name and series by
 * label text, so two scrapes of the same state are byte-identical.
 */
import { EdgeopError } from '../core/errors.ts'

/** Label values by label name. Every label a metric declares must be given, and no other. */
export type Labels = Readonly<Record<string, string>>

/** The three metric types edgeop exports. */
export type MetricType = 'counter' | 'gauge' | 'histogram'

/** How to register a metric. */
export interface MetricOptions {
  /** `[a-zA-Z_:][a-zA-Z0-9_:]*`, e.g. `controller_runtime_reconcile_total`. */
  name: string
  /** One line of help text (backslashes and newlines are escaped). */
  help: string
  /** Label names, in the order they are rendered. Default none. */
  labelNames?: readonly string[]
}

/** How to register a histogram. */
export interface HistogramOptions extends MetricOptions {
  /** Upper bounds, strictly increasing and finite; `+Inf` is implicit. */
  buckets: readonly number[]
}

/** A monotonically increasing count. */
export interface Counter {
  /** Adds `by` (default 1; 0 creates the series at zero). Throws on a negative `by` or wrong labels. */
  inc(labels?: Labels, by?: number): void
  /** The current value (0 for a series never touched). */
  get(labels?: Labels): number
}

/** A value that goes up and down. */
export interface Gauge {
  /** Sets the series of `labels` to `value`. */
  set(labels: Labels, value: number): void
  /** Adds `by` (default 1) to the series. */
  inc(labels?: Labels, by?: number): void
  /** Subtracts `by` (default 1) from the series. */
  dec(labels?: Labels, by?: number): void
  /** The current value (0 for a series never touched). */
  get(labels?: Labels): number
  /** Drops one series (it stops being rendered). */
  remove(labels: Labels): void
  /** Drops every series (a collector then sets the current ones). */
  reset(): void
}

/** Observations counted into fixed buckets, with their sum. */
export interface Histogram {
  /** Records `value` in the series of `labels`. */
  observe(labels: Labels, value: number): void
  /** Count and sum of one series (zeros for a series never touched). */
  get(labels?: Labels): { count: number; sum: number }
}

/** Runs before every render; sets gauges whose value is computed at scrape time. Must not throw. */
export type Collector = () => void

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

interface HistogramSeries {
  /** Non-cumulative counts; the last slot is the `+Inf` bucket. */
  counts: number[]
  sum: number
  count: number
}

const invalid = (message: string): EdgeopError =>
  new EdgeopError('EDGEOP_ERR_INVALID', message, { step: 'register metric' })

/** A sample value as Prometheus writes it: `+Inf`, `-Inf`, `NaN`, or the shortest decimal. */
export function formatSampleValue(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

/** Escapes a label value: backslash, double quote and newline (text format 0.0.4). */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))
}

class Family<S> {
  readonly series = new Map<string, S>()
  readonly name: string
  readonly type: MetricType
  readonly help: string
  readonly labelNames: readonly string[]
  readonly #init: () => S

  constructor(type: MetricType, options: MetricOptions, init: () => S) {
    const labelNames = options.labelNames ?? []
    if (!METRIC_NAME.test(options.name)) throw invalid(`invalid metric name ${JSON.stringify(options.name)}`)
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith('__') || (type === 'histogram' && l === 'le'))
        throw invalid(`metric ${options.name}: invalid label name ${JSON.stringify(l)}`)
    }
    this.type = type
    this.name = options.name
    this.help = options.help
    this.labelNames = labelNames
    this.#init = init
    if (labelNames.length === 0) this.series.set('', init())
  }

  /** The rendered label text of `labels` (`a="x",b="y"`), which is also the series key. */
  key(labels: Labels): string {
    const names = this.labelNames
    if (Object.keys(labels).length !== names.length || names.some((n) => typeof labels[n] !== 'string')) {
      throw invalid(
        `metric ${this.name} takes labels [${names.join(', ')}], got [${Object.keys(labels).join(', ')}]`,
      )
    }
    return names.map((n) => `${n}="${escapeLabelValue(labels[n]!)}"`).join(',')
  }

  at(labels: Labels): S {
    const k = this.key(labels)
    let s = this.series.get(k)
    if (s === undefined) {
      s = this.#init()
      this.series.set(k, s)
    }
    return s
  }

  peek(labels: Labels): S | undefined {
    return this.series.get(this.key(labels))
  }
}

class NumberFamily extends Family<{ v: number }> implements Counter, Gauge {
  inc(labels: Labels = {}, by = 1): void {
    if (this.type === 'counter' && !(by >= 0)) throw invalid(`counter ${this.name}: cannot add ${by}`)
    this.at(labels).v += by
  }
  dec(labels: Labels = {}, by = 1): void {
    this.at(labels).v -= by
  }
  set(labels: Labels, value: number): void {
    this.at(labels).v = value
  }
  get(labels: Labels = {}): number {
    return this.peek(labels)?.v ?? 0
  }
  remove(labels: Labels): void {
    this.series.delete(this.key(labels))
  }
  reset(): void {
    this.series.clear()
  }
}

class HistogramFamily extends Family<HistogramSeries> implements Histogram {
  readonly buckets: readonly number[]

  constructor(options: HistogramOptions) {
    const buckets = options.buckets
    super('histogram', options, () => ({ counts: new Array(buckets.length + 1).fill(0), sum: 0, count: 0 }))
    buckets.forEach((b, i) => {
      if (!Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))
        throw invalid(`histogram ${options.name}: buckets must be finite and strictly increasing`)
    })
    this.buckets = buckets
  }

  observe(labels: Labels, value: number): void {
    const s = this.at(labels)
    let i = 0
    while (i < this.buckets.length && value > this.buckets[i]!) i++
    s.counts[i]!++
    s.sum += value
    s.count++
  }

  get(labels: Labels = {}): { count: number; sum: number } {
    const s = this.peek(labels)
    return { count: s?.count ?? 0, sum: s?.sum ?? 0 }
  }
}

type AnyFamily = NumberFamily | HistogramFamily

/**
 * A set of metrics rendered together on `/metrics`.
 *
 * Guarantees: registering a name again with the same type, label names (and buckets) returns the
 * metric already registered, so two components may ask for the same family; with anything different
 * it throws `EDGEOP_ERR_INVALID`. Unlabelled metrics render at 0 from registration; labelled series
 * appear on first use (`inc(labels, 0)` pre-creates one). {@link MetricsRegistry.render} runs every
 * collector first, then renders sorted, so output is deterministic.
 *
 * Does not guarantee: exemplars, native histograms, summaries or the OpenMetrics format.
 *
 * @example
 * const registry = new MetricsRegistry()
 * const total = registry.counter({ name: 'jobs_total', help: 'Jobs run.', labelNames: ['result'] })
 * total.inc({ result: 'ok' })
 * registry.render() // '# HELP jobs_total Jobs run.\n# TYPE jobs_total counter\njobs_total{result="ok"} 1\n'
 */
export class MetricsRegistry {
  readonly #families = new Map<string, AnyFamily>()
  readonly #collectors = new Set<Collector>()

  /** Registers (or returns the registered) counter. */
  counter(options: MetricOptions): Counter {
    return this.#register(new NumberFamily('counter', options, () => ({ v: 0 })))
  }

  /** Registers (or returns the registered) gauge. */
  gauge(options: MetricOptions): Gauge {
    return this.#register(new NumberFamily('gauge', options, () => ({ v: 0 })))
  }

  /** Registers (or returns the registered) histogram. */
  histogram(options: HistogramOptions): Histogram {
    return this.#register(new HistogramFamily(options))
  }

  /**
   * Adds a function run before each render, typically setting gauges computed at scrape time. A
   * collector that throws is skipped for that render (its gauges keep their last values). Returns a
   * function that removes it.
   */
  addCollector(collector: Collector): () => void {
    this.#collectors.add(collector)
    return () => this.#collectors.delete(collector)
  }

  /** Every family in the text exposition format 0.0.4, ending with a newline (empty when nothing). */
  render(): string {
    for (const c of this.#collectors) {
      try {
        c()
      } catch {
        // A broken collector must not break the scrape; its gauges keep their last values.
      }
    }
    const out: string[] = []
    for (const name of [...this.#families.keys()].sort()) {
      const f = this.#families.get(name)!
      if (f.series.size === 0) continue
      out.push(`# HELP ${name} ${f.help.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'))}`)
      out.push(`# TYPE ${name} ${f.type}`)
      for (const key of [...f.series.keys()].sort()) {
        if (f instanceof HistogramFamily) renderHistogram(out, f, key)
        else out.push(`${name}${key === '' ? '' : `{${key}}`} ${formatSampleValue(f.series.get(key)!.v)}`)
      }
    }
    return out.length === 0 ? '' : `${out.join('\n')}\n`
  }

  #register<F extends AnyFamily>(family: F): F {
    const old = this.#families.get(family.name)
    if (old === undefined) {
      this.#families.set(family.name, family)
      return family
    }
    const same =
      old.type === family.type &&
      old.labelNames.join() === family.labelNames.join() &&
      (!(old instanceof HistogramFamily) || old.buckets.join() === (family as HistogramFamily).buckets.join())
    if (!same) {
      throw invalid(
        `metric ${family.name} is already registered as a ${old.type} with labels [${old.labelNames.join(', ')}]` +
          (old instanceof HistogramFamily ? ` and buckets [${old.buckets.join(', ')}]` : ''),
      )
    }
    return old as F
  }
}

function renderHistogram(out: string[], f: HistogramFamily, key: string): void {
  const s = f.series.get(key)!
  const prefix = key === '' ? '' : `${key},`
  let cumulative = 0
  f.buckets.forEach((b, i) => {
    cumulative += s.counts[i]!
    out.push(`${f.name}_bucket{${prefix}le="${formatSampleValue(b)}"} ${cumulative}`)
  })
  out.push(`${f.name}_bucket{${prefix}le="+Inf"} ${s.count}`)
  const labels = key === '' ? '' : `{${key}}`
  out.push(`${f.name}_sum${labels} ${formatSampleValue(s.sum)}`)
  out.push(`${f.name}_count${labels} ${s.count}`)
}
