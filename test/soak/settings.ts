/**
 * @module settings — what a soak run can be told (its options, their defaults) and the bounds its
 * invariants hold the system to.
 */
import { SHARD_LABEL_PREFIX } from '../../src/sharding/shard.ts'

/** Deliberate breakage, to show that the soak notices. */
export type Sabotage =
  /** The database stand-in forgets entries on every PUT, so re-ensuring creates duplicates. */
  | 'duplicate-db'
  /** A 503 for every AppService status write stays on after the chaos phase. */
  | 'fault-left-on'

/** Options of `runSoak` (soak.ts). */
export interface SoakOptions {
  /** Length of the chaos phase in minutes (≥ 1). */
  minutes: number
  seed: number
  /** Driver operations per second (default {@link DEFAULT_RATE}). */
  rate?: number
  /** Live AppServices / NodeConfigs the driver aims for. */
  appTarget?: number
  nodeConfigTarget?: number
  /** A change older than this must be reflected everywhere (default {@link DEFAULT_BOUND_MS}). */
  boundMs?: number
  sabotage?: Sabotage
  /** Every process's log is written here (`<process>.log`, JSON lines) when the run fails (or always, with `keepLogs`). */
  logDir?: string
  keepLogs?: boolean
  /** `--log-level` of the operator and agent processes (default info). */
  logLevel?: 'debug' | 'info'
  /** Progress lines (default: stderr). */
  log?: (line: string) => void
  /**
   * Sharded mode: the operators run with `--shard` (every replica owns a share of the AppServices)
   * instead of `--leader-elect`; replicas are killed at random, added and removed.
   */
  sharded?: boolean
  /** Operator replicas at the start (default 2; sharded, {@link DEFAULT_SHARDED_REPLICAS}). */
  replicas?: number
  /**
   * Every operator and agent keeps cache snapshots (`--cache-dir`, one directory per process slot, kept
   * across the slot's restarts, so a restart is warm), and the invariant `no-action-before-synced` is checked.
   */
  snapshots?: boolean
  /**
   * A link profile (test/support/link-shape.ts `LINK_PROFILES`) between every operator and agent and
   * the API server: a forwarder on loopback adds its RTT and paces its bandwidth (not its loss, which
   * needs a network namespace). Default: none, loopback.
   */
  link?: string
}

export const DEFAULT_RATE = 2
export const DEFAULT_APP_TARGET = 30
export const DEFAULT_NODECONFIG_TARGET = 10
/** Convergence bound after the last change to an object (see the report for measured latencies). */
export const DEFAULT_BOUND_MS = 60_000
/** How long a teardown may take to delete everything through the operator and the agents. */
export const TEARDOWN_TIMEOUT_MS = 60_000
/** The quiet window at the end. */
export const QUIET_MS = 15_000
/** The checker reads the world this often during the chaos phase. */
export const CHECK_INTERVAL_MS = 3000
/** Requests per second through the proxy (all five processes), averaged over 10 s, during chaos. */
export const RATE_BOUND = 40
/** Requests per second through the proxy in the quiet window (Lease renewals and little else). */
export const QUIET_RATE_BOUND = 4
/** RSS growth allowed after warm-up. */
export const RSS_GROWTH_BOUND = 0.1
/**
 * Warm-up: 30 s or a tenth of the chaos phase, whichever is longer (V8 sizes its heap over
 * minutes), from the later of chaos start, process start and leadership start.
 */
export const RSS_WARMUP_MS = 30_000
export const RSS_WARMUP_FRACTION = 0.1
export const RSS_WINDOW_MS = 20_000
export const RSS_MIN_SPAN_MS = 45_000
/** The operators' Lease name (`--leader-election-id`); sharded, the ring's name. */
export const LEASE_NAME = 'appservice-soak'
/** Sharded mode: the assignment label on every AppService and its children. */
export const SHARD_LABEL = SHARD_LABEL_PREFIX + LEASE_NAME
/** Sharded mode: operator replicas at the start. */
export const DEFAULT_SHARDED_REPLICAS = 3
/**
 * Sharded mode: the replicas never fall below this by a removal (a kill still may, for its restart
 * delay): one replica alone is leader election's case, not sharding's.
 */
export const MIN_SHARDED_REPLICAS = 2
/** The namespaces the operators watch (plane.ts makes two). */
export const WATCHED_NAMESPACES = 2
/** The node agents (three fake Nodes): processes beside the operator replicas. */
export const AGENTS = 3
/**
 * The request-rate bounds for `replicas` operator replicas, `namespaces` watched namespaces and a
 * shard period of `periodMs`. {@link RATE_BOUND} and {@link QUIET_RATE_BOUND} were set for two
 * leader-elected replicas and three agents. Sharded, what grows with the replicas is each
 * process's fixed cost, not the work: an AppService is reconciled by one replica whatever their
 * number, but every replica re-opens its own watches after each connection drop, relists after a
 * compaction or a restart, renews its own Lease and runs the shard pass (one Lease list and one
 * metadata list per namespace each period). So the chaos bound is the leader-elected bound's share
 * per process ({@link RATE_BOUND} / 5) times the processes, plus every replica's shard pass; the
 * quiet bound is {@link QUIET_RATE_BOUND} plus every replica's shard pass, plus one Lease renewal
 * per period for each replica beyond the two the bound already counts.
 */
export function rateBounds(
  replicas: number,
  namespaces: number,
  periodMs: number,
): { chaos: number; quiet: number } {
  const pass = (namespaces + 1) / (periodMs / 1000)
  return {
    chaos: (RATE_BOUND / (2 + AGENTS)) * (replicas + AGENTS) + replicas * pass,
    quiet: QUIET_RATE_BOUND + replicas * pass + Math.max(0, replicas - 2) / (periodMs / 1000),
  }
}
/** Leader election timings of the operator replicas. */
export const LEASE = { durationMs: 10_000, renewMs: 7000, retryMs: 2000 }
/** Leader election timings: the Lease's duration, the renew deadline and the retry period. */
export type LeaseTimings = typeof LEASE

/**
 * The lease timings and convergence bound of a run over a link (`--link`), where the loopback ones
 * do not hold: the settings docs/edge-networks.md gives for that link. The chaos drops every
 * connection every few seconds; after each drop a renewal opens a new one (TCP, TLS and the
 * request: about four round trips, 3.2 s at 800 ms) within its share of the renew deadline, and
 * a new leader re-opens every watch over the link before it works. With the loopback timings the
 * satellite run saw nine leaders in four minutes, none long enough to finish its work
 * (2026-12-02). A link without an entry runs with the loopback settings.
 */
export const LINK_SETTINGS: Record<
  string,
  { lease: LeaseTimings; boundMs: number; maxConcurrentReconciles: number }
> = {
  satellite: {
    lease: { durationMs: 60_000, renewMs: 45_000, retryMs: 5000 },
    boundMs: 180_000,
    // A reconcile is about six round trips (Deployment, Service, database, status): one finished
    // every 4.6–5.8 s with one worker over this link, while the driver changes 2 objects a second.
    maxConcurrentReconciles: 10,
  },
}
/** `--max-concurrent-reconciles` of the operators on loopback (the default). */
export const MAX_CONCURRENT_RECONCILES = 1
/** A second with this many requests through the proxy is broken down in the report. */
export const HOT_SECOND = 40

/** Rule-based faults not consumed within this are cleared. */
export const RULE_TTL_MS = 20_000

/** The options of one run with every default filled in, and the lengths derived from them. */
export interface Settings {
  rate: number
  appTarget: number
  nodeConfigTarget: number
  boundMs: number
  chaosMs: number
  /** RSS warm-up: {@link RSS_WARMUP_MS} or {@link RSS_WARMUP_FRACTION} of the chaos phase, whichever is longer. */
  warmupMs: number
  sharded: boolean
  /** Operator replicas at the start. */
  replicas: number
  /** Requests/s through the proxy allowed over any 10 s of the chaos and settle phases ({@link rateBounds} sharded). */
  rateBound: number
  /** … and in the quiet window. */
  quietRateBound: number
  /** See {@link SoakOptions.snapshots}. */
  snapshots: boolean
  /** Leader election timings of the operator replicas ({@link LEASE}, or the link's). */
  lease: LeaseTimings
  /** Workers of the operators' controller ({@link MAX_CONCURRENT_RECONCILES}, or the link's). */
  maxConcurrentReconciles: number
}

/** {@link Settings} of `options`. */
export function resolveSettings(options: SoakOptions): Settings {
  const chaosMs = Math.round(options.minutes * 60_000)
  const sharded = options.sharded ?? false
  const link = options.link === undefined ? undefined : LINK_SETTINGS[options.link]
  const lease = link?.lease ?? LEASE
  const replicas = options.replicas ?? (sharded ? DEFAULT_SHARDED_REPLICAS : 2)
  // The schedule adds and removes replicas alternately, an addition first: one more at most.
  const bounds = sharded
    ? rateBounds(replicas + 1, WATCHED_NAMESPACES, lease.retryMs)
    : { chaos: RATE_BOUND, quiet: QUIET_RATE_BOUND }
  return {
    rate: options.rate ?? DEFAULT_RATE,
    appTarget: options.appTarget ?? DEFAULT_APP_TARGET,
    nodeConfigTarget: options.nodeConfigTarget ?? DEFAULT_NODECONFIG_TARGET,
    boundMs: options.boundMs ?? link?.boundMs ?? DEFAULT_BOUND_MS,
    chaosMs,
    warmupMs: Math.max(RSS_WARMUP_MS, chaosMs * RSS_WARMUP_FRACTION),
    sharded,
    replicas,
    rateBound: bounds.chaos,
    quietRateBound: bounds.quiet,
    snapshots: options.snapshots ?? false,
    lease,
    maxConcurrentReconciles: link?.maxConcurrentReconciles ?? MAX_CONCURRENT_RECONCILES,
  }
}
