/**
 * The AppService operator sharded over three members under the simulator: a fixed range of seeds,
 * each 10 virtual minutes with faults for the first 8; no member writes for another's AppService,
 * and every AppService converges whoever owns it after the members came and went.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { expectSimulation, simulationSeeds } from '../../../src/testing/index.ts'
import { shardedAppServiceSimulation } from '../../support/appservice-sharding-simulation.ts'

for (const seed of simulationSeeds(1, 2)) {
  test(`sharded AppService operator, seed ${seed}: one owner per object, converged after the faults`, async () => {
    const r = await expectSimulation(shardedAppServiceSimulation(seed))
    assert.ok(r.faults.length > 0)
  })
}
