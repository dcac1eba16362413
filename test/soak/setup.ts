/**
 * @module setup — the soak's first phase: the plane, then the processes (two operator replicas and
 * three agents, the built artifact) behind the fault proxy, the NodeConfig aggregator in this process, the samplers, and the initial population.
 */
import { startAggregator } from '../integration/fixtures/nodeconfig-harness.ts'
import { LINK_PROFILES, startShapedForwarder } from '../support/link-shape.ts'
import type { SoakRun } from './context.ts'
import { Fleet, type FleetProcess, METRICS_INTERVAL_MS, RSS_INTERVAL_MS } from './fleet.ts'
import { every, sleep } from './pace.ts'
import { type Plane, startPlane } from './plane.ts'
import { forgetfulDatabase } from './sabotage.ts'
import { LEASE_NAME, SHARD_LABEL } from './settings.ts'
import { CacheDirs } from './warm-start.ts'
import { Workload } from './workload.ts'

/** The first leader is awaited this many times … */
const LEADER_POLLS = 60
/** … this far apart. */
const LEADER_POLL_MS = 500

/** Runs the setup phase: on return every process runs and the population exists. */
export async function setUp(ctx: SoakRun): Promise<void> {
  const { log, options, rel } = ctx
  log(`setup: seed ${options.seed}, chaos ${options.minutes} min, run ${ctx.run}`)
  const plane = await startPlane(ctx)
  ctx.plane = plane
  const link = ctx.options.link ? LINK_PROFILES[ctx.options.link] : undefined
  if (link) {
    const forwarder = await startShapedForwarder(Number(new URL(plane.proxy.url).port), link)
    ctx.cleanups.push(async () => forwarder.close())
    ctx.serverUrl = `https://127.0.0.1:${forwarder.port}`
    log(
      `the processes reach the API server over the ${ctx.options.link} link (${link.rttMs} ms, ${link.bitsPerSecond} bit/s)`,
    )
  }
  let databaseUrl = plane.db.url
  if (options.sabotage === 'duplicate-db') {
    const shim = await forgetfulDatabase(plane.db)
    ctx.cleanups.push(() => shim.close())
    databaseUrl = shim.url
    log('SABOTAGE: the database forgets entries before every PUT (duplicates expected)')
  }
  const cacheDirs = new CacheDirs()
  ctx.cleanups.push(() => cacheDirs.close())
  const f = new Fleet({
    start: ctx.start,
    operatorArgs: await operatorArgs(ctx, plane, databaseUrl),
    agentArgs: await agentArgs(ctx, plane),
    invariants: ctx.inv,
    resilience: ctx.resilience,
    log,
    replicas: ctx.settings.replicas,
    ...(ctx.settings.sharded ? { shardLabel: SHARD_LABEL } : {}),
    ...(ctx.settings.snapshots ? { cacheDir: (slot: string) => cacheDirs.of(slot) } : {}),
  })
  ctx.fleet = f
  ctx.cleanups.push(() => f.stop(5000))
  // The NodeConfig aggregator, as the leader of `edgeop agent-aggregator` runs it: it opens
  // each generation's rollout waves to the agents and writes the aggregate the checker reads.
  const aggregator = new AbortController()
  ctx.cleanups.push(async () => aggregator.abort())
  startAggregator(plane.admin, aggregator.signal)
  await f.start()

  // Samplers: metrics, RSS, proxy traffic.
  ctx.samplerLoops.push(
    every(METRICS_INTERVAL_MS, ctx.samplers.signal, () => f.sampleMetrics()),
    every(RSS_INTERVAL_MS, ctx.samplers.signal, () => f.sampleRss()),
    every(1000, ctx.samplers.signal, async () => ctx.traffic.harvest(plane.proxy, plane.user)),
  )

  const w = new Workload({
    admin: plane.admin,
    namespaces: plane.namespaces,
    run: ctx.run,
    nodes: plane.nodes,
    rng: ctx.rng.fork('driver'),
    start: ctx.start,
    appTarget: ctx.settings.appTarget,
    nodeConfigTarget: ctx.settings.nodeConfigTarget,
    rate: ctx.settings.rate,
  })
  ctx.workload = w
  await w.populate()
  const firstLeader = await waitForLeader(f)
  log(`setup done in ${(rel() / 1000).toFixed(1)} s; leader ${firstLeader?.id ?? 'none yet'}`)
  ctx.phases.setup = rel()
}

/**
 * The operator replicas' arguments: leader-elected (sharded: `--shard`, and at debug level, for the
 * `reconciled` lines the single-owner invariant reads), through the proxy, as the operator user.
 */
async function operatorArgs(ctx: SoakRun, plane: Plane, databaseUrl: string): Promise<string[]> {
  const opIdentity = await plane.env.userKubeconfig(plane.user)
  const opKubeconfig = await plane.env.writeKubeconfig({
    server: ctx.serverUrl ?? plane.proxy.url,
    credentials: { certPem: opIdentity.certPem, keyPem: opIdentity.keyPem },
  })
  return [
    'run',
    `--kubeconfig=${opKubeconfig}`,
    ...plane.namespaces.map((ns) => `--namespace=${ns}`),
    ctx.settings.sharded ? '--shard' : '--leader-elect',
    `--leader-election-id=${LEASE_NAME}`,
    `--leader-election-namespace=${plane.opNs}`,
    `--leader-election-lease-duration=${ctx.settings.lease.durationMs}ms`,
    `--leader-election-renew-deadline=${ctx.settings.lease.renewMs}ms`,
    `--leader-election-retry-period=${ctx.settings.lease.retryMs}ms`,
    `--database-api=${databaseUrl}`,
    `--max-concurrent-reconciles=${ctx.settings.maxConcurrentReconciles}`,
    '--qps=50',
    '--burst=100',
    '--shutdown-grace-period=5s',
    `--log-level=${ctx.settings.sharded ? 'debug' : (ctx.options.logLevel ?? 'info')}`,
  ]
}

/** Each agent's arguments, by slot: its node, its root, through the proxy, as a member of the agents' group. */
async function agentArgs(ctx: SoakRun, plane: Plane): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {}
  for (const n of plane.nodes) {
    const id = await plane.env.userKubeconfig(`edgeop-agent:${n.name}`, [plane.group])
    const kubeconfig = await plane.env.writeKubeconfig({
      server: ctx.serverUrl ?? plane.proxy.url,
      credentials: { certPem: id.certPem, keyPem: id.keyPem },
    })
    out[n.slot] = [
      'agent',
      `--kubeconfig=${kubeconfig}`,
      `--node-name=${n.name}`,
      `--root=${n.root}`,
      '--recheck-interval=5s',
      '--shutdown-grace-period=5s',
      `--log-level=${ctx.options.logLevel ?? 'info'}`,
    ]
  }
  return out
}

/** The first leader, or undefined if none within {@link LEADER_POLLS} polls. */
async function waitForLeader(f: Fleet): Promise<FleetProcess | undefined> {
  for (let i = 0; i < LEADER_POLLS; i++) {
    const l = await f.leader()
    if (l) return l
    await sleep(LEADER_POLL_MS)
  }
  return undefined
}
