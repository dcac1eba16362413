/**
 * @module settle — after the chaos: faults cleared, driver stopped, wait until everything has
 * converged (at most the convergence bound, counted from the end of the chaos or from the last
 * fault window's end plus its allowance, whichever is later) and record the last evaluation.
 */

import { recordEvaluation } from './chaos.ts'
import type { Checker, Evaluation } from './checker.ts'
import type { SoakRun } from './context.ts'
import { sleep } from './pace.ts'
import { CHECK_INTERVAL_MS } from './settings.ts'

/** Runs the settle phase; sets `ctx.settleMs` when everything converged within the bound. */
export async function settle(ctx: SoakRun, checker: Checker): Promise<void> {
  const { rel, log } = ctx
  const { boundMs } = ctx.settings
  const settleStart = rel()
  const deadline = Math.max(settleStart, ctx.windows.settledAt(settleStart)) + boundMs
  let last: Evaluation | undefined
  while (rel() < deadline) {
    last = await checker.evaluate(true).catch(() => undefined)
    if (last !== undefined && last.problems.length === 0) {
      ctx.settleMs = rel() - settleStart
      break
    }
    await sleep(CHECK_INTERVAL_MS)
  }
  if (last === undefined) last = await checker.evaluate(true)
  recordEvaluation(ctx, last)
  ctx.phases.settle = rel() - settleStart
  log(
    ctx.settleMs === undefined
      ? `NOT settled within ${((deadline - settleStart) / 1000).toFixed(0)} s: ${last.problems.length} problems`
      : `settled in ${(ctx.settleMs / 1000).toFixed(1)} s`,
  )
}
