/**
 * The aggregator's status writes over one rollout, under the simulator (virtual time, no sleeps):
 * reports arrive one at a time, slower than the write interval, as from a large fleet; every agent
 * receives each status write, so their number times N is the rollout's NodeConfig events.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sleep } from '../../../src/core/index.ts'
import {
  GROUP,
  KIND,
  MIN_STATUS_WRITE_INTERVAL_MS,
  maxStatusWritesPerRollout,
  NODECONFIGREPORTS,
  NODECONFIGS,
  type NodeConfig,
  reportBody,
  rolloutBucket,
  STATE,
  VERSION,
} from '../../../src/operators/nodeconfig/index.ts'
import { simulate } from '../../../src/testing/index.ts'
import {
  aggregatorProcess,
  NodeConfigWorld,
  nodeConfigSimulation,
} from '../../support/nodeconfig-simulation.ts'

const NODES = 40
/** Slower than the write interval, so a throttle by time alone writes once per report. */
const REPORT_EVERY_MS = MIN_STATUS_WRITE_INTERVAL_MS + 500

/** One rollout of `maxUnavailable`: the status writes it cost, the final status, and when each wave opened after its last report. */
async function rollout(maxUnavailable: number) {
  const world = new NodeConfigWorld(NODES)
  const base = nodeConfigSimulation(1, 10, world)
  let writes = 0
  let final: NodeConfig | undefined
  const r = await simulate({
    ...base,
    durationMs: 5 * 60_000,
    faults: false,
    processes: [aggregatorProcess('a')],
    safety: [],
    liveness: [],
    writeSafety: [
      {
        name: 'counts NodeConfig status writes',
        check(w) {
          if (w.target.resource === NODECONFIGS.resource && w.target.subresource === 'status') writes++
          return undefined
        },
      },
    ],
    workload: async ({ client, clock }) => {
      const configs = client.resource(NODECONFIGS)
      const reports = client.resource(NODECONFIGREPORTS)
      await configs.create({
        apiVersion: `${GROUP}/${VERSION}`,
        kind: KIND,
        metadata: { name: 'fleet' },
        spec: { files: [{ path: 'f.conf', content: 'x\n' }], rollout: { maxUnavailable, maxFailures: 0 } },
      } as NodeConfig)
      const done = new Set<string>()
      while (done.size < NODES) {
        const c = await configs.get('fleet')
        const r = c.status?.rollout
        const open = r && r.generation === c.metadata.generation ? r.percent : 0
        const next = [...world.disks.keys()].find(
          (n) => !done.has(n) && rolloutBucket(c.metadata.uid!, n) < open,
        )
        if (next) {
          await reports.create(
            reportBody(c, { name: next, state: STATE.applied, observedGeneration: c.metadata.generation }),
          )
          done.add(next)
        }
        await sleep(REPORT_EVERY_MS, clock)
      }
      await sleep(10_000, clock)
      final = await configs.get('fleet')
    },
  })
  assert.equal(r.failure, undefined)
  return { writes, status: final?.status }
}

test('a rollout whose reports arrive slower than the write interval costs a bounded number of status writes, not one per report, and ends exact', async () => {
  for (const maxUnavailable of [100, 10]) {
    const { writes, status } = await rollout(maxUnavailable)
    assert.ok(
      writes <= maxStatusWritesPerRollout(maxUnavailable),
      `${writes} status writes for ${NODES} reports at maxUnavailable ${maxUnavailable}, more than ${maxStatusWritesPerRollout(maxUnavailable)}`,
    )
    assert.deepEqual(
      [
        status?.observedGeneration,
        status?.desired,
        status?.applied,
        status?.failed,
        status?.rollout?.percent,
      ],
      [1, NODES, NODES, 0, 100],
    )
    assert.equal(status?.conditions?.[0]?.reason, 'RolloutComplete')
  }
})
