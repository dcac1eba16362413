/** Rollout waves, pure: buckets, which node may apply, and how the aggregator opens waves. */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { NodeConfig } from '../../../src/operators/nodeconfig/api.ts'
import {
  mayApply,
  type NodeOutcome,
  nextRollout,
  rolloutBucket,
} from '../../../src/operators/nodeconfig/rollout.ts'

const config = (over: Partial<NodeConfig> = {}, rollout?: NodeConfig['spec']['rollout']): NodeConfig =>
  ({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: 'c', uid: 'uid-c', generation: 2 },
    spec: { files: [], ...(rollout ? { rollout } : {}) },
    ...over,
  }) as NodeConfig

const nodes = Array.from({ length: 1000 }, (_, i) => `edge-${i}`)

test('buckets are stable, spread evenly over 0–99, and differ between NodeConfigs', () => {
  assert.equal(rolloutBucket('uid-c', 'edge-1'), rolloutBucket('uid-c', 'edge-1'))
  const counts = new Array(10).fill(0)
  for (const n of nodes) counts[Math.floor(rolloutBucket('uid-c', n) / 10)]++
  for (const c of counts) assert.ok(c > 60 && c < 140, `tenths: ${counts}`)
  const moved = nodes.filter((n) => rolloutBucket('uid-c', n) !== rolloutBucket('uid-d', n)).length
  assert.ok(moved > 900, `${moved} of 1000 nodes change bucket with the NodeConfig`)
})

test('a node applies only a generation opened to its bucket; no rollout status holds every node', () => {
  const low = nodes.find((n) => rolloutBucket('uid-c', n) < 10)!
  const high = nodes.find((n) => rolloutBucket('uid-c', n) >= 10)!
  assert.equal(mayApply(config(), low), false, 'no status.rollout: held')
  const open = config({ status: { rollout: { generation: 2, percent: 10 } } })
  assert.equal(mayApply(open, low), true)
  assert.equal(mayApply(open, high), false)
  assert.equal(
    mayApply(config({ status: { rollout: { generation: 1, percent: 100 } } }), low),
    false,
    'older generation',
  )
})

const outcomes = (f: (n: string) => NodeOutcome, of = nodes.slice(0, 50)) => new Map(of.map((n) => [n, f(n)]))

test('a new generation opens the default first wave (10%); a wave opens further once all its nodes reported', () => {
  const first = nextRollout(
    config(),
    outcomes(() => 'pending'),
    false,
  )
  assert.deepEqual(first, { rollout: { generation: 2, percent: 10 }, halted: false })
  const c = config({ status: { rollout: { generation: 2, percent: 10 } } })
  const done = (n: string) => (rolloutBucket('uid-c', n) < 10 ? 'applied' : 'pending')
  assert.equal(nextRollout(c, outcomes(done), false).rollout.percent, 20)
  assert.equal(
    nextRollout(
      c,
      outcomes(() => 'applied'),
      false,
    ).rollout.percent,
    100,
    'all done: every wave opens',
  )
})

test('more failures than maxFailures halt the wave where it is', () => {
  const c = config(
    { status: { rollout: { generation: 2, percent: 10 } } },
    { maxUnavailable: 10, maxFailures: 1 },
  )
  const one = outcomes((n) => (n === 'edge-0' ? 'failed' : 'applied'))
  assert.equal(nextRollout(c, one, false).halted, false, 'one failure is within maxFailures 1')
  const two = outcomes((n) => (n === 'edge-0' || n === 'edge-1' ? 'failed' : 'applied'))
  assert.deepEqual(nextRollout(c, two, false), { rollout: { generation: 2, percent: 10 }, halted: true })
})

test('a NodeConfig rolled out by the shared-status agents (no waves then) is open to every node at once', () => {
  assert.equal(
    nextRollout(
      config(),
      outcomes(() => 'pending'),
      true,
    ).rollout.percent,
    100,
  )
})
