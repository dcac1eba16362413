/**
 * @module report — writes a soak report: `soak-report.json` (everything measured),
 * `soak-report.md` (for people and for committing) and `rss.svg` (the RSS curve).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { LINK_PROFILES } from '../support/link-shape.ts'
import type { ResilienceReport } from './resilience.ts'
import type { FirstLast, SoakReport } from './results.ts'
import { FAULT_DESCRIPTIONS, FAULT_KINDS } from './schedule.ts'
import { rssChart, type Series } from './svg.ts'

export const REPORT_FILES = { json: 'soak-report.json', markdown: 'soak-report.md', svg: 'rss.svg' } as const

const n1 = (v: number | undefined): string => (v === undefined || Number.isNaN(v) ? '—' : v.toFixed(1))
const fl = (v: FirstLast | undefined): string => (v === undefined ? '—' : `${n1(v.first)} → ${n1(v.last)}`)
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

/** The RSS chart of a report. */
export function reportSvg(r: SoakReport): string {
  const series: Series[] = r.rssSeries.map((s) => ({
    label: s.slot,
    points: s.samples.map(([t, kb]) => ({ t, value: kb / 1024 })),
  }))
  return rssChart(series, {
    title: `edgeop chaos soak ${r.startedAt.slice(0, 10)}: RSS per process (${r.minutes} min chaos, seed ${r.seed})`,
    unit: 'RSS (MiB)',
    shade: { from: r.chaosS.from, to: r.chaosS.to, label: 'chaos' },
    markers: r.faults.records
      .filter((f) => f.kind !== 'drop-all' && f.kind !== 'drop-next' && f.error === undefined)
      .map((f) => ({ t: f.atMs / 1000, kind: f.kind })),
  })
}

/** `dependency from→to` as table cells. */
function transitionCells(key: string): string {
  const [dependency = '', phases = ''] = key.split(' ')
  const [from = '', to = ''] = phases.split('→')
  return `${cell(dependency)} | ${cell(from)} | ${cell(to)}`
}

/** The report's section on the circuit breaker and parked keys (`r` absent: a report made before they were measured). */
export function resilienceMarkdown(r: ResilienceReport | undefined): string[] {
  const out = ['', '## Circuit breaker and parked keys', '']
  if (r === undefined) return [...out, 'Not measured in this run.']
  const totals = Object.entries(r.breaker.transitions).sort(([a], [b]) => a.localeCompare(b))
  out.push(
    "Circuit breaker transitions (`edgeop_circuit_breaker_transitions_total`, each operator process's last scrape, summed over processes):",
    '',
  )
  if (totals.every(([, n]) => n === 0)) out.push('None: the breaker stayed closed.')
  else {
    out.push('| Dependency | From | To | Transitions |', '|---|---|---|--:|')
    for (const [k, n] of totals) if (n > 0) out.push(`| ${transitionCells(k)} | ${n} |`)
    const byProcess = Object.entries(r.breaker.byProcess)
      .map(([p, counts]) => [p, Object.entries(counts).filter(([, n]) => n > 0)] as const)
      .filter(([, counts]) => counts.length > 0)
      .map(([p, counts]) => `${p}: ${counts.map(([k, n]) => `${k} ${n}`).join(', ')}`)
    out.push('', `By process: ${byProcess.join('; ')}.`)
    out.push(
      '',
      '<details><summary>When each transition was first scraped (metrics every second)</summary>',
      '',
      '| At (s) | Process | Transition | Count |',
      '|--:|---|---|--:|',
      ...r.breaker.timeline.map(
        (c) => `| ${(c.atMs / 1000).toFixed(1)} | ${c.process} | ${cell(c.transition)} | ${c.count} |`,
      ),
      '',
      '</details>',
    )
  }
  const p = r.parked
  out.push(
    '',
    `Parked keys (\`edgeop_controller_parked_keys\`, every scrape): peak ${p.peak}${p.peakAtMs === undefined ? '' : ` at +${(p.peakAtMs / 1000).toFixed(1)} s (${p.peakProcess})`}. ` +
      (p.atEnd === undefined
        ? `At the end: \`GET /debug/parked\` not read (${cell(p.endError ?? 'no leader')}).`
        : `At the end, the leader's (${p.endProcess}) \`GET /debug/parked\`: ${p.atEnd.length} keys.`),
  )
  if (p.atEnd !== undefined && p.atEnd.length > 0)
    out.push(
      '',
      '| Controller | Key | Reason | Error class | Attempts | Last error |',
      '|---|---|---|---|--:|---|',
      ...p.atEnd.map(
        (k) =>
          `| ${cell(k.controller)} | ${cell(k.key)} | ${cell(k.reason)} | ${cell(k.errorClass)} | ${k.attempts} | ${cell(k.lastError)} |`,
      ),
    )
  return out
}

/** The Markdown report. */
export function reportMarkdown(r: SoakReport): string {
  const out: string[] = []
  const verdict = r.passed ? 'PASSED' : 'FAILED'
  out.push(
    `# edgeop chaos soak — ${r.startedAt.slice(0, 10)} — ${verdict}`,
    '',
    `${r.minutes} min of chaos, seed ${r.seed}${r.sabotage ? `, **sabotage: ${r.sabotage}**` : ''}${r.link ? `, over the ${r.link} link (${linkText(r.link)})` : ''}. ` +
      `Machine: ${r.machine.cpus} × ${r.machine.model}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}. ` +
      `Control plane: ${r.machine.kubernetes}.`,
    '',
    `Phases (s): setup ${r.phasesS.setup}, chaos ${r.phasesS.chaos}, settle ${r.phasesS.settle}, quiet ${r.phasesS.quiet}, teardown ${r.phasesS.teardown}; total ${r.phasesS.total}.`,
    '',
    (r.sharded
      ? `${r.replicas} sharded operator replicas (\`edgeop run --shard\`, at debug level; killed at random, added and removed) and three node agents (\`edgeop agent\`), `
      : 'Two leader-elected operator replicas (`edgeop run --leader-elect`) and three node agents (`edgeop agent`), ') +
      'all `dist/edgeop.cjs` in their own processes under the RBAC of `deploy/`, talk to kube-apiserver through ' +
      'the fault proxy; kube-controller-manager, kube-scheduler and KWOK make Deployments available. ' +
      `Settings: ${Object.entries(r.settings)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
    '',
    '![RSS per process](rss.svg)',
    '',
    '## Invariants',
    '',
    '| Invariant | Bound | Checks | Failures | Result |',
    '|---|---|--:|--:|---|',
  )
  for (const i of r.invariants)
    out.push(
      `| **${i.id}**: ${cell(i.title)} | ${cell(i.bound)} | ${i.checks} | ${i.failures} | ${i.passed ? 'pass' : '**FAIL**'} |`,
    )
  for (const i of r.invariants) {
    if (i.messages.length === 0 && i.notes.length === 0) continue
    out.push('', `### ${i.id}`, '')
    for (const note of i.notes) out.push(`- ${note}`)
    for (const m of i.messages) out.push(`- FAIL ${m}`)
  }

  out.push('', '## Faults injected', '', '| Kind | Planned | Injected | What |', '|---|--:|--:|---|')
  for (const k of FAULT_KINDS.filter((k) => (r.faults.planned[k] ?? 0) + (r.faults.injected[k] ?? 0) > 0))
    out.push(`| ${k} | ${r.faults.planned[k]} | ${r.faults.injected[k]} | ${FAULT_DESCRIPTIONS[k]} |`)
  out.push(
    '',
    `${r.faults.injectedResponses} requests were answered by a fault (status, drop, stall) at the proxy. ` +
      'Hits: requests a proxy rule answered; for db-timeout-after-commit, the writes committed and never answered; for rbac-revoked, the 403s the apiserver answered the operators. ' +
      'Allowance: how long after a fault ends the AppServices may still be catching up because of it (the convergence bound counts from then).',
    '',
    '<details><summary>Every fault except connection drops</summary>',
    '',
    '| At (s) | Kind | Detail | Hits | Took (ms) | Allowance (s) | Error |',
    '|--:|---|---|--:|--:|--:|---|',
  )
  for (const f of r.faults.records.filter((x) => x.kind !== 'drop-all' && x.kind !== 'drop-next'))
    out.push(
      `| ${(f.atMs / 1000).toFixed(1)} | ${f.kind} | ${cell(f.detail)} | ${f.hits ?? ''} | ${f.durationMs ?? ''} | ${f.allowanceMs === undefined ? '' : n1(f.allowanceMs / 1000)} | ${cell(f.error ?? '')} |`,
    )
  out.push('', '</details>')

  const w = r.requests.window10s
  out.push(
    '',
    '## API requests (counted at the proxy)',
    '',
    `${r.requests.total} requests in ${r.phasesS.total} s (${Object.entries(r.requests.byIdentity)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}). ` +
      `Per 10 s window: mean ${n1(w.mean)}, p50 ${n1(w.p50)}, p99 ${n1(w.p99)}, max ${n1(w.max)} req/s (bound ${r.requests.boundPerS}). ` +
      `Quiet window: ${r.requests.quietPerS === undefined ? '—' : r.requests.quietPerS.toFixed(2)} req/s (bound ${r.requests.quietBoundPerS}).`,
  )
  out.push(
    '',
    '<details><summary>Requests by identity, verb and resource</summary>',
    '',
    '| Requests | Count |',
    '|---|--:|',
    ...r.requests.byShape.slice(0, 30).map((x) => `| ${cell(x.request)} | ${x.count} |`),
    '',
    '</details>',
  )
  if (r.requests.busySeconds.length > 0) {
    out.push('', 'Busiest seconds (≥ 40 requests):', '')
    for (const b of r.requests.busySeconds.slice(0, 10))
      out.push(`- +${b.second} s: ${b.requests} requests — ${b.top.join('; ')}`)
  }
  const l = r.convergence.latencyS
  out.push(
    '',
    '## Convergence',
    '',
    `Time from the driver's last change to an AppService until the checker first saw it converged (checker polls every 3 s): ` +
      `n ${l.n}, p50 ${n1(l.p50)} s, p90 ${n1(l.p90)} s, p99 ${n1(l.p99)} s, max ${n1(l.max)} s (bound ${r.convergence.boundS} s). ` +
      `After the chaos everything converged in ${r.convergence.settleS === undefined ? '— (did not)' : `${n1(r.convergence.settleS)} s`}.`,
    '',
    '## Driver',
    '',
    `${r.driver.appServicesCreated} AppServices and ${r.driver.nodeConfigsCreated} NodeConfigs created over the run. ` +
      `Operations (ok/failed): ${Object.entries(r.driver.ops)
        .map(([k, v]) => `${k} ${v.ok}/${v.failed}`)
        .join(', ')}.`,
  )
  if (r.driver.errors.length > 0) {
    out.push('', 'Driver errors (writes fail while the apiserver restarts):', '')
    for (const e of r.driver.errors.slice(0, 10)) out.push(`- ${cell(e)}`)
  }

  out.push(...resilienceMarkdown(r.resilience))
  out.push(
    '',
    r.sharded ? '## Membership (each replica holding its own Lease)' : '## Leadership',
    '',
    r.leadership.intervals
      .map((i) => `${i.process} ${i.fromS.toFixed(1)}–${i.toS.toFixed(1)} s`)
      .join('; ') || 'none',
    '',
    `${r.sharded ? 'Takeovers (a killed or removed member until none of its objects is labelled with it)' : 'Failovers after SIGKILL'}: ${
      r.leadership.failovers
        .map(
          (f) =>
            `${f.victim} → ${f.successor ?? '?'} in ${f.ms === undefined ? '—' : `${(f.ms / 1000).toFixed(1)} s`}`,
        )
        .join('; ') || 'none'
    }.`,
    '',
    '## Processes and RSS',
    '',
    "Heap and external memory are the process's own gauges, first → last scrape (`nodejs_heap_size_total_bytes`,",
    '`nodejs_heap_size_used_after_major_gc_bytes`, `nodejs_external_memory_bytes`). Live is the heap used just after',
    'a full GC: a leak shows as live rising; V8 sizing its heap, as total rising while live stays.',
    '',
    '| Process | Lived (s) | End | RSS first / max / last (MiB) | Heap total (MiB) | Live heap (MiB) | External (MiB) | RSS growth after warm-up |',
    '|---|---|---|---|---|---|---|---|',
  )
  for (const p of r.processes)
    out.push(
      `| ${p.id} | ${p.startedAtS.toFixed(0)}–${p.endedAtS === undefined ? 'end' : p.endedAtS.toFixed(0)} | ${p.exit ?? ''} | ${
        p.rssMiB ? `${n1(p.rssMiB.first)} / ${n1(p.rssMiB.max)} / ${n1(p.rssMiB.last)}` : '—'
      } | ${fl(p.heapMiB?.total)} | ${fl(p.heapMiB?.live)} | ${fl(p.heapMiB?.external)} | ${p.rss.assessed ? `${n1(p.rss.baselineKb / 1024)} → ${n1(p.rss.finalKb / 1024)} MiB (${(p.rss.growth * 100).toFixed(1)} %)` : cell(`not assessed: ${p.rss.reason}`)} |`,
    )
  out.push(
    '',
    `Reproduce: \`npm run soak -- --minutes ${r.minutes} --seed ${r.seed}${r.sharded ? ` --sharded --replicas ${r.replicas}` : ''}${r.link ? ` --link ${r.link}` : ''}\` (or \`node test/soak/run.ts\`).`,
    '',
  )
  return out.join('\n')
}

/** Writes the three files into `dir`; returns their paths. */
export async function writeReport(r: SoakReport, dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true })
  const files = [
    [join(dir, REPORT_FILES.json), `${JSON.stringify(r, null, 2)}\n`],
    [join(dir, REPORT_FILES.markdown), reportMarkdown(r)],
    [join(dir, REPORT_FILES.svg), reportSvg(r)],
  ] as const
  for (const [path, text] of files) await writeFile(path, text)
  return files.map(([path]) => path)
}

/** A link profile's RTT and bandwidth, as the report names them (its loss is not applied on loopback). */
function linkText(name: string): string {
  const p = LINK_PROFILES[name]
  return p ? `${p.rttMs} ms RTT, ${p.bitsPerSecond / 1000} kbit/s, no loss on loopback` : 'unknown profile'
}
