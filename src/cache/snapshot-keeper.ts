/**
 * @module snapshot-keeper — the driver that restores an informer's cache from its snapshot file and keeps the file current.
 *
 * It arms one timer at the time {@link snapshotDueAt} names, encodes the store
 * synchronously (so objects and resourceVersion are taken at one instant) and writes
 * the file atomically. A file it cannot use is reported in one warning and ignored; a
 * write that fails (full disk, read-only directory) is one warning per failure streak
 * and a count in the informer's health, and the informer goes on.
 */
import { stat } from 'node:fs/promises'
import type { CancelTimer, Clock } from '../core/clock.ts'
import { errorMessage } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'
import type { KubeObject } from '../core/types.ts'
import { MAX_SNAPSHOT_BYTES, readRegularFile, writeFileAtomic } from './snapshot-file.ts'
import {
  decodeSnapshot,
  encodeSnapshot,
  type SnapshotContents,
  type SnapshotIdentity,
} from './snapshot-format.ts'
import {
  SNAPSHOT_MIN_INTERVAL_MS,
  SNAPSHOT_QUIET_MS,
  type SnapshotSchedule,
  type SnapshotTiming,
  snapshotDueAt,
} from './snapshot-schedule.ts'

/** Where and how an informer keeps its snapshot. */
export interface SnapshotOptions extends Partial<SnapshotTiming> {
  /** The snapshot file. */
  path: string
  /** What the snapshot belongs to; a file written for anything else is ignored. */
  identity: SnapshotIdentity
}

/** Restores and writes one informer's snapshot (engine-internal to the informer). */
export class SnapshotKeeper {
  readonly #o: SnapshotOptions
  readonly #timing: SnapshotTiming
  readonly #clock: Clock
  readonly #log: Logger
  readonly #read: () => { resourceVersion: string; objects: KubeObject[] }
  #s: SnapshotSchedule = {}
  #cancel: CancelTimer | undefined
  #writing: Promise<void> | undefined
  #stopped = false
  #failing = false
  /** Failed writes so far (a counter for metrics). */
  failures = 0

  /** A keeper of `o.path`; `read` returns the store and the resourceVersion it is consistent at. */
  constructor(
    o: SnapshotOptions,
    clock: Clock,
    log: Logger,
    read: () => { resourceVersion: string; objects: KubeObject[] },
  ) {
    this.#o = o
    this.#timing = {
      quietMs: o.quietMs ?? SNAPSHOT_QUIET_MS,
      minIntervalMs: o.minIntervalMs ?? SNAPSHOT_MIN_INTERVAL_MS,
    }
    this.#clock = clock
    this.#log = log
    this.#read = read
  }

  /**
   * The snapshot's contents, or undefined: no file, or one warning naming the file and why it
   * is not used (not a regular file, too large, corrupt, foreign, an object of the wrong shape),
   * and the informer starts cold. `keepBytes`: objects as stubs of their JSON bytes.
   */
  async restore<T extends KubeObject>(
    o: { keepBytes?: boolean } = {},
  ): Promise<(SnapshotContents<T> & { writtenAt: number | undefined }) | undefined> {
    let r: SnapshotContents<T> | { problem: string } | undefined
    let writtenAt: number | undefined
    try {
      const bytes = await readRegularFile(this.#o.path, MAX_SNAPSHOT_BYTES)
      r = bytes && decodeSnapshot<T>(bytes, this.#o.identity, o)
      // Its age, for the restored state's health: the file's mtime (written once, renamed into place).
      if (r && !('problem' in r)) writtenAt = (await stat(this.#o.path).catch(() => undefined))?.mtimeMs
    } catch (err) {
      r = { problem: errorMessage(err) }
    }
    if (r && 'problem' in r)
      this.#log.warn('cache snapshot not used; starting cold', {
        snapshot: this.#o.path,
        problem: r.problem,
      })
    else return r && { ...r, writtenAt }
  }

  /** Records a change of the store and arms the write. */
  changed(): void {
    const now = this.#clock.monotonic()
    this.#s = { ...this.#s, dirtySince: this.#s.dirtySince ?? now, lastChangeAt: now }
    if (!this.#cancel && !this.#writing) this.#arm()
  }

  #arm(): void {
    const due = snapshotDueAt(this.#s, this.#timing)
    if (due === undefined || this.#stopped) return
    this.#cancel = this.#clock.setTimer(() => {
      this.#cancel = undefined
      if (snapshotDueAt(this.#s, this.#timing)! > this.#clock.monotonic()) this.#arm()
      else void this.flush()
    }, due - this.#clock.monotonic())
  }

  /**
   * Writes now if anything changed since the last write (used at shutdown); resolves when
   * written or failed. A failure is a warning (the first of a streak) and a count in
   * {@link SnapshotKeeper.failures}; the next attempt waits the minimum interval.
   */
  async flush(): Promise<void> {
    await this.#writing
    const dirtySince = this.#s.dirtySince
    if (dirtySince === undefined) return
    this.#cancel?.()
    this.#cancel = undefined
    const { resourceVersion, objects } = this.#read()
    this.#s = { ...this.#s, dirtySince: undefined, lastWriteAt: this.#clock.monotonic() }
    this.#writing = writeFileAtomic(
      this.#o.path,
      encodeSnapshot(this.#o.identity, resourceVersion, objects),
    ).then(
      () => {
        this.#failing = false
      },
      (err: unknown) => {
        if (!this.#failing)
          this.#log.warn('cache snapshot not written; going on without it', {
            snapshot: this.#o.path,
            error: errorMessage(err),
          })
        this.#failing = true
        this.failures++
        this.#s = { ...this.#s, dirtySince: this.#s.dirtySince ?? dirtySince }
      },
    )
    await this.#writing
    this.#writing = undefined
    this.#arm()
  }

  /** Stops writing (the informer flushes first at shutdown). */
  stop(): void {
    this.#stopped = true
    this.#cancel?.()
  }
}
