/**
 * @module warm-start — the soak with cache snapshots (`--snapshots`): a cache directory per process slot,
 * kept across that slot's restarts, and the invariant that an operator does nothing before its caches
 * caught up with the server.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { trackTempDir, untrackTempDir } from '../controlplane/cleanup.ts'
import type { LogLine } from '../support/operator-process.ts'

/** The invariant's id. */
export const NO_ACTION_BEFORE_SYNCED = 'no-action-before-synced'

/** The log lines the check reads (src/cache/informer.ts, src/cache/sync-tracker.ts, src/controller/controller.ts). */
const RESTORED = 'serving from cache snapshot until the watch catches up with the server'
const CAUGHT_UP = 'cache synced: the snapshot is caught up with the server'
const WORKERS = 'starting workers'

/**
 * One operator process's log judged: each informer restored from a snapshot must have caught up
 * before the controller's workers start (they are where every write, and so every deletion, comes
 * from). Returns the informers still restored when the workers started (empty: the check passed),
 * or undefined when the process restored nothing or never started workers (nothing to check).
 */
export function restoredAtWorkerStart(logs: readonly LogLine[]): string[] | undefined {
  const restored = new Set<string>()
  let warm = false
  for (const l of logs) {
    if (l.msg === RESTORED) {
      restored.add(String(l.informer))
      warm = true
    } else if (l.msg === CAUGHT_UP) restored.delete(String(l.informer))
    else if (l.msg === WORKERS) return warm ? [...restored] : undefined
  }
  return undefined
}

/** A cache directory per slot, created on first use, kept for the slot's restarts, removed by `close`. */
export class CacheDirs {
  readonly #dirs = new Map<string, string>()

  /** `slot`'s directory. */
  async of(slot: string): Promise<string> {
    let dir = this.#dirs.get(slot)
    if (dir === undefined) {
      dir = await realpath(await mkdtemp(join(tmpdir(), `edgeop-soak-cache-${slot}-`)))
      trackTempDir(dir)
      this.#dirs.set(slot, dir)
    }
    return dir
  }

  async close(): Promise<void> {
    for (const dir of this.#dirs.values()) {
      await rm(dir, { recursive: true, force: true })
      untrackTempDir(dir)
    }
  }
}
