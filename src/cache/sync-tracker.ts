/**
 * @module sync-tracker — an informer's {@link SyncState} and the proofs that move it: a restored
 * snapshot, then a relist, a bookmark, or the watch reaching the server's version read by a `limit=1` list.
 */
import { raceAbort } from '../core/abort.ts'
import { Backoff } from '../core/backoff.ts'
import { type Clock, sleep } from '../core/clock.ts'
import { EdgeopError, errorMessage } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import type { KubeList } from '../core/types.ts'
import { resourceVersionReached, type SyncState } from './sync-state.ts'

/** What proved that a store holds the server's state. */
export type SyncProof = 'list' | 'bookmark' | 'resourceVersion'

/** @internal One informer's sync state; the informer feeds it, readers ask it. */
export class SyncTracker {
  #state: SyncState = 'unsynced'
  readonly #synced: Promise<void>
  #markSynced: () => void = () => {}
  readonly #restored: Promise<void>
  #markRestored: () => void = () => {}
  readonly #clock: Clock
  readonly #log: Logger
  readonly #describe: string
  /** While restored: since when (epoch ms). */
  servingSince: number | undefined
  /** While restored: when the snapshot was written (epoch ms). */
  takenAt: number | undefined
  /** While restored: the server's resourceVersion from a `limit=1` list; the watch is caught up once past it. */
  #serverRV: string | undefined

  constructor(clock: Clock, log: Logger, describe: string) {
    this.#clock = clock
    this.#log = log
    this.#describe = describe
    this.#synced = new Promise((resolve) => {
      this.#markSynced = resolve
    })
    this.#restored = new Promise((resolve) => {
      this.#markRestored = resolve
    })
  }

  get state(): SyncState {
    return this.#state
  }

  /** The store holds a restored snapshot, written at `takenAt`. */
  restored(takenAt: number | undefined): void {
    this.#state = 'restored'
    this.servingSince = this.#clock.now()
    this.takenAt = takenAt
    this.#markRestored()
  }

  /** The store holds the server's state, as `how` proved; `objects` for the log line. */
  caughtUp(how: SyncProof, objects: number): void {
    if (this.#state === 'synced') return
    if (this.servingSince !== undefined)
      this.#log.info('cache synced: the snapshot is caught up with the server', {
        by: how,
        servedFromSnapshotMs: this.#clock.now() - this.servingSince,
      })
    else this.#log.info('cache synced', { objects })
    this.#state = 'synced'
    this.servingSince = undefined
    this.takenAt = undefined
    this.#serverRV = undefined
    this.#markRestored()
    this.#markSynced()
  }

  /** The watch's resume point is `current` now: past the server's version, a restored store is synced. */
  watchedTo(current: string, objects: number): void {
    if (this.#state !== 'restored' || this.#serverRV === undefined) return
    if (resourceVersionReached(current, this.#serverRV)) this.caughtUp('resourceVersion', objects)
  }

  /**
   * While restored: asks the server for its current resourceVersion with a `limit=1` list (a
   * consistent read: one object, not the collection), retrying on a backoff (client-go's reflector
   * delays) until it answers, the store syncs another way, or `signal` aborts; then `check()` is called.
   */
  async askServerVersion(
    list: (signal: AbortSignal) => Promise<KubeList>,
    check: () => void,
    signal: AbortSignal,
  ): Promise<void> {
    const backoff = new Backoff({ clock: this.#clock })
    while (this.#state === 'restored' && !signal.aborted) {
      try {
        const page = await raceAbort(list(signal), signal)
        this.#serverRV = page.metadata?.resourceVersion
        return check()
      } catch (err) {
        if (signal.aborted) return
        this.#log.debug('could not read the server version; still serving the snapshot', {
          error: errorMessage(err),
        })
        await sleep(backoff.next(), this.#clock, signal).catch(() => {})
      }
    }
  }

  /**
   * Resolves once the state is `synced` (`acceptRestored`: or `restored`), at once if it is. Rejects
   * with `EDGEOP_ERR_ABORTED` (the signal's reason as cause) if `signal` aborts first.
   */
  when(acceptRestored: boolean, signal: AbortSignal | undefined): Promise<void> {
    if (this.reached(acceptRestored)) return Promise.resolve()
    const what = acceptRestored ? 'restore' : 'sync'
    return raceAbort(
      acceptRestored ? this.#restored : this.#synced,
      signal,
      () =>
        new EdgeopError('EDGEOP_ERR_ABORTED', `stopped waiting for ${this.#describe} to ${what}`, {
          step: `wait for cache ${what}`,
          cause: signal?.reason,
        }),
    )
  }

  /** Whether the state is `synced` (`acceptRestored`: or `restored`). */
  reached(acceptRestored: boolean): boolean {
    return acceptRestored ? this.#state !== 'unsynced' : this.#state === 'synced'
  }

  /** The promise {@link when} waits on, without an abort (for a handler's registration). */
  once(acceptRestored: boolean): Promise<void> {
    return acceptRestored ? this.#restored : this.#synced
  }
}
