/**
 * @module settle — after the chaos: faults cleared, driver stopped, wait until everything has
 * converged (at most the convergence bound) and record the last evaluation.
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
  let last: Evaluation | undefined
  while (rel() - settleStart < boundMs) {
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
      ? `NOT settled within ${boundMs / 1000} s: ${last.problems.length} problems`
      : `settled in ${(ctx.settleMs / 1000).toFixed(1)} s`,
  )
}
