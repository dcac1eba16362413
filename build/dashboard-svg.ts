/**
 * @module build/dashboard-svg — draws config/monitoring/dashboard.json's panels as one SVG from a
 * Prometheus server's answers (`/api/v1/query_range` of each panel's queries), since Grafana is not
 * at hand: the dashboard picture of docs/monitoring.md. Not part of the artifact.
 *
 *   node build/dashboard-svg.ts <prometheus-url> <out.svg> [minutes=10]
 *
 * test/integration/monitoring.test.ts draws it from a Prometheus scraping a running operator (and
 * writes docs/dashboard.svg when EDGEOP_DASHBOARD_SVG=1).
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './artifact.ts'
import { DASHBOARD_FILE, MONITORING_DIR } from './monitoring.ts'

/** One query of a panel. */
export interface PanelTarget {
  expr: string
  legendFormat?: string
}

/** A dashboard panel, as dashboard.json holds it. */
export interface Panel {
  title: string
  fieldConfig?: { defaults?: { unit?: string } }
  targets: PanelTarget[]
}

/** One drawn line: its legend and its points (unix seconds, value). */
export interface Line {
  legend: string
  points: [number, number][]
}

/** The dashboard's panels (config/monitoring/dashboard.json). */
export function dashboardPanels(root = ROOT): Panel[] {
  return (JSON.parse(readFileSync(join(root, MONITORING_DIR, DASHBOARD_FILE), 'utf8')) as { panels: Panel[] })
    .panels
}

/** A query as Prometheus receives it: Grafana's `$job` variable set to every job. */
export function concreteQuery(expr: string): string {
  return expr.replaceAll('$job', '.+')
}

/** Grafana's `{{label}}` legend filled from a series' labels. */
export function legendOf(format: string | undefined, labels: Record<string, string>): string {
  return (
    (format ?? '').replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l: string) => labels[l] ?? '') ||
    JSON.stringify(labels)
  )
}

/** Each target of `panel` from `range` (a query_range call), as lines. */
export async function panelLines(
  panel: Panel,
  range: (query: string) => Promise<{ metric: Record<string, string>; values: [number, string][] }[]>,
): Promise<Line[]> {
  const lines: Line[] = []
  for (const t of panel.targets) {
    for (const s of await range(concreteQuery(t.expr))) {
      lines.push({
        legend: legendOf(t.legendFormat, s.metric),
        points: s.values
          .map(([ts, v]) => [ts, Number(v)] as [number, number])
          .filter(([, v]) => Number.isFinite(v)),
      })
    }
  }
  return lines
}

const COLORS = ['#7eb26d', '#eab839', '#6ed0e0', '#ef843c', '#e24d42', '#1f78c1', '#ba43a9', '#705da0']
const W = 420
const H = 230
const COLS = 3
const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)

/** A value in `unit` (Grafana's unit ids the dashboard uses), short. */
export function formatValue(v: number, unit = 'short'): string {
  const si = (x: number, suffix: string, base = 1000, units = ['', 'k', 'M', 'G', 'T']) => {
    let i = 0
    while (Math.abs(x) >= base && i < units.length - 1) {
      x /= base
      i++
    }
    return `${Number(x.toPrecision(3))}${i || suffix ? ' ' : ''}${units[i]}${suffix}`
  }
  if (unit === 'bytes') return si(v, 'B', 1024, ['', 'Ki', 'Mi', 'Gi', 'Ti'])
  if (unit === 'percentunit') return `${Number((v * 100).toPrecision(3))}%`
  if (unit === 's')
    return v < 1 && v > 0 ? `${Number((v * 1000).toPrecision(3))} ms` : `${Number(v.toPrecision(3))} s`
  if (unit === 'reqps') return si(v, '/s')
  return si(v, '')
}

/** One panel at (x, y): frame, title, axes with the max and min, lines and up to 5 legend rows. */
function drawPanel(p: Panel, lines: Line[], x: number, y: number, t0: number, t1: number): string {
  const unit = p.fieldConfig?.defaults?.unit
  const plot = { x: x + 56, y: y + 30, w: W - 72, h: H - 110 }
  const values = lines.flatMap((l) => l.points.map(([, v]) => v))
  const max = Math.max(0, ...values)
  const min = Math.min(0, ...values)
  const span = max - min || 1
  const px = (t: number) => plot.x + ((t - t0) / (t1 - t0 || 1)) * plot.w
  const py = (v: number) => plot.y + plot.h - ((v - min) / span) * plot.h
  const out = [
    `<rect x="${x + 4}" y="${y + 4}" width="${W - 8}" height="${H - 8}" rx="4" fill="#181b1f" stroke="#2c3235"/>`,
    `<text x="${x + 14}" y="${y + 21}" fill="#ccccdc" font-size="13" font-weight="600">${esc(p.title)}</text>`,
    `<line x1="${plot.x}" y1="${plot.y + plot.h}" x2="${plot.x + plot.w}" y2="${plot.y + plot.h}" stroke="#2c3235"/>`,
    `<line x1="${plot.x}" y1="${plot.y}" x2="${plot.x + plot.w}" y2="${plot.y}" stroke="#2c3235" stroke-dasharray="2,3"/>`,
    `<text x="${plot.x - 4}" y="${plot.y + 4}" fill="#8e8e8e" font-size="10" text-anchor="end">${esc(formatValue(max, unit))}</text>`,
    `<text x="${plot.x - 4}" y="${plot.y + plot.h + 4}" fill="#8e8e8e" font-size="10" text-anchor="end">${esc(formatValue(min, unit))}</text>`,
  ]
  if (lines.length === 0)
    out.push(
      `<text x="${plot.x + plot.w / 2}" y="${plot.y + plot.h / 2}" fill="#8e8e8e" font-size="12" text-anchor="middle">No data</text>`,
    )
  lines.forEach((l, i) => {
    const color = COLORS[i % COLORS.length]
    const pts = l.points.map(([t, v]) => `${px(t).toFixed(1)},${py(v).toFixed(1)}`).join(' ')
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts}"/>`)
    if (i < 5) {
      const last = l.points.at(-1)?.[1]
      const text = `${l.legend}${last === undefined ? '' : `  ${formatValue(last, unit)}`}`
      const ly = plot.y + plot.h + 18 + i * 13
      out.push(
        `<rect x="${plot.x - 40}" y="${ly - 8}" width="10" height="3" fill="${color}"/>`,
        `<text x="${plot.x - 26}" y="${ly - 3}" fill="#ccccdc" font-size="10">${esc(text.length > 62 ? `${text.slice(0, 61)}…` : text)}</text>`,
      )
    } else if (i === 5) {
      out.push(
        `<text x="${plot.x - 26}" y="${plot.y + plot.h + 18 + 5 * 13 - 3}" fill="#8e8e8e" font-size="10">+${lines.length - 5} more</text>`,
      )
    }
  })
  return out.join('\n')
}

/** The whole dashboard over [t0, t1] (unix seconds), panels in `dashboard.json` order, three a row. */
export function renderDashboardSvg(
  title: string,
  panels: { panel: Panel; lines: Line[] }[],
  t0: number,
  t1: number,
): string {
  const rows = Math.ceil(panels.length / COLS)
  const width = COLS * W
  const height = rows * H + 40
  const when = `${new Date(t0 * 1000).toISOString().slice(0, 16)} – ${new Date(t1 * 1000).toISOString().slice(11, 16)} UTC`
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Inter, Helvetica, Arial, sans-serif">`,
    `<title>${esc(title)} dashboard, ${esc(when)}, drawn from Prometheus</title>`,
    `<rect width="${width}" height="${height}" fill="#111217"/>`,
    `<text x="12" y="26" fill="#ccccdc" font-size="17" font-weight="600">${esc(title)}</text>`,
    `<text x="${width - 12}" y="26" fill="#8e8e8e" font-size="12" text-anchor="end">${esc(when)} · drawn by build/dashboard-svg.ts from Prometheus</text>`,
    ...panels.map(({ panel, lines }, i) =>
      drawPanel(panel, lines, (i % COLS) * W, 40 + Math.floor(i / COLS) * H, t0, t1),
    ),
    '</svg>',
    '',
  ].join('\n')
}

/** Queries `prometheus` for every panel over the last `minutes` and returns the SVG. */
export async function dashboardSvgFrom(
  prometheus: string,
  minutes = 10,
  end = Date.now() / 1000,
): Promise<string> {
  const start = end - minutes * 60
  const step = Math.max(1, Math.round((minutes * 60) / 200))
  const range = async (query: string) => {
    const url = `${prometheus}/api/v1/query_range?${new URLSearchParams({ query, start: String(start), end: String(end), step: String(step) })}`
    const body = (await (await fetch(url)).json()) as {
      status: string
      error?: string
      data: { result: { metric: Record<string, string>; values: [number, string][] }[] }
    }
    if (body.status !== 'success') throw new Error(`${query}: ${body.error}`)
    return body.data.result
  }
  const panels = []
  for (const panel of dashboardPanels()) panels.push({ panel, lines: await panelLines(panel, range) })
  return renderDashboardSvg('edgeop', panels, start, end)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [url, out, minutes] = process.argv.slice(2)
  if (!url || !out) {
    process.stderr.write('usage: node build/dashboard-svg.ts <prometheus-url> <out.svg> [minutes=10]\n')
    process.exit(2)
  }
  writeFileSync(out, await dashboardSvgFrom(url, Number(minutes ?? 10)))
}
