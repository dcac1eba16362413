/**
 * @module settings — what a soak run can be told (its options, their defaults) and the bounds its
 * invariants hold the system to.
 */

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
/** Leader election timings of the operator replicas. */
export const LEASE = { durationMs: 10_000, renewMs: 7000, retryMs: 2000 }
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
}

/** {@link Settings} of `options`. */
export function resolveSettings(options: SoakOptions): Settings {
  const chaosMs = Math.round(options.minutes * 60_000)
  return {
    rate: options.rate ?? DEFAULT_RATE,
    appTarget: options.appTarget ?? DEFAULT_APP_TARGET,
    nodeConfigTarget: options.nodeConfigTarget ?? DEFAULT_NODECONFIG_TARGET,
    boundMs: options.boundMs ?? DEFAULT_BOUND_MS,
    chaosMs,
    warmupMs: Math.max(RSS_WARMUP_MS, chaosMs * RSS_WARMUP_FRACTION),
  }
}
