/**
 * @module report — Markdown tables and SVG bar charts (plain string building, no dependency).
 */
import type { PeerId } from './peers.ts'
import { type MetricDef, pairRatios, rowOf, type Sample, type Spread, spread, values } from './stats.ts'

/** What a workload hands to the report. */
export interface WorkloadReport {
  id: string
  title: string
  /** What was measured and how (Markdown lines). */
  method: string[]
  metrics: MetricDef[]
  /** The metric drawn in the SVG chart. */
  chartMetric: string
  cases: string[]
  peers: PeerId[]
  samples: Sample[]
  /** edgeop's case a case is compared with, when not the same (case → edgeop's case). */
  baseCases?: Record<string, string>
  /** The edgeop row every ratio is taken against (default `edgeop`, the row of older results). */
  baseRow?: string
  /** Measured facts that are not samples (e.g. the Pod's size in each wire format), by name. */
  facts?: Record<string, number>
  /** Findings and honest limits (Markdown lines). */
  notes: string[]
  /** Markdown appended after the table. */
  extra?: string
}

export const PEER_COLORS: Record<PeerId, string> = {
  edgeop: '#2f6fdf',
  'client-node': '#e0912f',
  'client-go': '#2ea58a',
  'kube-rs': '#b5525c',
}

/** The rows of a report in order: by peer, then in the order they first appear in the samples. */
export function rowsOf(w: WorkloadReport): { row: string; peer: PeerId }[] {
  const out: { row: string; peer: PeerId }[] = []
  for (const p of w.peers)
    for (const s of w.samples)
      if (s.peer === p && !out.some((r) => r.row === rowOf(s))) out.push({ row: rowOf(s), peer: p })
  return out
}

/** A row's bar colour: its peer's colour, lighter for each further row of the same peer. */
function rowColor(rows: { row: string; peer: PeerId }[], row: string): { fill: string; opacity: number } {
  const r = rows.find((x) => x.row === row) as { row: string; peer: PeerId }
  const k = rows.filter((x) => x.peer === r.peer).findIndex((x) => x.row === row)
  return { fill: PEER_COLORS[r.peer], opacity: Math.max(0.3, 1 - 0.22 * k) }
}

export function fmt(x: number, digits?: number): string {
  if (!Number.isFinite(x)) return '–'
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2)
  return x.toLocaleString('en', { minimumFractionDigits: d, maximumFractionDigits: d })
}

function cell(s: Spread | undefined, m: MetricDef): string {
  if (s === undefined) return '–'
  const v = fmt(s.median, m.digits)
  return s.n > 1 ? `${v} (${fmt(s.min, m.digits)}–${fmt(s.max, m.digits)})` : v
}

export function ratioText(r: Spread | undefined): string {
  if (r === undefined) return ''
  const v = `×${fmt(r.median, 2)}`
  return r.n > 1 ? `${v} (${fmt(r.min, 2)}–${fmt(r.max, 2)})` : v
}

/** One row per case × peer; each metric as "median (min–max)", then ratios to edgeop. */
export function markdownTable(w: WorkloadReport): string {
  const baseRow = w.baseRow ?? 'edgeop'
  const head = ['case', 'row', ...w.metrics.map((m) => `${m.label}${m.unit ? ` (${m.unit})` : ''}`)]
  const ratioMetrics = w.metrics.filter((m) => m.key === w.chartMetric)
  head.push(...ratioMetrics.map((m) => `${m.label}: row ÷ ${baseRow}`))
  const rows: string[][] = []
  for (const c of w.cases) {
    for (const { row: p } of rowsOf(w)) {
      if (!w.samples.some((s) => s.case === c && rowOf(s) === p)) continue
      const r = [c, p, ...w.metrics.map((m) => cell(spread(values(w.samples, c, p, m.key)), m))]
      const base = w.baseCases?.[c] ?? c
      for (const m of ratioMetrics)
        r.push(
          p === baseRow && base === c
            ? '1'
            : ratioText(spread(pairRatios(w.samples, c, p, m.key, base, baseRow))),
        )
      rows.push(r)
    }
  }
  const align = head.map((_, i) => (i < 2 ? '---' : '---:'))
  return [head, align, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n')
}

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** A round upper bound and tick step for an axis reaching `max`. */
function niceScale(max: number): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.25 }
  const raw = max / 5
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = ([1, 2, 2.5, 5, 10].find((k) => k * mag >= raw) ?? 10) * mag
  return { top: Math.ceil(max / step) * step, step }
}

/** A grouped bar chart: one group per case, one bar per peer (median), whiskers min–max. */
export function svgChart(w: WorkloadReport, subtitle: string): string {
  const m = w.metrics.find((x) => x.key === w.chartMetric) as MetricDef
  const rows = rowsOf(w)
  const groups = w.cases
    .map((c) => ({
      c,
      bars: rows
        .map(({ row: p }) => ({ p, s: spread(values(w.samples, c, p, m.key)) }))
        .filter((b): b is { p: string; s: Spread } => b.s !== undefined),
    }))
    .filter((g) => g.bars.length > 0)
  const barW = 26
  const gap = 28
  const left = 74
  const top = 64
  const plotH = 260
  /** A group is as wide as its bars or its label, whichever is wider, plus the gap. */
  const groupW = (g: (typeof groups)[number]) => Math.max(g.bars.length * barW, g.c.length * 6.4) + gap
  const plotW = Math.max(
    420,
    groups.reduce((a, g) => a + groupW(g), 0),
  )
  const legend = `${m.label}${m.unit ? ` (${m.unit})` : ''} — ${m.better} is better; bar = median, whisker = min–max`
  const width = Math.max(left + plotW + 24, left + w.title.length * 9 + 24, left + legend.length * 6 + 24)
  const legendRows = rows.filter(({ row }) => groups.some((g) => g.bars.some((b) => b.p === row)))
  const legendPerLine = Math.max(1, Math.floor((width - left) / 250))
  const height = top + plotH + 60 + 18 * Math.ceil(legendRows.length / legendPerLine)
  const { top: ymax, step } = niceScale(Math.max(...groups.flatMap((g) => g.bars.map((b) => b.s.max))))
  const y = (v: number): number => top + plotH - (v / ymax) * plotH
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="${left}" y="22" font-size="15" font-weight="600">${esc(w.title)}</text>`,
    `<text x="${left}" y="40" fill="#555">${esc(legend)}</text>`,
    `<text x="${left}" y="54" fill="#888" font-size="10">${esc(subtitle)}</text>`,
  ]
  for (let v = 0; v <= ymax + step / 2; v += step) {
    out.push(
      `<line x1="${left}" x2="${left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e6e6e6"/>`,
      `<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#555">${esc(fmt(v, step < 1 ? 2 : step < 10 ? 1 : 0))}</text>`,
    )
  }
  let gx0 = left
  for (const g of groups) {
    const gw = groupW(g)
    const center = gx0 + gw / 2
    let x = center - (g.bars.length * barW) / 2 + 2
    for (const b of g.bars) {
      const h = (b.s.median / ymax) * plotH
      const color = rowColor(rows, b.p)
      out.push(
        `<rect x="${x}" y="${y(b.s.median).toFixed(1)}" width="${barW - 4}" height="${Math.max(0.5, h).toFixed(1)}" fill="${color.fill}" fill-opacity="${color.opacity}"><title>${esc(`${g.c} · ${b.p}: ${fmt(b.s.median, m.digits)} ${m.unit}`)}</title></rect>`,
      )
      if (b.s.n > 1) {
        const cx = x + (barW - 4) / 2
        out.push(
          `<line x1="${cx}" x2="${cx}" y1="${y(b.s.min).toFixed(1)}" y2="${y(b.s.max).toFixed(1)}" stroke="#222"/>`,
          `<line x1="${cx - 4}" x2="${cx + 4}" y1="${y(b.s.max).toFixed(1)}" y2="${y(b.s.max).toFixed(1)}" stroke="#222"/>`,
          `<line x1="${cx - 4}" x2="${cx + 4}" y1="${y(b.s.min).toFixed(1)}" y2="${y(b.s.min).toFixed(1)}" stroke="#222"/>`,
        )
      }
      out.push(
        `<text x="${x + (barW - 4) / 2}" y="${(Math.min(y(b.s.median), y(b.s.max)) - 4).toFixed(1)}" text-anchor="middle" font-size="9" fill="#333">${esc(fmt(b.s.median, m.digits))}</text>`,
      )
      x += barW
    }
    out.push(
      `<text x="${center}" y="${top + plotH + 16}" text-anchor="middle" fill="#222">${esc(g.c)}</text>`,
    )
    gx0 += gw
  }
  out.push(`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="#999"/>`)
  legendRows.forEach(({ row }, i) => {
    const lx = left + (i % legendPerLine) * 250
    const ly = top + plotH + 40 + 18 * Math.floor(i / legendPerLine)
    const color = rowColor(rows, row)
    out.push(
      `<rect x="${lx}" y="${ly}" width="12" height="12" fill="${color.fill}" fill-opacity="${color.opacity}"/>`,
      `<text x="${lx + 16}" y="${ly + 10}">${esc(row)}</text>`,
    )
  })
  out.push('</svg>')
  return `${out.join('\n')}\n`
}

/** The workload's Markdown section. */
export function markdownSection(w: WorkloadReport, svgFile: string | undefined): string {
  return [
    `## ${w.title}`,
    '',
    ...w.method,
    '',
    markdownTable(w),
    '',
    'Cells: median (min–max) over the rounds. Ratios: peer ÷ edgeop, computed per round and then the median (min–max) of those ratios.',
    ...(svgFile ? ['', `![${w.title}](${svgFile})`] : []),
    ...(w.extra ? ['', w.extra] : []),
    ...(w.notes.length ? ['', ...w.notes.map((n) => `- ${n}`)] : []),
    '',
  ].join('\n')
}
