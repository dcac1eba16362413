/**
 * The AppService operator (two leader-elected replicas) under the simulator: a fixed range of seeds,
 * each 10 virtual minutes with faults for the first 8, safety after every step and liveness at the end.
 * A failure prints the command that replays its seed.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CORE_TYPES } from '../../../src/client/index.ts'
import { sleep } from '../../../src/core/index.ts'
import { APPSERVICES } from '../../../src/operators/appservice/index.ts'
import {
  expectSimulation,
  type SimulatedProcess,
  simulate,
  simulationSeeds,
} from '../../../src/testing/index.ts'
import { appServiceReplica, appServiceSimulation } from '../../support/appservice-simulation.ts'

/** Seeds `npm test` runs (a longer sweep: `node test/testing/sim/sweep.ts`). */
const SEEDS = simulationSeeds(1, 5)

for (const seed of SEEDS) {
  test(`AppService operator, seed ${seed}: safe at every step, converged 2 virtual minutes after the last fault`, async () => {
    const r = await expectSimulation(appServiceSimulation(seed))
    assert.ok(r.faults.length > 0, 'faults were injected')
    assert.equal(r.virtualMs, 600_000)
  })
}

test('a seed replays exactly: the same trace, requests and faults', async () => {
  const a = await simulate(appServiceSimulation(3, 3))
  const b = await simulate(appServiceSimulation(3, 3))
  assert.deepEqual(b.trace, a.trace)
  assert.equal(b.requests, a.requests)
  assert.deepEqual(b.faults, a.faults)
})

test('a reconciler that writes its child before the finalizer fails the safety invariant, with the replay command and the trace', async () => {
  const buggy: SimulatedProcess = {
    name: 'buggy',
    async run({ client, clock, signal }) {
      const deployments = client.resource(CORE_TYPES.deployments, 'apps')
      while (!signal.aborted) {
        await sleep(1_000, clock, signal).catch(() => {})
        const apps = await client
          .resource(APPSERVICES, 'apps')
          .list()
          .catch(() => undefined)
        for (const a of apps?.items ?? []) {
          const owner = {
            apiVersion: 'platform.example.com/v1alpha1',
            kind: 'AppService',
            name: a.metadata.name ?? '',
            uid: a.metadata.uid ?? '',
            controller: true,
          }
          await deployments.apply(
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              metadata: { name: a.metadata.name, namespace: 'apps', ownerReferences: [owner] },
            },
            { fieldManager: 'buggy', force: true },
          )
        }
      }
    },
  }
  const options = {
    ...appServiceSimulation(5, 3),
    processes: [buggy],
    faults: false as const,
    skipFaults: [],
    file: 'x.test.ts',
  }
  await assert.rejects(expectSimulation(options), (err: Error) => {
    assert.match(err.message, /safety invariant "children only under the finalizer" failed/)
    assert.match(err.message, /replay: EDGEOP_SIM_SEED=5 node --test x\.test\.ts/)
    assert.match(err.message, /buggy: PATCH deployments\/\w+ → 200/)
    return true
  })
})

test('two replicas without leader election are caught writing without the Lease', async () => {
  const options = {
    ...appServiceSimulation(2, 3),
    processes: [appServiceReplica('operator-a', false), appServiceReplica('operator-b', false)],
    faults: false as const,
  }
  await assert.rejects(
    expectSimulation(options),
    /safety invariant "only the Lease holder writes AppServices and their children" failed/,
  )
})
