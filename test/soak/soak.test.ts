/**
 * Unit tests of the soak's pure parts: the seeded generator, the fault schedule, the
 * invariant arithmetic (rates, RSS growth, leadership overlaps, duplicates), the ledger
 * and the SVG. The soak itself runs in test/integration/soak.test.ts.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { metricSum } from './fleet.ts'
import { Invariants } from './invariants.ts'
import { reportMarkdown } from './report.ts'
import type { SoakReport } from './results.ts'
import { createRng } from './rng.ts'
import {
  buildSchedule,
  countByKind,
  FAULT_KINDS,
  HEAD_MS,
  isSpacedOut,
  MIN_DURATION_MS,
  TAIL_MS,
} from './schedule.ts'
import { duplicates, leadershipOverlaps, percentile, rssGrowth, windowRates } from './stats.ts'
import { escapeXml, niceStep, rssChart } from './svg.ts'

test('rng: the same seed gives the same sequence; forks and other seeds differ', () => {
  const seq = (seed: number, label?: string) => {
    const r = createRng(seed, label)
    return Array.from({ length: 5 }, () => r.next())
  }
  assert.deepEqual(seq(1), seq(1))
  assert.notDeepEqual(seq(1), seq(2))
  assert.notDeepEqual(seq(1), seq(1, 'other'))
  const r = createRng(7)
  for (let i = 0; i < 1000; i++) {
    const v = r.int(3, 5)
    assert.ok(v >= 3 && v <= 5 && Number.isInteger(v))
  }
  const counts = { a: 0, b: 0 }
  for (let i = 0; i < 10_000; i++) counts[r.weighted({ a: 1, b: 3 })]++
  assert.ok(counts.b > counts.a * 2.5 && counts.b < counts.a * 3.5, JSON.stringify(counts))
})

test('schedule: a 2-minute run sees every kind of fault, spaced and inside the chaos phase', () => {
  for (const seed of [1, 2, 3, 42, 1234]) {
    const d = 120_000
    const s = buildSchedule(d, createRng(seed))
    const counts = countByKind(s)
    for (const k of FAULT_KINDS)
      assert.ok(counts[k] >= 1 || k === 'drop-next', `seed ${seed}: ${k} ${JSON.stringify(counts)}`)
    assert.ok(counts['drop-all'] + counts['drop-next'] >= 15, 'a drop every few seconds')
    assert.ok(isSpacedOut(s), `seed ${seed}: heavy faults spaced`)
    assert.ok(
      s.every((e, i) => i === 0 || e.atMs >= s[i - 1]!.atMs),
      'sorted',
    )
    assert.ok(
      s.every((e) => e.atMs >= HEAD_MS - 1 && e.atMs <= d - TAIL_MS),
      'inside the phase',
    )
  }
  assert.deepEqual(
    buildSchedule(120_000, createRng(9)),
    buildSchedule(120_000, createRng(9)),
    'deterministic',
  )
  assert.throws(() => buildSchedule(MIN_DURATION_MS - 1, createRng(1)))
})

test('schedule: a 30-minute run has each fault at its nominal period', () => {
  const c = countByKind(buildSchedule(30 * 60_000, createRng(1)))
  assert.equal(c.compact, 30, 'compaction every minute')
  assert.equal(c['restart-apiserver'], 10, 'a restart every 3 minutes')
  assert.equal(c['kill-leader'], 15, 'a leader kill every 2 minutes')
  assert.equal(c['burst-429'], 60)
  assert.equal(c.stall, 20)
  assert.ok(c['drop-all'] + c['drop-next'] > 300)
})

test('windowRates: averages every window of consecutive seconds', () => {
  assert.deepEqual(windowRates([10, 20, 30, 40], 2), [15, 25, 35])
  assert.deepEqual(windowRates([1, 1], 10), [])
  assert.equal(percentile([5, 1, 4, 2, 3], 50), 3)
  assert.equal(percentile([5, 1, 4, 2, 3], 100), 5)
  assert.ok(Number.isNaN(percentile([], 50)))
})

test('rssGrowth: flat with a sawtooth passes, a leak does not, a short life is not assessed', () => {
  const opts = { windowMs: 20_000, minSpanMs: 45_000 }
  const sawtooth = Array.from({ length: 60 }, (_, i) => ({ t: i * 2000, kb: 80_000 + (i % 5) * 2000 }))
  const flat = rssGrowth(sawtooth, 10_000, opts)
  assert.ok(flat.assessed && Math.abs(flat.growth) < 0.05, JSON.stringify(flat))
  const leak = Array.from({ length: 60 }, (_, i) => ({ t: i * 2000, kb: 80_000 + i * 500 }))
  const grown = rssGrowth(leak, 10_000, opts)
  assert.ok(grown.assessed && grown.growth > 0.1, JSON.stringify(grown))
  assert.equal(rssGrowth(sawtooth.slice(0, 20), 10_000, opts).assessed, false)
})

test('leadershipOverlaps: back-to-back leaders are fine, overlapping ones are reported', () => {
  const ok = [
    { process: 'a', from: 0, to: 100 },
    { process: 'b', from: 106, to: 200 },
    { process: 'a.2', from: 210, to: 300 },
  ]
  assert.deepEqual(leadershipOverlaps(ok), [])
  const bad = [...ok, { process: 'c', from: 150, to: 160 }]
  assert.deepEqual(
    leadershipOverlaps(bad).map(([x, y]) => [x.process, y.process]),
    [['b', 'c']],
  )
  assert.deepEqual(
    leadershipOverlaps([
      { process: 'a', from: 0, to: 10 },
      { process: 'a', from: 5, to: 20 },
    ]),
    [],
  )
  assert.deepEqual(duplicates(['k1', 'k2', 'k1', 'k3', 'k1']), ['k1'])
})

test('Invariants: an invariant never checked does not pass; failures are counted and deduplicated', () => {
  const inv = new Invariants(Date.now())
  inv.define('a', 'A', 'bound')
  inv.define('b', 'B', 'bound')
  inv.define('c', 'C', 'bound')
  inv.pass('a', 3)
  inv.check('b', false, () => 'broken')
  inv.check('b', false, () => 'broken')
  inv.check('b', true, () => 'unused')
  const [a, b, c] = inv.results()
  assert.equal(a!.passed, true)
  assert.equal(b!.passed, false)
  assert.equal(b!.checks, 3)
  assert.equal(b!.failures, 2)
  assert.equal(b!.messages.length, 1)
  assert.equal(c!.passed, false, 'never checked')
  assert.equal(inv.allPassed, false)
  assert.throws(() => inv.pass('unknown'))
})

test('metricSum: sums the matching samples of a Prometheus text exposition', () => {
  const text = [
    '# HELP controller_runtime_reconcile_total Total',
    'controller_runtime_reconcile_total{controller="appservice",result="success"} 12',
    'controller_runtime_reconcile_total{controller="appservice",result="error"} 3',
    'controller_runtime_reconcile_total{controller="other",result="success"} 100',
    'leader_election_master_status{name="appservice-soak"} 1',
  ].join('\n')
  assert.equal(metricSum(text, 'controller_runtime_reconcile_total', { controller: 'appservice' }), 15)
  assert.equal(metricSum(text, 'leader_election_master_status'), 1)
  assert.equal(metricSum(text, 'missing'), undefined)
})

test('rssChart: a standalone SVG with a line per series, markers, a legend and escaped text', () => {
  const svg = rssChart(
    [
      {
        label: 'operator-1',
        points: [
          { t: 0, value: 70 },
          { t: 10, value: 90 },
        ],
      },
      { label: 'operator-1', points: [{ t: 12, value: 72 }] },
      {
        label: 'agent-a',
        points: [
          { t: 0, value: 80 },
          { t: 20, value: 81 },
        ],
      },
    ],
    {
      title: 'RSS <soak> & co',
      unit: 'MiB',
      shade: { from: 2, to: 15, label: 'chaos' },
      markers: [{ t: 5, kind: 'kill-leader' }],
    },
  )
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
  assert.ok(svg.trimEnd().endsWith('</svg>'))
  assert.equal(svg.match(/<polyline /g)?.length, 3)
  assert.ok(svg.includes('RSS &#60;soak&#62; &#38; co'))
  assert.ok(svg.includes('kill-leader'))
  assert.equal(escapeXml('"\''), '&#34;&#39;')
  assert.equal(niceStep(100, 10), 10)
  assert.equal(niceStep(7, 6), 2)
})

test('reportMarkdown: each process cell sits under its header (the committed 30-minute report)', () => {
  const r = JSON.parse(
    readFileSync(join(import.meta.dirname, 'reports/2026-12-01/soak-report.json'), 'utf8'),
  ) as SoakReport
  const lines = reportMarkdown(r).split('\n')
  const header = lines.find((l) => l.startsWith('| Process |'))!
  const cells = (l: string) => l.split(' | ').map((c) => c.replace(/^\| |\s\|$/g, ''))
  const columns = cells(header)
  const agent = r.processes.find((p) => p.id === 'agent-a')!
  const row = cells(lines.find((l) => l.startsWith('| agent-a |'))!)
  assert.equal(row.length, columns.length)
  const at = (name: string) => row[columns.indexOf(name)]
  const fl = (v: { first: number; last: number }) => `${v.first.toFixed(1)} → ${v.last.toFixed(1)}`
  assert.equal(at('Heap total (MiB)'), fl(agent.heapMiB!.total))
  assert.equal(at('Live heap (MiB)'), fl(agent.heapMiB!.live))
  assert.equal(at('External (MiB)'), fl(agent.heapMiB!.external))
})
