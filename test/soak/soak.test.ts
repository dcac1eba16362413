/**
 * Unit tests of the soak's pure parts: the seeded generator, the fault schedule and its
 * windows' allowances, the invariant arithmetic (rates, RSS growth, leadership overlaps,
 * duplicates), the ledger, the breaker and parked-key scrapes, the report and the SVG. The
 * soak itself runs in test/integration/soak.test.ts.
 */
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { DEFAULT_RETRY_JITTER, FORBIDDEN_RETRY_DELAY_MS } from '../../src/controller/retry-policy.ts'
import { DATABASE_API_TIMEOUT_MS } from '../../src/operators/appservice/database-api.ts'
import type { NodeConfig } from '../../src/operators/nodeconfig/api.ts'
import { type NodeConfigReport, reportBody } from '../../src/operators/nodeconfig/report-api.ts'
import { DEFAULT_BREAKER_FAILURE_THRESHOLD } from '../../src/resilience/breaker-state.ts'
import { ownerOf } from '../../src/sharding/ring.ts'
import { allowanceMs, breakerTailMs, FaultWindows, OPERATOR_FAULTS } from './fault-windows.ts'
import { metricSum } from './fleet.ts'
import { Invariants } from './invariants.ts'
import { ownershipProblems, reconcileOverlaps } from './ownership.ts'
import { reportMarkdown, resilienceMarkdown } from './report.ts'
import { metricSamples, ResilienceLog, resilienceOf } from './resilience.ts'
import type { SoakReport } from './results.ts'
import { createRng } from './rng.ts'
import { rolloutProblems } from './rollout-check.ts'
import {
  buildSchedule,
  countByKind,
  faultKinds,
  HEAD_MS,
  HUNG_WRITES,
  isSpacedOut,
  MIN_DURATION_MS,
  SLOW_DELAY_MS,
  TAIL_MS,
} from './schedule.ts'
import {
  DEFAULT_BOUND_MS,
  LEASE,
  LINK_SETTINGS,
  QUIET_RATE_BOUND,
  RATE_BOUND,
  rateBounds,
  resolveSettings,
} from './settings.ts'
import {
  duplicates,
  leadershipFromLog,
  leadershipOverlaps,
  percentile,
  rssGrowth,
  windowRates,
} from './stats.ts'
import { escapeXml, niceStep, rssChart } from './svg.ts'
import { restoredAtWorkerStart } from './warm-start.ts'

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
    for (const k of faultKinds(false))
      assert.ok(counts[k] >= 1 || k === 'drop-next', `seed ${seed}: ${k} ${JSON.stringify(counts)}`)
    assert.equal(counts['kill-replica'] + counts['add-replica'] + counts['remove-replica'], 0, 'not sharded')
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

test('schedule, sharded: a random replica killed instead of the leader; additions and removals alternate, spaced', () => {
  assert.deepEqual(
    faultKinds(true).filter((k) => !faultKinds(false).includes(k)),
    ['kill-replica', 'add-replica', 'remove-replica'],
  )
  assert.ok(!faultKinds(true).includes('kill-leader'))
  for (const seed of [1, 2, 42]) {
    const s = buildSchedule(120_000, createRng(seed), true)
    const counts = countByKind(s)
    for (const k of faultKinds(true))
      assert.ok(counts[k] >= 1 || k === 'drop-next', `seed ${seed}: ${k} ${JSON.stringify(counts)}`)
    assert.equal(counts['kill-leader'], 0)
    assert.ok(isSpacedOut(s), `seed ${seed}: heavy faults spaced`)
    const scale = s.filter((e) => e.kind === 'add-replica' || e.kind === 'remove-replica').map((e) => e.kind)
    assert.deepEqual(scale, ['add-replica', 'remove-replica'], 'an addition, then a removal')
  }
  const ten = countByKind(buildSchedule(10 * 60_000, createRng(42), true))
  assert.deepEqual([ten['kill-replica'], ten['add-replica'], ten['remove-replica']], [5, 2, 1])
  // The kinds before the disruptive ones are where they were without sharding.
  const plain = buildSchedule(10 * 60_000, createRng(42)).filter((e) => e.kind === 'burst-429')
  const sharded = buildSchedule(10 * 60_000, createRng(42), true).filter((e) => e.kind === 'burst-429')
  assert.deepEqual(sharded, plain)
})

test('rateBounds: the leader-elected bounds per process for two replicas; each more replica adds its share and its shard pass', () => {
  // 2 namespaces, a 2 s period: a shard pass is 3 lists per 2 s.
  const two = rateBounds(2, 2, 2000)
  assert.equal(two.chaos, RATE_BOUND + 2 * 1.5)
  assert.equal(two.quiet, QUIET_RATE_BOUND + 2 * 1.5)
  const four = rateBounds(4, 2, 2000)
  assert.equal(four.chaos, (RATE_BOUND / 5) * 7 + 4 * 1.5)
  assert.equal(four.quiet, QUIET_RATE_BOUND + 4 * 1.5 + 2 * 0.5)
  const settings = resolveSettings({ minutes: 10, seed: 1, sharded: true })
  assert.deepEqual(
    [settings.replicas, settings.rateBound, settings.quietRateBound],
    [3, four.chaos, four.quiet],
  )
  const plain = resolveSettings({ minutes: 10, seed: 1 })
  assert.deepEqual([plain.replicas, plain.rateBound, plain.quietRateBound], [2, RATE_BOUND, QUIET_RATE_BOUND])
})

test('settings over a link: the satellite run gets its longer lease and bound, a link without settings the loopback ones, an explicit bound wins', () => {
  const loopback = resolveSettings({ minutes: 10, seed: 1 })
  assert.deepEqual(
    [loopback.lease, loopback.boundMs, loopback.maxConcurrentReconciles],
    [LEASE, DEFAULT_BOUND_MS, 1],
  )
  const satellite = resolveSettings({ minutes: 10, seed: 1, link: 'satellite' })
  assert.deepEqual(
    [satellite.lease, satellite.boundMs],
    [LINK_SETTINGS.satellite!.lease, LINK_SETTINGS.satellite!.boundMs],
  )
  // An attempt gets a third of the renew deadline: it must outlast a new connection (4 RTTs of 800 ms).
  assert.ok(satellite.lease.renewMs / 3 > 4 * 800)
  assert.ok(satellite.lease.durationMs > satellite.lease.renewMs)
  const cellular = resolveSettings({ minutes: 10, seed: 1, link: 'cellular' })
  assert.deepEqual([cellular.lease, cellular.boundMs], [LEASE, DEFAULT_BOUND_MS])
  assert.equal(resolveSettings({ minutes: 10, seed: 1, link: 'satellite', boundMs: 90_000 }).boundMs, 90_000)
})

test('reconcileOverlaps: one object reconciled by two processes at once is reported; in turn, or other objects, are not', () => {
  const s = (process: string, object: string, from: number, to: number) => ({ process, object, from, to })
  assert.deepEqual(
    reconcileOverlaps([
      s('a', 'ns/x', 0, 10),
      s('b', 'ns/x', 10, 20), // handed over as a's reconcile ended
      s('a', 'ns/x', 5, 8), // a's own, inside its earlier one
      s('c', 'ns/y', 0, 30), // another object
      s('a', 'ns/x', 25, 30),
    ]),
    [],
  )
  const bad = reconcileOverlaps([
    s('a', 'ns/x', 0, 10),
    s('b', 'ns/x', 2, 3),
    s('a', 'ns/x', 11, 12),
    s('c', 'ns/x', 9, 40),
  ])
  assert.deepEqual(
    bad.map(([x, y]) => `${x.process}${x.from} ${y.process}${y.from}`),
    ['a0 b2', 'a0 c9', 'c9 a11'],
  )
  // A long reconcile is remembered past a later short one of the same process.
  assert.equal(reconcileOverlaps([s('a', 'k', 0, 100), s('a', 'k', 1, 2), s('b', 'k', 50, 60)]).length, 1)
})

test('ownershipProblems: owned by the live member the ring names, children labelled alike', () => {
  const live = ['m1', 'm2', 'm3']
  const key = 'ns/app-1'
  const want = ownerOf(key, live)!
  const other = live.find((m) => m !== want)!
  const ok = { key, owner: want, children: [{ kind: 'Deployment', owner: want }] }
  assert.deepEqual(ownershipProblems([ok], live), [])
  assert.deepEqual(ownershipProblems([{ ...ok, owner: undefined, children: [] }], live), [
    `${key} has no owner (the ring names ${want})`,
  ])
  assert.deepEqual(ownershipProblems([{ ...ok, owner: 'dead', children: [] }], live), [
    `${key} is owned by dead, not a live member`,
  ])
  assert.deepEqual(ownershipProblems([{ ...ok, owner: other, children: [] }], live), [
    `${key} is owned by ${other}; the ring names ${want}`,
  ])
  assert.deepEqual(ownershipProblems([{ ...ok, children: [{ kind: 'Service', owner: other }] }], live), [
    `${key}: its Service is labelled ${other}, the AppService ${want}`,
  ])
})

test('schedule: a 30-minute run has each fault at its nominal period', () => {
  const c = countByKind(buildSchedule(30 * 60_000, createRng(1)))
  assert.equal(c.compact, 30, 'compaction every minute')
  assert.equal(c['restart-apiserver'], 10, 'a restart every 3 minutes')
  assert.equal(c['kill-leader'], 15, 'a leader kill every 2 minutes')
  assert.equal(c['burst-429'], 60)
  assert.equal(c.stall, 20)
  assert.ok(c['drop-all'] + c['drop-next'] > 300)
  assert.equal(c['db-timeout-after-commit'], 15, 'hung writes every 2 minutes')
  assert.equal(c['db-slow'], 15, 'a slow database every 2 minutes')
  assert.equal(c['rbac-revoked'], 10, 'a revoked rule every 3 minutes')
})

test('schedule: hung writes stay below the breaker threshold and slow answers below the call deadline', () => {
  assert.ok(HUNG_WRITES.max < DEFAULT_BREAKER_FAILURE_THRESHOLD)
  assert.ok(SLOW_DELAY_MS.max < DATABASE_API_TIMEOUT_MS)
  for (const e of buildSchedule(30 * 60_000, createRng(5))) {
    if (e.kind === 'db-timeout-after-commit')
      assert.ok(e.writes >= HUNG_WRITES.min && e.writes <= HUNG_WRITES.max)
    if (e.kind === 'db-slow') assert.ok(e.delayMs >= SLOW_DELAY_MS.min && e.delayMs <= SLOW_DELAY_MS.max)
  }
})

test('fault windows: allowances come from the operator constants; settledAt is the latest end plus allowance', () => {
  // Breaker (5 s doubling, +20 % jitter) opened at the outage's start: probes at 6 s (fails) and 18 s.
  assert.equal(breakerTailMs(8000), 10_000)
  assert.equal(breakerTailMs(6000), 0)
  assert.equal(breakerTailMs(1000), 5000)
  assert.equal(
    allowanceMs({ atMs: 0, kind: 'rbac-revoked', durationMs: 15_000 }),
    FORBIDDEN_RETRY_DELAY_MS * (1 + DEFAULT_RETRY_JITTER),
  )
  assert.equal(
    allowanceMs({ atMs: 0, kind: 'db-timeout-after-commit', writes: 2, armMs: 20_000 }),
    2 * DATABASE_API_TIMEOUT_MS,
  )
  assert.equal(allowanceMs({ atMs: 0, kind: 'db-slow', durationMs: 12_000, delayMs: 3000 }), 3000)
  assert.equal(allowanceMs({ atMs: 0, kind: 'compact' }), 0)

  const w = new FaultWindows()
  assert.equal(w.settledAt(1000), Number.NEGATIVE_INFINITY, 'no window')
  const outage = w.open('database-outage', 1000, 10_000)
  w.close(outage, 5000)
  const rbac = w.open('rbac-revoked', 2000, 60_000)
  assert.equal(w.settledAt(20_000), 20_000, 'a window still on: now')
  assert.equal(w.settledAt(9000, new Set(['database-outage'])), 15_000)
  w.close(rbac, 20_000)
  assert.equal(w.settledAt(30_000), 80_000)
  assert.equal(w.settledAt(30_000, OPERATOR_FAULTS), 80_000)
  assert.equal(w.settledAt(30_000, new Set(['db-slow'])), Number.NEGATIVE_INFINITY)
})

const SCRAPE = (closedToOpen: number, parkedNoRetry: number) =>
  [
    '# HELP edgeop_circuit_breaker_transitions_total Circuit breaker phase changes.',
    '# TYPE edgeop_circuit_breaker_transitions_total counter',
    `edgeop_circuit_breaker_transitions_total{dependency="database-api",from="closed",to="open"} ${closedToOpen}`,
    'edgeop_circuit_breaker_transitions_total{dependency="database-api",from="open",to="half-open"} 1',
    'edgeop_circuit_breaker_state{dependency="database-api"} 1',
    `edgeop_controller_parked_keys{controller="appservice",reason="no_retry"} ${parkedNoRetry}`,
    'edgeop_controller_parked_keys{controller="appservice",reason="attempts"} 1',
  ].join('\n')

test('resilience scrape: breaker transitions by dependency, from and to; parked keys summed', () => {
  assert.deepEqual(metricSamples('m{a="x\\"y",b="2"} 3\nm 4\nmm 5', 'm'), [
    { labels: { a: 'x"y', b: '2' }, value: 3 },
    { labels: {}, value: 4 },
  ])
  const s = resilienceOf(SCRAPE(2, 3))
  assert.deepEqual(s.transitions, { 'database-api closed→open': 2, 'database-api open→half-open': 1 })
  assert.equal(s.parked, 4)
  assert.equal(resilienceOf('other 1').parked, undefined)

  const log = new ResilienceLog()
  log.observe('operator-1', 1000, resilienceOf(SCRAPE(1, 0)))
  log.observe('operator-1', 2000, resilienceOf(SCRAPE(1, 0)))
  log.observe('operator-1', 3000, resilienceOf(SCRAPE(3, 5)))
  log.observe('operator-2', 4000, resilienceOf(SCRAPE(1, 1)))
  const r = log.report()
  assert.deepEqual(r.breaker.transitions, { 'database-api closed→open': 4, 'database-api open→half-open': 2 })
  assert.deepEqual(
    r.breaker.timeline.map((c) => `${c.atMs} ${c.process} ${c.transition} ${c.count}`),
    [
      '1000 operator-1 database-api closed→open 1',
      '1000 operator-1 database-api open→half-open 1',
      '3000 operator-1 database-api closed→open 2',
      '4000 operator-2 database-api closed→open 1',
      '4000 operator-2 database-api open→half-open 1',
    ],
  )
  assert.deepEqual([r.parked.peak, r.parked.peakAtMs, r.parked.peakProcess], [6, 3000, 'operator-1'])
})

test("resilienceMarkdown: transitions by from/to, the timeline, the parked peak and the leader's parked keys", () => {
  const log = new ResilienceLog()
  log.observe('operator-1', 61_500, resilienceOf(SCRAPE(2, 1)))
  log.parkedAtEnd('operator-1', [
    {
      controller: 'appservice',
      key: 'soak-a/app-7',
      reason: 'no_retry',
      errorClass: 'terminal',
      lastError: 'soak-a/app-7: image | is invalid',
      attempts: 1,
      firstFailure: '2026-12-01T00:00:00Z',
      lastFailure: '2026-12-01T00:00:00Z',
    },
  ])
  const md = resilienceMarkdown(log.report()).join('\n')
  assert.ok(md.includes('| database-api | closed | open | 2 |'), md)
  assert.ok(md.includes('| database-api | open | half-open | 1 |'), md)
  assert.ok(md.includes('| 61.5 | operator-1 | database-api closed→open | 2 |'), md)
  assert.ok(md.includes('peak 2 at +61.5 s (operator-1)'), md)
  assert.ok(md.includes("the leader's (operator-1) `GET /debug/parked`: 1 keys"), md)
  assert.ok(
    md.includes(
      '| appservice | soak-a/app-7 | no_retry | terminal | 1 | soak-a/app-7: image \\| is invalid |',
    ),
    md,
  )

  const quiet = new ResilienceLog()
  quiet.parkedAtEnd(undefined, undefined, 'no leader at the end')
  const none = resilienceMarkdown(quiet.report()).join('\n')
  assert.ok(none.includes('None: the breaker stayed closed.'), none)
  assert.ok(none.includes('not read (no leader at the end)'), none)
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

test('leadershipFromLog: a leader ends at "leader work stopped", not at its slow release; without it, at the last end line', () => {
  const t = (s: number) => new Date(Date.UTC(2026, 11, 1, 0, 0, s)).toISOString()
  const at = (s: number) => Date.parse(t(s))
  const logs = [
    { ts: t(1), msg: 'leading: starting controllers' },
    { ts: t(5), msg: 'leader election lost' },
    { ts: t(6), msg: 'leader work stopped' },
    { ts: t(12), msg: 'not the holder any more; nothing to release' },
    { ts: t(12), msg: 'stopped leading' },
    { ts: t(20), msg: 'leading: starting controllers' },
    { ts: t(25), msg: 'leader election lost' },
    { ts: t(26), msg: 'stopped leading' },
    { ts: t(30), msg: 'leading: starting controllers' },
  ]
  assert.deepEqual(leadershipFromLog('op', logs, at(40)), [
    { process: 'op', from: at(1), to: at(6) },
    { process: 'op', from: at(20), to: at(26) },
    { process: 'op', from: at(30), to: at(40) },
  ])
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

test('rssChart with log: both axes in decades, a dot per point, points at 0 left out, the x label given', () => {
  const svg = rssChart(
    [
      {
        label: 'new',
        points: [
          { t: 10, value: 120 },
          { t: 1000, value: 14_000 },
        ],
      },
      {
        label: 'old',
        points: [
          { t: 0, value: 5 },
          { t: 100, value: 8_855 },
        ],
      },
    ],
    { title: 'events', unit: 'watch events', log: true, xLabel: 'nodes' },
  )
  assert.equal(svg.match(/<circle /g)?.length, 3, 'the point at 0 has no place on a log axis')
  for (const tick of ['>10<', '>100<', '>1k<', '>10k<']) assert.ok(svg.includes(tick), tick)
  assert.ok(svg.includes('>nodes</text>'))
  assert.ok(!svg.includes('NaN') && !svg.includes('Infinity'))
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
  // Made before the breaker and parked keys were measured: the section says so.
  assert.ok(lines.includes('## Circuit breaker and parked keys'))
  assert.ok(lines.includes('Not measured in this run.'))
})

test('no-action-before-synced: an operator log whose workers start while an informer still serves its snapshot fails, one that waited passes', () => {
  const restored = (informer: string) => ({
    msg: 'serving from cache snapshot until the watch catches up with the server',
    informer,
  })
  const caughtUp = (informer: string) => ({
    msg: 'cache synced: the snapshot is caught up with the server',
    informer,
  })
  const workers = { msg: 'starting workers', controller: 'appservice' }
  assert.deepEqual(
    restoredAtWorkerStart([
      restored('appservices'),
      restored('deployments'),
      caughtUp('appservices'),
      workers,
    ]),
    ['deployments'],
  )
  assert.deepEqual(restoredAtWorkerStart([restored('appservices'), caughtUp('appservices'), workers]), [])
  assert.equal(
    restoredAtWorkerStart([{ msg: 'cache synced', informer: 'x' }, workers]),
    undefined,
    'a cold start',
  )
  assert.equal(restoredAtWorkerStart([restored('appservices')]), undefined, 'never led')
})

test('rolloutProblems: each selected node Applied at the generation and an aggregate counting them passes; a missing, stale or foreign report or a wrong count is named', () => {
  const nc = {
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: 'motd', uid: 'u1', generation: 2 },
    spec: { files: [] },
    status: { observedGeneration: 2, desired: 2, applied: 2, failed: 0 },
  } as unknown as NodeConfig
  const report = (
    node: string,
    generation = 2,
    state: 'Applied' | 'Failed' = 'Applied',
    uid = 'u1',
  ): NodeConfigReport =>
    reportBody(
      { ...nc, metadata: { ...nc.metadata, uid } },
      { name: node, state, observedGeneration: generation },
    )
  const ours = new Set(['a', 'b'])
  assert.deepEqual(rolloutProblems(nc, ['a', 'b'], ours, [report('a'), report('b'), report('other-run')]), [])
  assert.match(rolloutProblems(nc, ['a', 'b'], ours, [report('a')])[0]!, /reports \["a=Applied@2"\], want/)
  assert.match(rolloutProblems(nc, ['a', 'b'], ours, [report('a'), report('b', 1)])[0]!, /b=Applied@1/)
  assert.equal(
    rolloutProblems(nc, ['a', 'b'], ours, [report('a'), report('b', 2, 'Applied', 'old')]).length,
    1,
  )
  const lagging = { ...nc, status: { ...nc.status, applied: 1 } } as NodeConfig
  assert.match(
    rolloutProblems(lagging, ['a', 'b'], ours, [report('a'), report('b')])[0]!,
    /aggregate \[observedGeneration, desired, applied, failed\] \[2,2,1,0\], want \[2,2,2,0\]/,
  )
})
