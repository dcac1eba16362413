/**
 * @module quiet — the quiet window: nothing changes and no fault is on, so the request rate must fall
 * to the idle floor and no request may hit a fault.
 */
import type { FaultHandle } from '../controlplane/fault-proxy.ts'
import type { SoakRun } from './context.ts'
import type { Fleet } from './fleet.ts'
import { sleep } from './pace.ts'
import type { Plane } from './plane.ts'
import { QUIET_MS } from './settings.ts'

/** Runs the quiet window and returns when it started (ms since start). `leftOn`: the sabotage's fault. */
export async function quietWindow(
  ctx: SoakRun,
  plane: Plane,
  f: Fleet,
  leftOn: FaultHandle | undefined,
): Promise<number> {
  const { rel, inv, traffic } = ctx
  const quietStart = rel()
  traffic.harvest(plane.proxy, plane.user)
  const s0 = Math.ceil(quietStart / 1000)
  await sleep(QUIET_MS + 1000)
  traffic.harvest(plane.proxy, plane.user)
  const quietCounts = traffic.perSecond.slice(s0, s0 + QUIET_MS / 1000)
  const quietPerS = quietCounts.reduce((x, y) => x + y, 0) / (QUIET_MS / 1000)
  ctx.quietPerS = quietPerS
  inv.check(
    'request-rate',
    quietPerS <= ctx.settings.quietRateBound,
    () => `${quietPerS.toFixed(2)} req/s in the quiet window (nothing changes, no fault)`,
  )
  const faultedInQuiet = traffic.faulted.filter((r) => r.startedAt - ctx.start >= quietStart).length
  inv.check(
    'faults-injected',
    faultedInQuiet === 0 || leftOn !== undefined,
    () => `${faultedInQuiet} requests hit a fault in the quiet window`,
  )
  if (leftOn !== undefined)
    inv.fail('faults-injected', `a fault was left on after the chaos phase (${leftOn.hits} requests hit it)`)
  leftOn?.clear()
  ctx.phases.quiet = rel() - quietStart
  await f.sampleRss()
  return quietStart
}
