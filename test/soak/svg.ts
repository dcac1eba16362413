/**
 * @module svg — the RSS curve of a soak run as a standalone SVG: one line per process over
 * time, process replacements as separate lines in their slot's colour, fault markers along
 * the top, and the chaos phase shaded. Plain string building; no charting dependency.
 */

/** One line of the chart. */
export interface Series {
  /** Legend label (a slot such as `operator-1`); lines with the same label share a colour. */
  label: string
  points: { t: number; value: number }[]
}

/** A vertical marker (a fault). */
export interface Marker {
  t: number
  kind: string
}

/** Options of {@link rssChart}. */
export interface ChartOptions {
  title: string
  /** Unit of the values, for the y axis. */
  unit: string
  /** Shaded span (the chaos phase), in the same time unit as the points. */
  shade?: { from: number; to: number; label: string }
  markers?: Marker[]
  width?: number
  height?: number
  /** The x axis's label (default `seconds since start`). */
  xLabel?: string
  /** Both axes logarithmic (powers of ten, a dot on each point): for values over several decades, e.g. a benchmark's sizes. Points at or below 0 are left out. */
  log?: boolean
}

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22']
const MARKER_COLOURS = [
  '#d62728',
  '#7f7f7f',
  '#bcbd22',
  '#17becf',
  '#e377c2',
  '#8c564b',
  '#9467bd',
  '#2ca02c',
  '#ff7f0e',
]

/** Escapes text for SVG. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`)
}

/** A "nice" step (1, 2 or 5 × 10ⁿ) giving about `count` ticks over `span`. */
export function niceStep(span: number, count: number): number {
  if (!(span > 0)) return 1
  const raw = span / count
  const mag = 10 ** Math.floor(Math.log10(raw))
  const norm = raw / mag
  return (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(1))

/** A power of ten in short form: 10, 100, 1k, 10k, 100k, 1M. */
function decadeLabel(v: number): string {
  return v >= 1e6 ? `${v / 1e6}M` : v >= 1e3 ? `${v / 1e3}k` : String(v)
}

/** Powers of ten from `lo` to `hi` (ticks of a log axis). */
function decades(lo: number, hi: number): number[] {
  const out: number[] = []
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e)
  return out
}

/** The chart. Time is in seconds (or what `xLabel` says); values in `unit`. */
export function rssChart(series: readonly Series[], options: ChartOptions): string {
  const width = options.width ?? 960
  const height = options.height ?? 420
  const pad = { left: 64, right: 180, top: 56, bottom: 48 }
  const plotW = width - pad.left - pad.right
  const plotH = height - pad.top - pad.bottom
  const log = options.log === true
  if (log) series = series.map((s) => ({ ...s, points: s.points.filter((p) => p.t > 0 && p.value > 0) }))
  const all = series.flatMap((s) => s.points)
  const tMax = Math.max(1, ...all.map((p) => p.t), options.shade?.to ?? 0)
  const vMax = Math.max(1, ...all.map((p) => p.value)) * (log ? 1 : 1.1)
  // A log axis spans whole decades around the points.
  const tTicks = log ? decades(Math.min(...all.map((p) => p.t)), tMax) : []
  const vTicks = log ? decades(Math.min(...all.map((p) => p.value)), vMax) : []
  const logPos = (v: number, ticks: number[]): number =>
    (Math.log10(v) - Math.log10(ticks[0]!)) / (Math.log10(ticks.at(-1)!) - Math.log10(ticks[0]!) || 1)
  const x = (t: number): number => pad.left + (log ? logPos(t, tTicks) : t / tMax) * plotW
  const y = (v: number): number => pad.top + plotH - (log ? logPos(v, vTicks) : v / vMax) * plotH
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${pad.left}" y="22" font-size="15" font-weight="bold">${escapeXml(options.title)}</text>`,
  )
  if (options.shade) {
    const { from, to, label } = options.shade
    out.push(
      `<rect x="${x(from).toFixed(1)}" y="${pad.top}" width="${(x(to) - x(from)).toFixed(1)}" height="${plotH}" fill="#fff3e0"/>`,
      `<text x="${(x(from) + 4).toFixed(1)}" y="${pad.top + 14}" fill="#b26a00">${escapeXml(label)}</text>`,
    )
  }
  // Grid and axes.
  const vStep = niceStep(vMax, 6)
  const vAt = log ? vTicks : Array.from({ length: Math.floor(vMax / vStep) + 1 }, (_, i) => i * vStep)
  for (const v of vAt)
    out.push(
      `<line x1="${pad.left}" x2="${pad.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e0e0e0"/>`,
      `<text x="${pad.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${log ? decadeLabel(v) : fmt(v)}</text>`,
    )
  const tStep = niceStep(tMax, 10)
  const tAt = log ? tTicks : Array.from({ length: Math.floor(tMax / tStep) + 1 }, (_, i) => i * tStep)
  for (const t of tAt)
    out.push(
      `<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${pad.top + plotH}" y2="${pad.top + plotH + 4}" stroke="#333"/>`,
      `<text x="${x(t).toFixed(1)}" y="${pad.top + plotH + 18}" text-anchor="middle">${log ? decadeLabel(t) : fmt(t)}</text>`,
    )
  out.push(
    `<line x1="${pad.left}" x2="${pad.left + plotW}" y1="${pad.top + plotH}" y2="${pad.top + plotH}" stroke="#333"/>`,
    `<line x1="${pad.left}" x2="${pad.left}" y1="${pad.top}" y2="${pad.top + plotH}" stroke="#333"/>`,
    `<text x="${pad.left + plotW / 2}" y="${height - 10}" text-anchor="middle">${escapeXml(options.xLabel ?? 'seconds since start')}</text>`,
    `<text transform="translate(16 ${pad.top + plotH / 2}) rotate(-90)" text-anchor="middle">${escapeXml(options.unit)}</text>`,
  )
  // Fault markers: a short tick per fault in a band above the plot, coloured by kind.
  const kinds = [...new Set((options.markers ?? []).map((m) => m.kind))]
  for (const m of options.markers ?? []) {
    const colour = MARKER_COLOURS[kinds.indexOf(m.kind) % MARKER_COLOURS.length]
    const row = kinds.indexOf(m.kind) % 3
    const y0 = pad.top - 20 + row * 6
    out.push(
      `<line x1="${x(m.t).toFixed(1)}" x2="${x(m.t).toFixed(1)}" y1="${y0}" y2="${y0 + 5}" stroke="${colour}" stroke-width="1.5"><title>${escapeXml(`${m.kind} at ${fmt(m.t)} s`)}</title></line>`,
    )
  }
  // Lines.
  const labels = [...new Set(series.map((s) => s.label))]
  for (const s of series) {
    if (s.points.length === 0) continue
    const colour = PALETTE[labels.indexOf(s.label) % PALETTE.length]
    const d = s.points.map((p) => `${x(p.t).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ')
    out.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="1.6" points="${d}"><title>${escapeXml(s.label)}</title></polyline>`,
    )
    if (log)
      for (const p of s.points)
        out.push(
          `<circle cx="${x(p.t).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="3.5" fill="${colour}"><title>${escapeXml(`${s.label}: ${fmt(p.value)} at ${fmt(p.t)}`)}</title></circle>`,
        )
  }
  // Legends: processes, then fault kinds.
  let ly = pad.top + 4
  const lx = pad.left + plotW + 16
  for (const [i, label] of labels.entries()) {
    out.push(
      `<line x1="${lx}" x2="${lx + 18}" y1="${ly}" y2="${ly}" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="3"/>`,
      `<text x="${lx + 24}" y="${ly + 4}">${escapeXml(label)}</text>`,
    )
    ly += 18
  }
  if (kinds.length > 0) {
    ly += 10
    out.push(`<text x="${lx}" y="${ly}" font-weight="bold">faults (top band)</text>`)
    ly += 16
    for (const [i, kind] of kinds.entries()) {
      out.push(
        `<line x1="${lx + 8}" x2="${lx + 8}" y1="${ly - 6}" y2="${ly + 2}" stroke="${MARKER_COLOURS[i % MARKER_COLOURS.length]}" stroke-width="2"/>`,
        `<text x="${lx + 24}" y="${ly + 2}">${escapeXml(kind)}</text>`,
      )
      ly += 16
    }
  }
  out.push('</svg>')
  return `${out.join('\n')}\n`
}
