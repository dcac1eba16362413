/**
 * @module nodeconfig-fleet-chart — the fleet bench's chart: watch events of one rollout against the
 * number of nodes, both designs, log scale, drawn by the soak's SVG line chart.
 *
 *   node test/bench/nodeconfig-fleet-chart.ts test/bench/results/2026-12-02/nodeconfig-fleet.jsonl
 *
 * Reads the rows `npm run bench:fleet -- --json <file>` appended (a row that did not finish is left
 * out), adds the shared status's computed N² events (N status writes, each to N agents), and writes
 * the SVG beside the input.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { rssChart, type Series } from '../soak/svg.ts'

/** One line of the bench's `--json` file (the fields the chart reads). */
interface Row {
  design: 'new' | 'old'
  n: number
  events: number
  ms: number | undefined
  /** A row measured before a change, kept for comparison: its label. */
  label?: string
}

const input = process.argv[2]
if (!input) throw new Error('usage: node test/bench/nodeconfig-fleet-chart.ts <rows.jsonl>')
const rows = (await readFile(input, 'utf8'))
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Row)
const finished = rows.filter((r) => r.ms !== undefined)
const labelOf = (r: Row): string => r.label ?? (r.design === 'new' ? 'reports + aggregator' : 'shared status')
const series: Series[] = [...new Set(finished.map(labelOf))].map((label) => ({
  label,
  points: finished
    .filter((r) => labelOf(r) === label)
    .sort((a, b) => a.n - b.n)
    .map((r) => ({ t: r.n, value: r.events })),
}))
const sizes = [...new Set(rows.map((r) => r.n))].sort((a, b) => a - b)
series.push({ label: 'shared status, N²', points: sizes.map((n) => ({ t: n, value: n * n })) })
const svg = rssChart(series, {
  title: 'One NodeConfig rollout: watch events delivered by fleet size (shared status, N²: computed)',
  unit: 'watch events (log)',
  xLabel: 'nodes (log)',
  log: true,
  width: 1040,
})
const out = input.replace(/\.jsonl$/, '.svg')
await writeFile(out, svg)
console.log(out)
