/**
 * A long sweep of the AppService (or NodeConfig) simulation, run by hand (not in `npm test`):
 * `node test/testing/sim/sweep.ts [first seed] [count] [virtual minutes] [sharded|nodeconfig] [nodes]`. Prints one line per failed
 * seed (with its replay command) and the totals: seeds, faults injected, invariant checks, virtual
 * seconds per wall second.
 */
import { argv, cpuUsage } from 'node:process'
import { failureReport, simulate } from '../../../src/testing/index.ts'
import { shardedAppServiceSimulation } from '../../support/appservice-sharding-simulation.ts'
import { appServiceSimulation } from '../../support/appservice-simulation.ts'
import { DEFAULT_NODES, NodeConfigWorld, nodeConfigSimulation } from '../../support/nodeconfig-simulation.ts'

const first = Number(argv[2] ?? 1)
const count = Number(argv[3] ?? 100)
const minutes = Number(argv[4] ?? 10)
const mode = argv[5] ?? 'leader-elected'
/** The NodeConfig run's disks; `setup` resets it for every seed. */
const world = new NodeConfigWorld(Number(argv[6] ?? DEFAULT_NODES))
/** Faults the simulated disks injected (NodeConfig only), by kind. */
const diskFaults: Record<string, number> = {}
const options =
  mode === 'sharded'
    ? shardedAppServiceSimulation
    : mode === 'nodeconfig'
      ? (seed: number, m: number) => nodeConfigSimulation(seed, m, world)
      : appServiceSimulation
const file =
  {
    sharded: 'appservice-sharding-simulation',
    nodeconfig: 'nodeconfig-simulation',
  }[mode] ?? 'appservice-simulation'
const operator =
  {
    sharded: 'AppService, 3 sharded members',
    nodeconfig: `NodeConfig, ${world.nodes} node agents and 2 leader-elected aggregators`,
  }[mode] ?? 'AppService, 2 leader-elected replicas'
let virtualMs = 0
let wallMs = 0
let faults = 0
let checks = 0
let requests = 0
const failed: number[] = []
const cpuStart = cpuUsage()
for (let seed = first; seed < first + count; seed++) {
  const r = await simulate({ ...options(seed, minutes), file: `test/testing/sim/${file}.test.ts` })
  virtualMs += r.virtualMs
  wallMs += r.wallMs
  faults += r.faults.length
  if (mode === 'nodeconfig')
    for (const [kind, n] of world.diskFaults) {
      diskFaults[kind] = (diskFaults[kind] ?? 0) + n
      faults += n
    }
  checks += r.checks
  requests += r.requests
  if (r.failure) {
    failed.push(seed)
    console.log(failureReport(r, 20))
  }
}
const cpu = cpuUsage(cpuStart)
const cpuMs = (cpu.user + cpu.system) / 1000
console.log(
  JSON.stringify({
    cpuSeconds: Number((cpuMs / 1000).toFixed(2)),
    virtualSecondsPerCpuSecond: Math.round(virtualMs / cpuMs),
    operator,
    seeds: count,
    firstSeed: first,
    virtualMinutesPerSeed: minutes,
    failed,
    faults,
    ...(mode === 'nodeconfig' ? { diskFaults } : {}),
    invariantChecks: checks,
    requests,
    virtualSeconds: virtualMs / 1000,
    wallSeconds: Number((wallMs / 1000).toFixed(2)),
    virtualSecondsPerWallSecond: Math.round(virtualMs / wallMs),
    wallMsPerSeed: Math.round(wallMs / count),
  }),
)
