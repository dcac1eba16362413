/**
 * @module chaos — the soak's chaos phase: the driver churns, the fault schedule plays, and the checker
 * reads the world every few seconds, recording each invariant it can judge.
 */
import { Checker, CONVERGED, DATABASE, type Evaluation, NODE_FILES } from './checker.ts'
import type { SoakRun } from './context.ts'
import { DATABASE_FAULTS, OPERATOR_FAULTS } from './fault-windows.ts'
import { FaultInjector } from './faults.ts'
import type { Fleet } from './fleet.ts'
import { every, sleep } from './pace.ts'
import type { Plane } from './plane.ts'
import { buildSchedule, countByKind } from './schedule.ts'
import { CHECK_INTERVAL_MS } from './settings.ts'
import type { Workload } from './workload.ts'

/** Books one checker evaluation: its latencies, and a pass or failure per object checked. */
export function recordEvaluation(ctx: SoakRun, e: Evaluation): void {
  ctx.latencies.push(...e.latencies)
  for (const id of [CONVERGED, DATABASE, NODE_FILES] as const) {
    const problems = e.problems.filter((x) => x.invariant === id)
    ctx.inv.pass(id, Math.max(0, e.checked[id] - problems.length))
    for (const x of problems) ctx.inv.fail(id, x.message)
  }
}

/** Runs the chaos phase; returns the checker, which the settle phase goes on using. */
export async function runChaos(ctx: SoakRun, plane: Plane, f: Fleet, w: Workload): Promise<Checker> {
  const { rel, log, inv } = ctx
  const { chaosMs, boundMs } = ctx.settings
  const injector = new FaultInjector(ctx, plane, f)
  const checker = new Checker({
    admin: plane.admin,
    db: plane.db,
    workload: w,
    namespaces: plane.namespaces,
    nodes: plane.nodes,
    run: ctx.run,
    start: ctx.start,
    boundMs,
    databaseSettledAt: () => ctx.windows.settledAt(rel(), DATABASE_FAULTS),
    operatorSettledAt: () => ctx.windows.settledAt(rel(), OPERATOR_FAULTS),
  })
  let skippedRounds = 0
  ctx.chaosStart = rel()
  ctx.plan = buildSchedule(chaosMs, ctx.rng.fork('faults'), ctx.settings.sharded)
  log(
    `chaos: ${chaosMs / 1000} s, ${ctx.plan.length} faults planned ${JSON.stringify(countByKind(ctx.plan))}`,
  )
  const chaos = new AbortController()
  const driverDone = w.run(chaos.signal)
  const checking = every(CHECK_INTERVAL_MS, chaos.signal, async () => {
    let e: Evaluation
    try {
      e = await checker.evaluate()
    } catch {
      skippedRounds++ // the apiserver is restarting
      return
    }
    recordEvaluation(ctx, e)
    // Request rate over the last complete 10 s.
    const s = Math.floor(rel() / 1000) - 1
    if (s >= 10) {
      const windowRate = ctx.traffic.perSecond.slice(s - 9, s + 1).reduce((x, y) => x + y, 0) / 10
      inv.check(
        'request-rate',
        windowRate <= ctx.settings.rateBound,
        () => `${windowRate.toFixed(1)} req/s over the 10 s before +${s} s`,
      )
    }
  })
  await injector.play(ctx.plan, ctx.chaosStart)
  await sleep(ctx.chaosStart + chaosMs - rel())
  chaos.abort()
  await Promise.all([driverDone, checking, injector.idle()])
  injector.clearAll()
  ctx.phases.chaos = rel() - ctx.chaosStart
  if (skippedRounds > 0)
    inv.note(CONVERGED, `${skippedRounds} check rounds skipped while the apiserver restarted`)
  log(`chaos done: driver ${JSON.stringify(w.stats)}`)
  return checker
}
