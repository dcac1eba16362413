/**
 * @module snapshot-schedule — when to write a cache snapshot: a pure function of the times of changes and writes.
 *
 * The driver (`snapshot-keeper.ts`) records changes and writes on the monotonic clock
 * and asks {@link snapshotDueAt} when the next write is due; nothing here reads a clock.
 */

/**
 * Quiet time before a write: 5 s without a change. A relist, a rollout or a reconnect's
 * catch-up arrives as a burst within seconds; writing after it writes the burst once.
 */
export const SNAPSHOT_QUIET_MS = 5_000
/**
 * Shortest time between two writes of one snapshot: 5 minutes. Edge nodes often run on
 * SD cards or eMMC whose flash endures a limited number of erase cycles; with this bound
 * a snapshot is rewritten at most 12 times an hour whatever the event rate (bytes written
 * per hour ≤ 12 × its size), and a restart loses at most 5 minutes of history, which the
 * resumed watch replays.
 */
export const SNAPSHOT_MIN_INTERVAL_MS = 300_000

/** When snapshot writes may happen (ms). */
export interface SnapshotTiming {
  /** Default {@link SNAPSHOT_QUIET_MS}. */
  quietMs: number
  /** Default {@link SNAPSHOT_MIN_INTERVAL_MS}; also the longest a change waits under a never-quiet stream. */
  minIntervalMs: number
}

/** What the schedule remembers (monotonic ms); `dirtySince` undefined: the file holds the cache. */
export interface SnapshotSchedule {
  /** First change not yet written. */
  dirtySince?: number | undefined
  /** Latest change. */
  lastChangeAt?: number | undefined
  /** Latest write started. */
  lastWriteAt?: number | undefined
}

/**
 * When the next write is due: undefined when nothing changed since the last write; else
 * the later of "quiet for `quietMs`" (or dirty for `minIntervalMs`, so a steady stream
 * still gets written) and "`minIntervalMs` after the previous write". A time ≤ now means now.
 */
export function snapshotDueAt(s: SnapshotSchedule, t: SnapshotTiming): number | undefined {
  if (s.dirtySince === undefined) return undefined
  const settled = Math.min((s.lastChangeAt ?? s.dirtySince) + t.quietMs, s.dirtySince + t.minIntervalMs)
  return Math.max(settled, s.lastWriteAt === undefined ? settled : s.lastWriteAt + t.minIntervalMs)
}
