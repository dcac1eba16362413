/**
 * @module schedule — the soak's fault schedule: which fault, when, with what parameters.
 *
 * Pure: the same duration and seed give the same schedule. Periods scale with the run, so
 * a 2-minute run still sees every kind at least once and a 30-minute run sees each kind
 * at its nominal period (connection drops every 3–7 s, a 429 or 5xx burst every ~30 s, a
 * stalled request every ~90 s, etcd compaction every minute, an apiserver restart every
 * ~3 minutes, SIGKILL of the leader every ~2 minutes, a database outage every ~2 minutes; the
 * database committing writes and never answering them every ~2 minutes, answering slowly every
 * ~2 minutes, the operators' ClusterRole losing `patch` on Deployments every ~3 minutes).
 * The disruptive ones (compaction, restart, kill) are kept at least
 * {@link HEAVY_SPACING_MS} apart so each one's recovery is its own.
 */
import type { Rng } from './rng.ts'

/** Every kind of fault the soak injects. */
export const FAULT_KINDS = [
  'drop-all',
  'drop-next',
  'burst-429',
  'burst-5xx',
  'stall',
  'compact',
  'restart-apiserver',
  'kill-leader',
  'database-outage',
  'db-timeout-after-commit',
  'db-slow',
  'rbac-revoked',
  'kill-replica',
  'add-replica',
  'remove-replica',
] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

/** The kinds of sharded mode only. */
const SHARDED_KINDS: ReadonlySet<FaultKind> = new Set(['kill-replica', 'add-replica', 'remove-replica'])

/** The kinds a run injects: sharded, a random replica is killed instead of the leader, and replicas come and go. */
export function faultKinds(sharded: boolean): FaultKind[] {
  return FAULT_KINDS.filter((k) => (k === 'kill-leader' ? !sharded : !SHARDED_KINDS.has(k) || sharded))
}

/** What a stalled request is aimed at. */
export type StallTarget = 'operator-write' | 'agent-status' | 'watch' | 'lease'

/** One scheduled fault. */
export type FaultEvent =
  | {
      atMs: number
      kind:
        | 'drop-all'
        | 'drop-next'
        | 'compact'
        | 'restart-apiserver'
        | 'kill-leader'
        | 'kill-replica'
        | 'add-replica'
        | 'remove-replica'
    }
  | { atMs: number; kind: 'burst-429'; durationMs: number; retryAfterSeconds: number; nonWatchOnly: boolean }
  | { atMs: number; kind: 'burst-5xx'; durationMs: number; status: number; method: string | undefined }
  | { atMs: number; kind: 'stall'; target: StallTarget }
  | { atMs: number; kind: 'database-outage'; durationMs: number }
  /** The next `writes` database writes (within `armMs`) are committed and never answered. */
  | { atMs: number; kind: 'db-timeout-after-commit'; writes: number; armMs: number }
  /** Every database answer is delayed `delayMs` for `durationMs`. */
  | { atMs: number; kind: 'db-slow'; durationMs: number; delayMs: number }
  /** The operators' ClusterRole loses `patch` on Deployments for `durationMs`. */
  | { atMs: number; kind: 'rbac-revoked'; durationMs: number }

/** One line per kind, for reports. */
export const FAULT_DESCRIPTIONS: Record<FaultKind, string> = {
  'drop-all': 'every connection through the proxy destroyed (all watches and requests in flight)',
  'drop-next': 'the connection of the next request destroyed without a response',
  'burst-429': 'every request answered 429 Too Many Requests with Retry-After for 2–5 s',
  'burst-5xx': 'every request (or every one of a method) answered 500/502/503/504 for 1–4 s',
  stall: 'one request accepted and never answered (until the client gives up or the connection drops)',
  compact: 'etcd compacted to its current revision',
  'restart-apiserver': 'kube-apiserver restarted on the same port',
  'kill-leader': 'SIGKILL of the operator replica holding the Lease (a replacement is started)',
  'database-outage': 'the external database API answers 503 for a few seconds',
  'db-timeout-after-commit':
    'the database API commits the next 1–2 writes and never answers them (the caller times out after the commit)',
  'db-slow': 'every database API answer delayed 1–5 s, for 10–20 s',
  'rbac-revoked':
    "the operators' ClusterRole loses `patch` on Deployments for 10–20 s, then deploy/'s rules are restored",
  'kill-replica': 'sharded: SIGKILL of a random operator replica (a replacement, a new member, is started)',
  'add-replica': 'sharded: one more operator replica (a new member: the others drain its share to it)',
  'remove-replica':
    'sharded: SIGTERM of a random operator replica, not replaced (it releases its Lease; its share moves)',
}

/** How long a database outage lasts. */
export const OUTAGE_MS = { min: 3000, max: 8000 } as const
/**
 * Hung writes per db-timeout-after-commit: 1–2, below the breaker's failure threshold (5), so
 * these timeouts alone test the read-back after an unknown outcome, not the breaker.
 */
export const HUNG_WRITES = { min: 1, max: 2 } as const
/** A db-timeout-after-commit is disarmed when its writes have not come within this long. */
export const HANG_ARM_MS = 20_000
/**
 * db-slow delays: 1–5 s, under the operator's per-call deadline (10 s, DATABASE_API_TIMEOUT_MS):
 * slow answers, not timeouts (the commit-then-hang fault makes those).
 */
export const SLOW_DELAY_MS = { min: 1000, max: 5000 } as const
/** How long a db-slow lasts. */
export const SLOW_WINDOW_MS = { min: 10_000, max: 20_000 } as const
/** How long the operators' rule stays revoked (the issue's 10–20 s). */
export const REVOKED_WINDOW_MS = { min: 10_000, max: 20_000 } as const

/** Minimum distance between two disruptive faults (compaction, restart, kill). */
export const HEAVY_SPACING_MS = 15_000
/** Nothing is scheduled in the first seconds or in the last {@link TAIL_MS} of the chaos phase. */
export const HEAD_MS = 4_000
export const TAIL_MS = 8_000
/** Shortest chaos phase the schedule supports. */
export const MIN_DURATION_MS = 60_000

const HEAVY: ReadonlySet<FaultKind> = new Set([
  'compact',
  'restart-apiserver',
  'kill-leader',
  'kill-replica',
  'add-replica',
  'remove-replica',
])
/** Sharded: a replica added or removed every ~4 minutes (alternately, an addition first), at least one of each. */
export const SCALE_PERIOD_MS = 240_000

/** How many of a periodic kind: `duration / period`, rounded, at least `min`. */
function countFor(durationMs: number, periodMs: number, min = 1): number {
  return Math.max(min, Math.round(durationMs / periodMs))
}

/** `count` times spread evenly over the run, each jittered within ±30 % of its slot. */
function spread(durationMs: number, count: number, rng: Rng): number[] {
  const slot = (durationMs - HEAD_MS - TAIL_MS) / count
  const out: number[] = []
  for (let i = 0; i < count; i++) out.push(Math.round(HEAD_MS + (i + 0.5 + rng.between(-0.3, 0.3)) * slot))
  return out
}

/**
 * The fault schedule for a chaos phase of `durationMs`, sorted by time. `sharded`: kill-replica
 * instead of kill-leader (same period), and add-replica / remove-replica alternately every
 * {@link SCALE_PERIOD_MS}; the other kinds as without (a seed gives the same earlier faults).
 */
export function buildSchedule(durationMs: number, rng: Rng, sharded = false): FaultEvent[] {
  if (!(durationMs >= MIN_DURATION_MS))
    throw new Error(`buildSchedule: the chaos phase must last at least ${MIN_DURATION_MS / 1000} s`)
  const events: FaultEvent[] = []
  const end = durationMs - TAIL_MS

  // Connection drops every few seconds: mostly all connections, sometimes a single one.
  for (let t = HEAD_MS + rng.between(0, 3000); t < end; t += rng.between(3000, 7000))
    events.push({ atMs: Math.round(t), kind: rng.chance(0.6) ? 'drop-all' : 'drop-next' })

  for (const atMs of spread(durationMs, countFor(durationMs, 30_000, 2), rng))
    events.push({
      atMs,
      kind: 'burst-429',
      durationMs: rng.int(2000, 5000),
      retryAfterSeconds: rng.int(1, 2),
      nonWatchOnly: rng.chance(0.5),
    })
  for (const atMs of spread(durationMs, countFor(durationMs, 30_000, 2), rng))
    events.push({
      atMs,
      kind: 'burst-5xx',
      durationMs: rng.int(1000, 4000),
      status: rng.pick([500, 502, 503, 504]),
      method: rng.pick([undefined, 'GET', 'PATCH', 'PUT', 'POST']),
    })
  const stallTargets: StallTarget[] = ['operator-write', 'agent-status', 'watch', 'lease']
  const stalls = spread(durationMs, countFor(durationMs, 90_000), rng)
  for (const [i, atMs] of stalls.entries())
    events.push({
      atMs,
      kind: 'stall',
      // The first stall of a run always hits an operator write; then the others in turn.
      target: i === 0 ? 'operator-write' : stallTargets[(i + rng.int(0, 3)) % stallTargets.length]!,
    })
  for (const atMs of spread(durationMs, countFor(durationMs, 120_000), rng))
    events.push({ atMs, kind: 'database-outage', durationMs: rng.int(OUTAGE_MS.min, OUTAGE_MS.max) })

  // The disruptive ones, spaced apart.
  const heavy: FaultEvent[] = [
    ...spread(durationMs, countFor(durationMs, 60_000, 2), rng).map((atMs) => ({
      atMs,
      kind: 'compact' as const,
    })),
    ...spread(durationMs, countFor(durationMs, 180_000), rng).map((atMs) => ({
      atMs,
      kind: 'restart-apiserver' as const,
    })),
    ...spread(durationMs, countFor(durationMs, 120_000), rng).map((atMs) => ({
      atMs,
      kind: sharded ? ('kill-replica' as const) : ('kill-leader' as const),
    })),
    ...(sharded
      ? spread(durationMs, countFor(durationMs, SCALE_PERIOD_MS, 2), rng).map((atMs, i) => ({
          atMs,
          kind: i % 2 ? ('remove-replica' as const) : ('add-replica' as const),
        }))
      : []),
  ].sort((a, b) => a.atMs - b.atMs)
  spaceOut(heavy, durationMs)
  events.push(...heavy)

  // The operator's own resilience: after the others, so a seed's earlier faults stay where they were.
  for (const atMs of spread(durationMs, countFor(durationMs, 120_000), rng))
    events.push({
      atMs,
      kind: 'db-timeout-after-commit',
      writes: rng.int(HUNG_WRITES.min, HUNG_WRITES.max),
      armMs: HANG_ARM_MS,
    })
  for (const atMs of spread(durationMs, countFor(durationMs, 120_000), rng))
    events.push({
      atMs,
      kind: 'db-slow',
      durationMs: rng.int(SLOW_WINDOW_MS.min, SLOW_WINDOW_MS.max),
      delayMs: rng.int(SLOW_DELAY_MS.min, SLOW_DELAY_MS.max),
    })
  for (const atMs of spread(durationMs, countFor(durationMs, 180_000), rng))
    events.push({
      atMs,
      kind: 'rbac-revoked',
      durationMs: rng.int(REVOKED_WINDOW_MS.min, REVOKED_WINDOW_MS.max),
    })
  return events.sort((a, b) => a.atMs - b.atMs || a.kind.localeCompare(b.kind))
}

/**
 * Moves disruptive events apart (in place) so that consecutive ones are at least
 * {@link HEAVY_SPACING_MS} apart, first pushing later ones back, then, if the last one
 * ran past the end, pulling earlier ones forward.
 */
function spaceOut(heavy: FaultEvent[], durationMs: number): void {
  const last = durationMs - TAIL_MS
  for (let i = 1; i < heavy.length; i++)
    heavy[i]!.atMs = Math.max(heavy[i]!.atMs, heavy[i - 1]!.atMs + HEAVY_SPACING_MS)
  if (heavy.length > 0 && heavy[heavy.length - 1]!.atMs > last) {
    heavy[heavy.length - 1]!.atMs = last
    for (let i = heavy.length - 2; i >= 0; i--)
      heavy[i]!.atMs = Math.min(heavy[i]!.atMs, heavy[i + 1]!.atMs - HEAVY_SPACING_MS)
  }
}

/** True when every heavy fault is at least {@link HEAVY_SPACING_MS} from the next (for tests). */
export function isSpacedOut(events: readonly FaultEvent[]): boolean {
  const heavy = events.filter((e) => HEAVY.has(e.kind)).map((e) => e.atMs)
  return heavy.every((t, i) => i === 0 || t - heavy[i - 1]! >= HEAVY_SPACING_MS)
}

/** How many events of each kind. */
export function countByKind(events: readonly { kind: FaultKind }[]): Record<FaultKind, number> {
  const out = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>
  for (const e of events) out[e.kind]++
  return out
}
