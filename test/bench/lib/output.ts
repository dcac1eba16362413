/**
 * @module output — writes a run's results folder: summary.md, one Markdown file and one SVG
 * per workload, and raw.json, from which `run.ts --from` renders the same folder again.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { PeerId } from './peers.ts'
import { markdownSection, svgChart, type WorkloadReport } from './report.ts'
import { findings, headlinePicks, summaryTable, targets } from './summary.ts'

/** Everything a results folder is made from (JSON-serialisable: this is raw.json). */
export interface RunRecord {
  date: string
  quick: boolean
  /** The environment table (Markdown). */
  environment: string
  /** One line under each chart title. */
  subtitle: string
  bigPods: number
  watchCase: string
  peers: PeerId[]
  reports: WorkloadReport[]
}

export const CAVEAT =
  'The machine is noisy: 2 cores shared by the apiserver, etcd, the driver and the measured process, with other work running; absolute numbers move from run to run. Quote the ratios (peer ÷ edgeop, computed per round, median), not the absolute times.'

/** Writes the folder; returns summary.md's text. */
export async function writeResults(outDir: string, run: RunRecord): Promise<string> {
  const picks = headlinePicks(run.bigPods, run.watchCase)
  const sections: string[] = []
  for (const r of run.reports) {
    const svg = r.samples.length ? `${r.id}.svg` : undefined
    if (svg) await writeFile(join(outDir, svg), svgChart(r, run.subtitle))
    const md = markdownSection(r, svg)
    await writeFile(join(outDir, `${r.id}.md`), `${md}\n${CAVEAT}\n`)
    sections.push(md)
  }
  const summary = [
    `# edgeop benchmarks — ${run.date}${run.quick ? ' (quick run)' : ''}`,
    '',
    run.environment,
    '',
    CAVEAT,
    '',
    '## Summary',
    '',
    "Median over the rounds, and each row's ratio to the workload's edgeop base row (median of per-round ratios). Every row names its wire format and flags.",
    '',
    summaryTable(run.reports, picks, run.peers),
    '',
    targets(run.reports, run.bigPods, run.watchCase),
    '',
    findings(run.reports, picks, run.peers),
    '',
    ...sections,
  ].join('\n')
  await writeFile(join(outDir, 'summary.md'), summary)
  await writeFile(join(outDir, 'raw.json'), `${JSON.stringify(run, null, 1)}\n`)
  return summary
}

export async function readRun(file: string): Promise<RunRecord> {
  return JSON.parse(await readFile(file, 'utf8')) as RunRecord
}
