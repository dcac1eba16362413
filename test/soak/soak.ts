/**
 * @module soak — the chaos soak: the AppService operator (two leader-elected replicas, or sharded
 * over three or more) and
 * three NodeConfig agents, all the built artifact in their own processes, run against the
 * local control plane through a fault proxy while a driver churns AppServices and
 * NodeConfigs and a seeded schedule injects faults; invariants are checked all along and
 * at the end. {@link runSoak} returns the report; `run.ts` is the command line.
 *
 * Phases, one module each: setup (`setup.ts`, `plane.ts`: control plane + controllers, CRDs,
 * RBAC, nodes, processes, an initial population) → chaos (`chaos.ts`, `faults.ts`: driver +
 * fault schedule, `minutes` long) → settle (`settle.ts`: faults cleared, driver stopped, wait
 * until everything converged) → quiet window (`quiet.ts`: no change, no fault: the request
 * rate must fall to the idle floor) → end-of-run checks (`final-checks.ts`) → teardown
 * (`teardown.ts`: delete everything through the operator, check the database and the node
 * roots end empty, SIGTERM every process) → report (`results.ts`).
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { defineInvariants } from './catalog.ts'
import { runChaos } from './chaos.ts'
import { createRun, type SoakRun } from './context.ts'
import { checkEndOfRun } from './final-checks.ts'
import type { Fleet } from './fleet.ts'
import type { InvariantResult } from './invariants.ts'
import { checkOwnership } from './ownership.ts'
import { artifactDigest, sourceCommit } from './provenance.ts'
import { quietWindow } from './quiet.ts'
import { buildReport, type SoakReport } from './results.ts'
import { leaveFaultOn } from './sabotage.ts'
import { SHARD_LABEL, type SoakOptions } from './settings.ts'
import { settle } from './settle.ts'
import { setUp } from './setup.ts'
import { tearDown } from './teardown.ts'

/** Runs the soak and returns its report (never throws for an invariant; `report.passed` says). */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const ctx = createRun(options)
  const provenance = { artifact: artifactDigest(), commit: sourceCommit() }
  defineInvariants(ctx.inv, ctx.settings)
  try {
    await runPhases(ctx)
  } finally {
    ctx.samplers.abort()
    await Promise.all(ctx.samplerLoops)
    for (const c of ctx.cleanups.reverse()) await c().catch(() => {})
  }
  ctx.phases.total = ctx.rel()
  const invariants = ctx.inv.results()
  await writeProcessLogs(ctx, invariants)
  return buildReport(ctx, invariants, provenance)
}

/** Setup, chaos, settle, quiet window, end-of-run checks and teardown, in order. */
async function runPhases(ctx: SoakRun): Promise<void> {
  await setUp(ctx)
  const plane = ctx.plane!
  const fleet = ctx.fleet!
  const checker = await runChaos(ctx, plane, fleet, ctx.workload!)
  const leftOn = leaveFaultOn(ctx)
  await settle(ctx, checker)
  const quietStart = await quietWindow(ctx, plane, fleet, leftOn)
  await scrapeResilience(ctx, fleet)
  if (ctx.settings.sharded) await checkOwnership(ctx.inv, plane.admin, plane.namespaces, fleet, SHARD_LABEL)
  checkEndOfRun(ctx, fleet, quietStart)
  await tearDown(ctx, plane, fleet)
}

/** A last scrape of every operator's metrics, and the leader's parked keys (sharded: every replica's). */
async function scrapeResilience(ctx: SoakRun, fleet: Fleet): Promise<void> {
  await fleet.sampleMetrics()
  if (ctx.settings.sharded) {
    const ops = fleet.live('operator')
    try {
      const keys = await Promise.all(ops.map((p) => fleet.parked(p)))
      return ctx.resilience.parkedAtEnd(ops.map((p) => p.id).join(' + '), keys.flat())
    } catch (err) {
      return ctx.resilience.parkedAtEnd(undefined, undefined, (err as Error).message)
    }
  }
  const leader = await fleet.leader()
  if (leader === undefined) return ctx.resilience.parkedAtEnd(undefined, undefined, 'no leader at the end')
  try {
    ctx.resilience.parkedAtEnd(leader.id, await fleet.parked(leader))
  } catch (err) {
    ctx.resilience.parkedAtEnd(leader.id, undefined, (err as Error).message)
  }
}

/** Every process's log, as JSON lines, into `logDir` when the run failed (or always with `keepLogs`). */
async function writeProcessLogs(ctx: SoakRun, invariants: readonly InvariantResult[]): Promise<void> {
  const { logDir, keepLogs } = ctx.options
  if (logDir === undefined || ctx.fleet === undefined || !(keepLogs || !invariants.every((r) => r.passed)))
    return
  await mkdir(logDir, { recursive: true })
  for (const proc of ctx.fleet.all)
    await writeFile(join(logDir, `${proc.id}.log`), proc.proc.logs.map((l) => JSON.stringify(l)).join('\n'))
  ctx.log(`process logs written to ${logDir}`)
}
