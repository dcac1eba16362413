/**
 * @module informer — one list/watch feeding a cache and many event handlers.
 */
import type { ResourceType } from '../client/resource.ts'
import { type CancelTimer, type Clock, realClock } from '../core/clock.ts'
import { isEncodedObject, materialize } from '../core/encoded-object.ts'
import { EdgeopError } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { type KubeObject, objectKey } from '../core/types.ts'
import type { WatcherEvent } from '../watch/events.ts'
import type { ListerWatcher } from '../watch/lister-watcher.ts'
import { Watcher, type WatcherHealth, type WatcherOptions } from '../watch/watcher.ts'
import type { CacheStore } from './cache-store.ts'
import { CompactIndexer, toEncodedObject } from './compact-indexer.ts'
import { type EventHandler, type HandlerRegistration, Listener } from './listener.ts'
import { MemoryIndexer } from './memory-indexer.ts'
import { relistDiff } from './relist-diff.ts'
import { SnapshotKeeper, type SnapshotOptions } from './snapshot-keeper.ts'
import type { Indexer, IndexFunc } from './store.ts'
import type { SyncState } from './sync-state.ts'
import { SyncTracker } from './sync-tracker.ts'
import { deepFreeze, stripManagedFields } from './transforms.ts'

/** client-go `minimumResyncPeriod`: handler resync periods below 1 s are raised to 1 s. */
export const MIN_RESYNC_PERIOD_MS = 1000

/** Options of {@link SharedInformer}. */
export interface InformerOptions<T extends KubeObject>
  extends Omit<WatcherOptions<T>, 'transform' | 'logger' | 'clock' | 'onBookmark'> {
  /** Secondary indexes of the store, by name (the namespace index is always there). */
  indexers?: Record<string, IndexFunc<T>>
  /** Drop `metadata.managedFields` before caching. Default true. */
  stripManagedFields?: boolean
  /**
   * A transform after stripping (keep only the fields a controller reads). Set before `run`. With the
   * compact store it runs on the decoded object and its result is kept as its JSON encoding (so it must
   * return a JSON-shaped object), which costs a decode and an encode per object.
   */
  transform?: (obj: T) => T
  /**
   * How cached objects are kept. Default `eager` for an informer made by hand; the factory's informers default to
   * `compact` for full objects (`DEFAULT_PROTOBUF_STORE`, `DEFAULT_JSON_STORE`) and to `eager` for metadata-only
   * ones (`DEFAULT_METADATA_STORE`). `eager`: as decoded, frozen objects. `compact`: as their wire
   * bytes with the scanned metadata, decoded on demand (reads, and delivery to handlers that read more than
   * metadata: `EventHandler.reads`) through a small
   * cache of decoded objects ({@link CompactIndexer}); what handlers and readers get is the same. The
   * factory then asks the client for bytes (`keepBytes`); a source that sends parsed objects works too
   * (each is kept as its JSON encoding). Index functions that read more than metadata decode (see
   * {@link IndexFunc}). The wire format is chosen separately.
   */
  store?: 'eager' | 'compact'
  /**
   * Deep-freeze cached objects so that accidental mutation throws instead of silently
   * corrupting shared state. Default true; turn off only after measuring the cost.
   */
  freeze?: boolean
  /** Time source of the watcher and the sync wait; inject a ManualClock in tests. */
  clock?: Clock
  /** Where the watcher's failures, sync and handler errors are logged. */
  logger?: Logger
  /**
   * Persist the store to this snapshot file and start warm from it (see the class
   * guarantees). The factory sets it for every informer once `persistTo` is called.
   */
  snapshot?: SnapshotOptions
}

/** Informer health: the watcher's plus the handlers' backlog. */
export interface InformerHealth extends WatcherHealth {
  /** True only in the `synced` state (the server's state), not while serving a restored snapshot. */
  synced: boolean
  /** What the store holds: nothing yet, a restored snapshot, or the server's state ({@link SyncState}). */
  syncState: SyncState
  /** Notifications buffered across all handlers. */
  pendingNotifications: number
  /** Since when (ms since epoch) the store is a restored snapshot not yet confirmed by the server; undefined otherwise. */
  servingFromSnapshotSince: number | undefined
  /** While `restored`: when the snapshot file was written (ms since epoch, its mtime); undefined otherwise. */
  snapshotTakenAt: number | undefined
  /** Snapshot writes that failed (full disk, read-only directory); 0 without snapshots. */
  snapshotWriteFailures: number
}

/**
 * A shared informer: keeps {@link store} equal to the server's state of one
 * collection and tells handlers what changed.
 *
 * Guarantees: the store is updated before handlers are notified; a relist delivers
 * deletions for objects that vanished meanwhile (`finalStateUnknown: true`, with the
 * last known state) and does not report unchanged objects as updates (client-go
 * kubernetes/kubernetes#87957); a handler added after start first receives every cached object as an
 * initial add; `hasSynced()` turns true only once the store holds the server's state (`synced`,
 * see {@link SyncState}).
 * Does not guarantee: ordering across handlers or across objects.
 *
 * With `snapshot`: `run` first loads a valid snapshot file (same resource, scope,
 * selectors, tag and format, checksum intact; anything else is one warning and a cold
 * start), delivers its objects to handlers as initial adds and is `restored`: a full state
 * at a known resourceVersion, possibly old. {@link whenRestored} and handlers registered with
 * `acceptRestored` see it as their first state (the node agent serves its files from it while the
 * server is out of reach); {@link whenSynced}, `hasSynced()` and every other handler wait for
 * `synced`. The watch then resumes from the snapshot's resourceVersion without listing; changes
 * since arrive as events, deletions included. Beside it, one `limit=1` list reads the server's
 * current resourceVersion; the informer is `synced` once the watch has delivered every change up
 * to it, or at the watch's first bookmark (see {@link SyncState}). A
 * 410 relists and delivers the differences as any relist does (tombstones for vanished objects),
 * and the relist makes it `synced`. `health()` reports `servingFromSnapshotSince` and the
 * snapshot's age while `restored`. The store is written back after `SNAPSHOT_QUIET_MS` without a
 * change, at most once per `SNAPSHOT_MIN_INTERVAL_MS`, and when `run` ends.
 */
export class SharedInformer<T extends KubeObject = KubeObject> {
  /** The cache: written only by the informer; objects in it are deep-frozen unless `freeze: false`. */
  readonly store: Indexer<T>
  /** The list/watch engine that feeds the store. */
  readonly watcher: Watcher<T>
  readonly #indexer: CacheStore<T>
  readonly #listeners = new Set<Listener<T>>()
  readonly #clock: Clock
  readonly #log: Logger
  #transform: ((obj: T) => T) | undefined
  readonly #sync: SyncTracker
  #started = false
  #stopped = false
  #cancelResync: CancelTimer | undefined
  readonly #keeper: SnapshotKeeper | undefined
  readonly #freeze: boolean

  /** An informer over `source`; it lists and watches only once {@link SharedInformer.run} is called. */
  constructor(source: ListerWatcher<T>, options: InformerOptions<T> = {}) {
    this.#clock = options.clock ?? realClock
    this.#log = (options.logger ?? noopLogger).child({ informer: source.describe })
    this.#sync = new SyncTracker(this.#clock, this.#log, source.describe)
    const strip = options.stripManagedFields ?? true
    const freeze = options.freeze ?? true
    const compact = options.store === 'compact'
    this.#indexer = compact
      ? new CompactIndexer<T>({ freeze, indexers: options.indexers })
      : new MemoryIndexer<T>(options.indexers)
    this.store = this.#indexer
    this.#transform = options.transform
    this.#freeze = freeze && !compact
    this.#keeper =
      options.snapshot &&
      new SnapshotKeeper(options.snapshot, this.#clock, this.#log, () => ({
        resourceVersion: this.watcher.health().resourceVersion,
        objects: this.#indexer.entries(),
      }))
    this.watcher = new Watcher<T>(source, {
      ...options,
      clock: this.#clock,
      logger: options.logger ?? noopLogger,
      onBookmark: () => this.#sync.caughtUp('bookmark', this.#indexer.size),
      transform: compact
        ? (obj) => this.#compactTransform(obj, strip)
        : (obj) => {
            let o = strip ? stripManagedFields(obj) : obj
            if (this.#transform) o = this.#transform(o)
            return freeze ? deepFreeze(o) : o
          },
    })
  }

  /**
   * The compact store's transform: a stub from the client stays bytes (its managedFields were cut as
   * bytes); a plain object is stripped and kept as its JSON encoding; a user transform runs on the
   * decoded object and its result is kept as JSON.
   */
  #compactTransform(obj: T, strip: boolean): T {
    if (!this.#transform)
      return (isEncodedObject(obj)
        ? obj
        : toEncodedObject(strip ? stripManagedFields(obj) : obj)) as unknown as T
    const full = isEncodedObject(obj) ? materialize(obj) : strip ? stripManagedFields(obj) : obj
    return toEncodedObject(this.#transform(full)) as unknown as T
  }

  /** Names the collection. */
  get describe(): string {
    return this.watcher.source.describe
  }

  /** The resource it caches, when its source knows it (the factory's informers do). */
  get type(): ResourceType | undefined {
    return this.watcher.source.type
  }

  /** Replaces the user transform. Only before `run` (kubernetes/kubernetes#124344). */
  setTransform(transform: (obj: T) => T): void {
    if (this.#started)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `informer for ${this.describe} has already started`, {
        step: 'set transform',
      })
    this.#transform = transform
  }

  /** The store holds the server's state (`synced`; a restored snapshot is not enough). */
  hasSynced(): boolean {
    return this.#sync.state === 'synced'
  }

  /** What the store holds: nothing yet, a restored snapshot, or the server's state. */
  syncState(): SyncState {
    return this.#sync.state
  }

  /** Health for probes and metrics. */
  health(): InformerHealth {
    let pending = 0
    for (const l of this.#listeners) pending += l.pending
    return {
      ...this.watcher.health(),
      synced: this.#sync.state === 'synced',
      syncState: this.#sync.state,
      pendingNotifications: pending,
      servingFromSnapshotSince: this.#sync.servingSince,
      snapshotTakenAt: this.#sync.takenAt,
      snapshotWriteFailures: this.#keeper?.failures ?? 0,
    }
  }

  /** Loads the snapshot (if valid) as the first full state and seeds the watch with its resourceVersion. */
  async #restore(keeper: SnapshotKeeper): Promise<void> {
    const r = await keeper.restore<T>({ keepBytes: this.#indexer instanceof CompactIndexer })
    if (!r) return
    this.#replace(this.#freeze ? r.objects.map(deepFreeze) : r.objects)
    this.watcher.resumeFrom(r.resourceVersion)
    this.#sync.restored(r.writtenAt)
    this.#log.info('serving from cache snapshot until the watch catches up with the server', {
      objects: r.objects.length,
      resourceVersion: r.resourceVersion,
      ...(r.writtenAt === undefined ? {} : { snapshotAgeMs: this.#clock.now() - r.writtenAt }),
    })
  }

  /**
   * Registers a handler. Before start it sees the first list as initial adds; after
   * start it first gets every cached object as an initial add. A resync period > 0
   * re-delivers every cached object as `onUpdate(obj, obj)` that often (min 1 s). The registration
   * has synced once the informer is `synced` and the handler processed its initial adds;
   * `acceptRestored`: already once it is `restored` (a snapshot, see {@link SyncState}).
   */
  addEventHandler(
    handler: EventHandler<T>,
    options: { resyncPeriodMs?: number; acceptRestored?: boolean } = {},
  ): HandlerRegistration {
    if (this.#stopped)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `informer for ${this.describe} has stopped`, {
        step: 'add event handler',
      })
    const period = options.resyncPeriodMs ? Math.max(MIN_RESYNC_PERIOD_MS, options.resyncPeriodMs) : 0
    const listener = new Listener<T>(
      handler,
      period,
      () => this.#sync.reached(options.acceptRestored ?? false),
      () => this.#sync.once(options.acceptRestored ?? false),
      (l) => this.#listeners.delete(l),
      this.#log,
      (entry) => this.#indexer.resolve(entry),
    )
    listener.nextResyncAt = this.#clock.monotonic() + period
    this.#listeners.add(listener)
    if (this.#sync.reached(true))
      for (const obj of this.#indexer.entries()) listener.notify({ kind: 'add', obj, initial: true })
    if (this.#started) this.#scheduleResync()
    return listener
  }

  /**
   * Resolves once the first full state is in the store (at once if it already is, even
   * when `signal` has aborted). Rejects with `EDGEOP_ERR_ABORTED` (the signal's reason
   * as cause) if `signal` aborts first. Without a signal it waits as long as it takes:
   * bound it with core's `withDeadline` on the informer's clock.
   */
  whenSynced(signal?: AbortSignal): Promise<void> {
    return this.#sync.when(false, signal)
  }

  /**
   * {@link whenSynced} for a full state that may be a restored snapshot: resolves once the informer is
   * `restored` or `synced`.
   */
  whenRestored(signal?: AbortSignal): Promise<void> {
    return this.#sync.when(true, signal)
  }

  /** Resolves true once synced, or false if `signal` aborts first ({@link whenSynced} as a boolean). */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    return this.whenSynced(signal).then(
      () => true,
      () => false,
    )
  }

  /** Lists, watches and feeds the store and handlers until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.#started)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `informer for ${this.describe} is already running`, {
        step: 'run informer',
      })
    this.#started = true
    if (this.#keeper) await this.#restore(this.#keeper)
    if (this.#sync.state === 'restored')
      void this.#sync.askServerVersion(
        (s) => this.watcher.source.list({ limit: 1 }, s),
        () => this.#watchedTo(),
        signal,
      )
    this.#scheduleResync()
    try {
      await this.watcher.run((ev) => this.#apply(ev), signal)
    } finally {
      this.#stopped = true
      this.#cancelResync?.()
      await this.#keeper?.flush()
      this.#keeper?.stop()
    }
  }

  #apply(ev: WatcherEvent<T>): void {
    this.#keeper?.changed()
    switch (ev.type) {
      case 'replace':
        this.#replace(ev.objects)
        this.#sync.caughtUp('list', this.#indexer.size)
        return
      case 'added':
      case 'modified': {
        const old = this.#indexer.upsert(ev.object)
        this.#broadcast(
          old ? { kind: 'update', old, obj: ev.object } : { kind: 'add', obj: ev.object, initial: false },
        )
        this.#watchedTo()
        return
      }
      case 'deleted': {
        const old = this.#indexer.remove(objectKey(ev.object))
        if (old) this.#broadcast({ kind: 'delete', obj: ev.object, stale: false })
        this.#watchedTo()
        return
      }
    }
  }

  /** A restored store whose watch has delivered every change up to the server's version is synced. */
  #watchedTo(): void {
    this.#sync.watchedTo(this.watcher.health().resourceVersion, this.#indexer.size)
  }

  /** A relist: apply {@link relistDiff}'s deltas (deletions first), notifying as each lands. */
  #replace(objects: T[]): void {
    const initial = !this.#sync.reached(true)
    const cached = { get: (k: string) => this.#indexer.entry(k), keys: () => this.#indexer.keys() }
    for (const d of relistDiff(cached, objects)) {
      if (d.kind === 'delete') {
        this.#indexer.remove(d.key)
        this.#broadcast({ kind: 'delete', obj: d.obj, stale: true })
        continue
      }
      this.#indexer.upsert(d.obj)
      if (d.kind === 'add') this.#broadcast({ kind: 'add', obj: d.obj, initial })
      else if (d.kind === 'update') this.#broadcast({ kind: 'update', old: d.old, obj: d.obj })
    }
  }

  #broadcast(n: Parameters<Listener<T>['notify']>[0]): void {
    for (const l of this.#listeners) l.notify(n)
  }

  /** One timer for all handlers' resyncs, armed at the earliest due time. */
  #scheduleResync(): void {
    this.#cancelResync?.()
    this.#cancelResync = undefined
    let earliest = Number.POSITIVE_INFINITY
    for (const l of this.#listeners) if (l.resyncPeriodMs > 0) earliest = Math.min(earliest, l.nextResyncAt)
    if (earliest === Number.POSITIVE_INFINITY || this.#stopped) return
    this.#cancelResync = this.#clock.setTimer(() => {
      const now = this.#clock.monotonic()
      for (const l of this.#listeners) {
        if (l.resyncPeriodMs === 0 || now < l.nextResyncAt) continue
        l.nextResyncAt = now + l.resyncPeriodMs
        if (this.#sync.reached(true))
          for (const obj of this.#indexer.entries()) l.notify({ kind: 'update', old: obj, obj })
      }
      this.#scheduleResync()
    }, earliest - this.#clock.monotonic())
  }
}
