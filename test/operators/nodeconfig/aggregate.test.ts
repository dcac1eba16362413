/** The aggregate status, pure: counts at the current generation, the condition, the old list's removal. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { aggregate } from '../../../src/operators/nodeconfig/aggregate.ts'
import type { NodeConfig } from '../../../src/operators/nodeconfig/api.ts'
import { type NodeConfigReport, reportBody } from '../../../src/operators/nodeconfig/report-api.ts'

const now = new Date('2026-12-02T00:00:00Z')
const config = (status?: NodeConfig['status']): NodeConfig =>
  ({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: 'c', uid: 'uid-c', generation: 3 },
    spec: { files: [], rollout: { maxUnavailable: 100, maxFailures: 0 } },
    ...(status ? { status } : {}),
  }) as NodeConfig
const report = (node: string, state: 'Applied' | 'Failed', generation = 3): NodeConfigReport =>
  reportBody(config(), {
    name: node,
    state,
    observedGeneration: generation,
    message: state === 'Failed' ? 'disk full' : 'ok',
  })

test('desired, applied and failed count the selected nodes at the current generation only', () => {
  const { status } = aggregate(
    config(),
    ['a', 'b', 'c', 'd'],
    [report('a', 'Applied'), report('b', 'Applied', 2), report('x', 'Applied')],
    now,
  )
  assert.deepEqual([status.desired, status.applied, status.failed, status.observedGeneration], [4, 1, 0, 3])
  assert.equal(status.conditions?.[0]?.reason, 'RollingOut')
  assert.match(
    status.conditions![0]!.message,
    /1 of 4 applied; waiting for b, c, d$/,
    'names the nodes the wave waits for',
  )
})

test('all applied: RolloutComplete; a failure past maxFailures: Progressing=False naming the node and the limit', () => {
  const done = aggregate(config(), ['a', 'b'], [report('a', 'Applied'), report('b', 'Applied')], now)
  assert.equal(done.status.conditions?.[0]?.reason, 'RolloutComplete')
  const bad = aggregate(config(), ['a', 'b'], [report('a', 'Applied'), report('b', 'Failed')], now).status
  const c = bad.conditions![0]!
  assert.deepEqual([c.status, c.reason], ['False', 'FailureThresholdExceeded'])
  assert.match(
    c.message,
    /1 of 2 nodes failed generation 3, more than spec\.rollout\.maxFailures \(0\).*b: disk full/,
  )
})

test('the shared list goes only once every selected node in it has a report', () => {
  const shared = config({
    nodes: [
      { name: 'a', state: 'Applied' },
      { name: 'b', state: 'Applied' },
    ],
  })
  assert.equal(aggregate(shared, ['a', 'b'], [report('a', 'Applied')], now).dropSharedList, false)
  assert.equal(
    aggregate(shared, ['a', 'b'], [report('a', 'Applied'), report('b', 'Applied')], now).dropSharedList,
    true,
  )
  assert.equal(
    aggregate(shared, ['a'], [report('a', 'Applied')], now).dropSharedList,
    true,
    'b is no longer selected',
  )
  assert.equal(aggregate(config(), ['a'], [], now).dropSharedList, false, 'nothing to drop')
})
