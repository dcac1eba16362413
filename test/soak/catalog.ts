/**
 * @module catalog — the soak's invariants: what each one demands and within what bound.
 */

import { DATABASE_API_TIMEOUT_MS } from '../../src/operators/appservice/database-api.ts'
import { CONVERGED, DATABASE, NODE_FILES } from './checker.ts'
import { breakerTailMs, FORBIDDEN_ALLOWANCE_MS } from './fault-windows.ts'
import type { Invariants } from './invariants.ts'
import { SINGLE_OWNER } from './ownership.ts'
import { OUTAGE_MS, SLOW_DELAY_MS } from './schedule.ts'
import {
  QUIET_MS,
  QUIET_RATE_BOUND,
  RATE_BOUND,
  RSS_GROWTH_BOUND,
  RSS_MIN_SPAN_MS,
  RSS_WINDOW_MS,
  type Settings,
} from './settings.ts'
import { NO_ACTION_BEFORE_SYNCED } from './warm-start.ts'

const r1 = (n: number) => String(Math.round(n * 10) / 10)

/** Defines every invariant of a run with `settings` in `inv`, in the order the report lists them. */
export function defineInvariants(inv: Invariants, settings: Settings): void {
  const { boundMs, warmupMs, sharded, replicas, rateBound, quietRateBound } = settings
  const s = (ms: number) => `${Math.round(ms / 100) / 10} s`
  inv.define(
    CONVERGED,
    'Every AppService converges to its spec: status.observedGeneration == generation, Ready=True at that generation, readyReplicas == spec.replicas, Deployment and Service match the spec, Degraded=False (InvalidConfiguration for an invalid spec); a deleted one is gone',
    `${boundMs / 1000} s after its last change, or after the end of a fault window plus its allowance if later ` +
      `(rbac-revoked ${s(FORBIDDEN_ALLOWANCE_MS)}: the forbidden retry delay with its jitter; db-timeout-after-commit ${s(DATABASE_API_TIMEOUT_MS)} per hung write, the per-call deadline; ` +
      `db-slow the delay, ≤ ${s(SLOW_DELAY_MS.max)}; database-outage the breaker's remaining open time, ≤ ${s(breakerTailMs(OUTAGE_MS.max))} for a ${s(OUTAGE_MS.max)} outage), so everything within that after the chaos ends`,
  )
  inv.define(
    DATABASE,
    'The database stand-in holds exactly one entry per live AppService with database.enabled, none for deleted ones; no key is ever created twice; empty after everything is deleted',
    `duplicates: never; missing/leaked: ${boundMs / 1000} s after the last change`,
  )
  inv.define(
    NODE_FILES,
    'Files under each node root match the NodeConfigs selecting that node exactly (content and mode, nothing extra); each NodeConfig has a report Applied at its generation from exactly the selected nodes, and an aggregate status counting them (desired = applied, none failed); roots empty after everything is deleted',
    `${boundMs / 1000} s after the last change to the NodeConfig, the node's labels or the file`,
  )
  if (sharded)
    inv.define(
      SINGLE_OWNER,
      "Never one AppService reconciled by two replicas at once (the `reconciled` from/to lines each replica logs per reconcile); every reconcile inside its replica's membership; a dead or removed member's objects taken over; after settling, every AppService owned by the live member the ring names, its Deployment and Service labelled alike, and the replicas' edgeop_shard_objects summing to the AppServices",
      'never (logs at the end); taken over within 60 s; owners after the quiet window',
    )
  else
    inv.define(
      'single-leader',
      'Never two operator replicas leading or reconciling at once (leader_election_master_status, controller_runtime_active_workers, reconcile counters of standbys, leadership intervals and reconcile lines in the logs)',
      'never (metrics every second; logs at the end)',
    )
  inv.define(
    'request-rate',
    'API requests through the proxy (all operator and agent processes) stay under a bound: no hot loop',
    `≤ ${r1(rateBound)} req/s over every 10 s window; ≤ ${r1(quietRateBound)} req/s in the ${QUIET_MS / 1000} s quiet window` +
      (sharded
        ? ` (sharded, for up to ${replicas + 1} replicas: ${r1(RATE_BOUND / 5)} req/s per process — the leader-elected bound's share — plus each replica's shard pass; the quiet bound ${QUIET_RATE_BOUND} plus each replica's shard pass and Lease renewal: settings.ts rateBounds)`
        : ''),
  )
  inv.define(
    'rss-flat',
    'RSS of each operator and agent process stays flat after warm-up',
    `growth < ${RSS_GROWTH_BOUND * 100} % (median of the first ${RSS_WINDOW_MS / 1000} s after a ${Math.round(warmupMs / 1000)} s warm-up vs the last ${RSS_WINDOW_MS / 1000} s; processes observed ≥ ${RSS_MIN_SPAN_MS / 1000} s after warm-up)`,
  )
  if (settings.snapshots)
    inv.define(
      NO_ACTION_BEFORE_SYNCED,
      'With cache snapshots: an operator replica started warm starts its workers (every write, so every deletion) only once each informer restored from a snapshot has caught up with the server (the log lines of restore, catch-up and worker start)',
      'never before (logs at the end); the agents act on restored caches by design and are judged by the node-files invariant',
    )
  inv.define(
    'no-crash',
    'Processes end only when the schedule kills them, when an operator loses its Lease (exit 1, EDGEOP_ERR_LEADER), or on SIGTERM at the end (exit 0)',
    'never otherwise',
  )
  inv.define(
    'faults-injected',
    'Every kind of fault was injected at least once, and none is left on; a db-timeout-after-commit hung a write and an rbac-revoked drew a 403 at least once',
    'each kind ≥ 1',
  )
}
