import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { escapeLabelValue, formatSampleValue, MetricsRegistry } from '../../src/metrics/metrics-registry.ts'

const invalid = (err: unknown) => (err as { code?: string }).code === 'EDGEOP_ERR_INVALID'

describe('metrics registry', () => {
  test('renders counters and gauges in the text format, families by name, series by labels', () => {
    const r = new MetricsRegistry()
    const total = r.counter({ name: 'b_total', help: 'Bees.', labelNames: ['kind', 'zone'] })
    const g = r.gauge({ name: 'a_gauge', help: 'A gauge.' })
    total.inc({ kind: 'worker', zone: 'z2' })
    total.inc({ zone: 'z1', kind: 'worker' }, 2)
    total.inc({ kind: 'drone', zone: 'z1' }, 0)
    g.set({}, 3)
    g.inc()
    g.dec({}, 0.5)
    assert.equal(
      r.render(),
      [
        '# HELP a_gauge A gauge.',
        '# TYPE a_gauge gauge',
        'a_gauge 3.5',
        '# HELP b_total Bees.',
        '# TYPE b_total counter',
        'b_total{kind="drone",zone="z1"} 0',
        'b_total{kind="worker",zone="z1"} 2',
        'b_total{kind="worker",zone="z2"} 1',
        '',
      ].join('\n'),
    )
    assert.equal(total.get({ kind: 'worker', zone: 'z1' }), 2)
    assert.equal(total.get({ kind: 'queen', zone: 'z1' }), 0)
  })

  test('an unlabelled metric renders at zero at once; a labelled family only once it has a series', () => {
    const r = new MetricsRegistry()
    r.counter({ name: 'x_total', help: 'x' })
    r.gauge({ name: 'y', help: 'y', labelNames: ['a'] })
    assert.equal(r.render(), '# HELP x_total x\n# TYPE x_total counter\nx_total 0\n')
    assert.equal(new MetricsRegistry().render(), '')
  })

  test('histograms render cumulative buckets, +Inf, _sum and _count', () => {
    const r = new MetricsRegistry()
    const h = r.histogram({ name: 'lat_seconds', help: 'Latency.', labelNames: ['verb'], buckets: [0.1, 1] })
    h.observe({ verb: 'GET' }, 0.05)
    h.observe({ verb: 'GET' }, 0.1) // le is inclusive
    h.observe({ verb: 'GET' }, 0.5)
    h.observe({ verb: 'GET' }, 7)
    assert.equal(
      r.render(),
      [
        '# HELP lat_seconds Latency.',
        '# TYPE lat_seconds histogram',
        'lat_seconds_bucket{verb="GET",le="0.1"} 2',
        'lat_seconds_bucket{verb="GET",le="1"} 3',
        'lat_seconds_bucket{verb="GET",le="+Inf"} 4',
        'lat_seconds_sum{verb="GET"} 7.65',
        'lat_seconds_count{verb="GET"} 4',
        '',
      ].join('\n'),
    )
    assert.deepEqual(h.get({ verb: 'GET' }), { count: 4, sum: 7.65 })
    const u = r.histogram({ name: 'u', help: 'u', buckets: [1e-8] })
    u.observe({}, 2)
    assert.match(r.render(), /\nu_bucket\{le="1e-8"\} 0\nu_bucket\{le="\+Inf"\} 1\nu_sum 2\nu_count 1\n$/)
  })

  test('label values and help are escaped; special values are spelled as Prometheus does', () => {
    assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd')
    assert.equal(formatSampleValue(Number.POSITIVE_INFINITY), '+Inf')
    assert.equal(formatSampleValue(Number.NEGATIVE_INFINITY), '-Inf')
    assert.equal(formatSampleValue(Number.NaN), 'NaN')
    const r = new MetricsRegistry()
    r.gauge({ name: 'g', help: 'line one\nback\\slash', labelNames: ['v'] }).set({ v: 'say "hi"\n' }, 1)
    assert.equal(r.render(), '# HELP g line one\\nback\\\\slash\n# TYPE g gauge\ng{v="say \\"hi\\"\\n"} 1\n')
  })

  test('registering the same name again returns the same metric; a different shape is an error', () => {
    const r = new MetricsRegistry()
    const a = r.counter({ name: 'c_total', help: 'c', labelNames: ['x'] })
    assert.equal(r.counter({ name: 'c_total', help: 'other help', labelNames: ['x'] }), a)
    assert.throws(
      () => r.gauge({ name: 'c_total', help: 'c', labelNames: ['x'] }),
      /already registered as a counter/,
    )
    assert.throws(() => r.counter({ name: 'c_total', help: 'c', labelNames: ['y'] }), invalid)
    const h = r.histogram({ name: 'h', help: 'h', buckets: [1, 2] })
    assert.equal(r.histogram({ name: 'h', help: 'h', buckets: [1, 2] }), h)
    assert.throws(() => r.histogram({ name: 'h', help: 'h', buckets: [1, 3] }), /buckets \[1, 2\]/)
  })

  test('wrong labels, bad names, bad buckets and negative counter increments are refused', () => {
    const r = new MetricsRegistry()
    const c = r.counter({ name: 'c_total', help: 'c', labelNames: ['x'] })
    assert.throws(() => c.inc({}), /takes labels \[x\], got \[\]/)
    assert.throws(() => c.inc({ x: 'a', y: 'b' }), invalid)
    assert.throws(() => c.inc({ x: 'a' }, -1), /cannot add -1/)
    assert.throws(() => r.gauge({ name: '1bad', help: '' }), invalid)
    assert.throws(() => r.gauge({ name: 'ok', help: '', labelNames: ['__x'] }), invalid)
    assert.throws(() => r.histogram({ name: 'h', help: '', labelNames: ['le'], buckets: [1] }), invalid)
    assert.throws(() => r.histogram({ name: 'h', help: '', buckets: [2, 1] }), /strictly increasing/)
    assert.throws(() => r.histogram({ name: 'h', help: '', buckets: [1, Number.POSITIVE_INFINITY] }), invalid)
  })

  test('collectors run before each render; a throwing one is skipped; removal stops it', () => {
    const r = new MetricsRegistry()
    const g = r.gauge({ name: 'now', help: 'n', labelNames: ['k'] })
    let n = 0
    const remove = r.addCollector(() => {
      g.reset()
      g.set({ k: String(++n) }, n)
    })
    r.addCollector(() => {
      throw new Error('broken')
    })
    assert.match(r.render(), /now\{k="1"\} 1\n$/)
    assert.match(r.render(), /# TYPE now gauge\nnow\{k="2"\} 2\n$/)
    remove()
    assert.match(r.render(), /now\{k="2"\} 2\n$/)
    g.remove({ k: '2' })
    assert.equal(r.render(), '')
  })
})
