/**
 * The dashboard drawing (build/dashboard-svg.ts), on fixed data: Grafana's legend templates and
 * variables, units, one drawn line per series, "No data" for an empty panel, escaped text.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  concreteQuery,
  dashboardPanels,
  formatValue,
  legendOf,
  panelLines,
  renderDashboardSvg,
} from '../../build/dashboard-svg.ts'

test('legends fill {{label}} from the series; $job becomes every job', () => {
  assert.equal(legendOf('{{controller}} {{ result }}', { controller: 'app', result: 'error' }), 'app error')
  assert.equal(legendOf(undefined, { a: 'b' }), '{"a":"b"}')
  assert.equal(concreteQuery('rate(x{job=~"$job"}[5m])'), 'rate(x{job=~".+"}[5m])')
})

test('values print in the panel unit', () => {
  assert.equal(formatValue(1536, 'bytes'), '1.5 KiB')
  assert.equal(formatValue(0.25, 'percentunit'), '25%')
  assert.equal(formatValue(0.0123, 's'), '12.3 ms')
  assert.equal(formatValue(2, 's'), '2 s')
  assert.equal(formatValue(2500, 'reqps'), '2.5 k/s')
  assert.equal(formatValue(7, 'short'), '7')
})

test('every panel of dashboard.json has a title, a unit and queries', () => {
  const panels = dashboardPanels()
  assert.ok(panels.length >= 20)
  for (const p of panels) {
    assert.ok(p.title && p.fieldConfig?.defaults?.unit && p.targets.length > 0, JSON.stringify(p))
  }
})

test('the SVG has a line per series, "No data" for an empty panel, and escapes text', async () => {
  const panel = {
    title: 'A & B',
    fieldConfig: { defaults: { unit: 's' } },
    targets: [{ expr: 'q', legendFormat: '{{x}}' }],
  }
  const lines = await panelLines(panel, async () => [
    {
      metric: { x: '<one>' },
      values: [
        [0, '1'],
        [10, '2'],
        [20, 'NaN'],
      ],
    },
    { metric: { x: 'two' }, values: [[0, '3']] },
  ])
  assert.deepEqual(lines[0]?.points, [
    [0, 1],
    [10, 2],
  ])
  const svg = renderDashboardSvg(
    't',
    [
      { panel, lines },
      { panel: { ...panel, title: 'empty' }, lines: [] },
    ],
    0,
    20,
  )
  assert.equal(svg.match(/<polyline/g)?.length, 2)
  assert.ok(svg.includes('A &#38; B') && svg.includes('&#60;one&#62;') && svg.includes('No data'))
  assert.ok(!svg.includes('<one>'))
  assert.match(svg, /^<svg [^>]*>\n<title>t dashboard, /)
})
