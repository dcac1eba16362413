/**
 * @module factory — one informer per collection, started together, synced together.
 */

import { join } from 'node:path'
import type { KubeClient } from '../client/kube-client.ts'
import type { ResourceType } from '../client/resource.ts'
import { type Clock, realClock } from '../core/clock.ts'
import { withDeadline } from '../core/deadline.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import { listerWatcher, type Selectors } from '../watch/lister-watcher.ts'
import { type InformerOptions, SharedInformer } from './informer.ts'
import { MultiNamespaceInformer } from './multi-namespace-informer.ts'
import { sha256 } from './snapshot-format.ts'
import type { SnapshotTiming } from './snapshot-schedule.ts'
import type { IndexFunc } from './store.ts'

/** What identifies an informer: resource, scope and selectors. `T` comes from a typed `type`. */
export interface InformerSpec<T extends KubeObject = KubeObject> extends Selectors {
  /** The resource to watch; a typed one (e.g. `CORE_TYPES.pods`) types the informer and its store. */
  type: ResourceType<T>
  /** Undefined: all namespaces (or cluster-scoped). */
  namespace?: string
}

/**
 * The store of an informer whose resource type carries its protobuf kind, unless its options or the
 * factory's defaults name one: `compact`. Chosen by measurement (`npm run bench`; the numbers and their
 * date are in docs/library.md#protobuf-and-the-compact-store-edgeopprotobuf): well under the eager store's
 * memory per cached Pod and a faster cold start, for more CPU per watch event (each delivery decodes the old
 * and the new object), which large collections of built-ins (Pods, Nodes, Events) can afford. Full objects
 * of a type without its protobuf kind (custom resources, JSON) get {@link DEFAULT_JSON_STORE}, and
 * metadata-only informers {@link DEFAULT_METADATA_STORE}, whatever the type.
 */
export const DEFAULT_PROTOBUF_STORE = 'compact'

/**
 * The store of a full-object informer of a type without its protobuf kind (custom resources, and built-ins
 * through `CORE_TYPES`, read as JSON), unless its options or the factory's defaults name one: `compact`, the
 * store that measured smaller (for the bench's Pods read as JSON, 5.6 against 7.5 KB of heap each). Measured
 * 2026-12-02 (`node test/bench/compact-store.bench.ts 5000 3 <subject>`, 5,000 objects, median of 3, loaded
 * 2-core machine), heap per cached object more (the slope between two informers), eager → compact:
 * AppServices as the operator leaves them (1.07 KB of JSON without managedFields) 1.99 → 1.67 KB, RSS 5.50 →
 * 5.34 KB; 3 KB custom resources (2.49 KB of JSON) 4.87 → 3.26 KB, RSS 15.22 → 8.36 KB. Sync times differed by
 * less than the noise; a `get` beyond the 64 most recently decoded objects decodes again. Neither store is
 * within the JSON size: a compact entry is those bytes plus the scanned metadata
 * (docs/benchmarks.md#metadata-only-and-custom-resource-memory-per-object).
 */
export const DEFAULT_JSON_STORE = 'compact'

/**
 * The store of a metadata-only informer, unless its options or the factory's defaults name one: `eager`,
 * since the compact store measured larger for PartialObjectMetadata. A compact entry keeps the object's bytes
 * and the metadata scanned from them, and for a metadata-only object the scanned metadata is nearly all of
 * it. Measured 2026-12-02 (`node test/bench/compact-store.bench.ts 5000 3 pod-metadata`, 5,000 of the
 * benchmarks' Pods in protobuf PartialObjectMetadata, 0.61 KB of JSON each without managedFields, median of
 * 3, three runs): heap per cached object more 0.92 KB eager, 1.19–1.20 KB compact. RSS, mostly V8's young
 * generation at default flags (6–7 KB per object for a 0.9 KB heap), ranked the stores in both orders across the
 * runs and flags; with `--max-semi-space-size=1` (one run) 1.17 KB eager against 1.45 KB compact.
 */
export const DEFAULT_METADATA_STORE = 'eager'

/** Default wait for caches to sync: 2 minutes (controller-runtime's CacheSyncTimeout). */
export const DEFAULT_SYNC_TIMEOUT_MS = 120_000

/**
 * Creates and deduplicates informers: asking twice for the same resource, scope and
 * selectors returns the same informer (one list/watch, many handlers). `defaults.clock`
 * (real time if absent) times the sync waits and is every informer's clock unless the
 * informer's own options name another.
 */
export class InformerFactory {
  readonly #client: KubeClient
  readonly #defaults: InformerOptions<KubeObject>
  readonly #clock: Clock
  readonly #informers = new Map<string, SharedInformer<KubeObject>>()
  readonly #specs = new Map<SharedInformer<KubeObject>, InformerSpec>()
  /** Each informer's index functions by name, as asked for through {@link informer}. */
  readonly #indexers = new Map<SharedInformer<KubeObject>, Map<string, IndexFunc<KubeObject>>>()
  readonly #running = new Map<SharedInformer<KubeObject>, Promise<void>>()
  /** The namespaces a namespaced spec without its own watches (`--namespace`); empty: all. */
  readonly namespaces: readonly string[]
  #snapshots: ({ dir: string; tag: string } & Partial<SnapshotTiming>) | undefined

  /**
   * A factory whose informers share `client` and start from `defaults` (each informer's own options
   * win). `namespaces` (controller-runtime's `cache.Options.DefaultNamespaces`, `--namespace`) scopes
   * every namespaced spec that names no namespace of its own; empty (the default): all namespaces.
   */
  constructor(
    client: KubeClient,
    defaults: InformerOptions<KubeObject> = {},
    namespaces: readonly string[] = [],
  ) {
    this.#client = client
    this.#defaults = defaults
    this.#clock = defaults.clock ?? realClock
    this.namespaces = [...new Set(namespaces)]
  }

  /**
   * Informers created from now on keep a snapshot of their store in `dir` (one file per
   * resource, scope and selectors) and start warm from it; `tag` (the binary's version)
   * makes another binary's snapshots foreign. Lock the directory first (`lockCacheDir`).
   */
  persistTo(dir: string, o: { tag: string } & Partial<SnapshotTiming>): void {
    this.#snapshots = { dir, ...o }
  }

  /**
   * The informer for `spec`, created on first request. Options apply only on creation, except
   * `indexers`: a later request's indexers are added to the shared informer's store (objects already
   * cached are indexed at once), so each controller may ask for the indexes it reads. An index name
   * that an earlier request gave another function throws `EDGEOP_ERR_INVALID` naming it, and adds none
   * of the request's indexers. Its object type is inferred from a typed `spec.type`; an explicit type
   * argument is taken as given. A namespaced `spec` without a namespace watches the factory's one
   * {@link namespaces} entry; when it has several, this throws `EDGEOP_ERR_INVALID` (one informer
   * cannot watch them: {@link multiNamespaceInformer} does).
   */
  informer<T extends KubeObject = KubeObject>(
    spec: InformerSpec<T> | InformerSpec,
    options: InformerOptions<T> = {},
  ): SharedInformer<T> {
    const scopes = this.namespaces
    if (spec.namespace !== undefined || !spec.type.namespaced || !scopes.length)
      return this.#informer(spec, options)
    if (scopes.length > 1)
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        `${spec.type.resource}: --namespace names several: use multiNamespaceInformer(spec)`,
        { step: 'create informer' },
      )
    return this.#informer<T>({ ...spec, namespace: scopes[0]! }, options)
  }

  /** The informer for exactly `spec`, created on first request (see {@link informer}). */
  #informer<T extends KubeObject>(
    spec: InformerSpec<T> | InformerSpec,
    options: InformerOptions<T>,
  ): SharedInformer<T> {
    const key = specKey(spec)
    let inf = this.#informers.get(key)
    if (!inf) {
      const rc = this.#client.resource<T>(spec.type, spec.namespace)
      const o: InformerOptions<T> = {
        store: defaultStore(spec),
        ...(this.#defaults as unknown as InformerOptions<T>),
        clock: this.#clock,
        ...this.#snapshotOf(spec, key),
        ...options,
      }
      // An informer that strips managedFields lets the decoder skip them. The compact store takes the
      // objects' bytes off the wire, managedFields cut as bytes; an informer that keeps managedFields gets
      // parsed objects and keeps each as its JSON encoding.
      const strip = o.stripManagedFields ?? true
      const keepBytes = o.store === 'compact' && strip
      const created = new SharedInformer<T>(
        listerWatcher(
          rc,
          { ...spec, ...(strip ? { dropManagedFields: true } : {}) },
          keepBytes ? { keepBytes } : {},
        ),
        o,
      )
      inf = created as unknown as SharedInformer<KubeObject>
      this.#informers.set(key, inf)
      this.#specs.set(inf, spec)
      this.#indexers.set(inf, new Map(Object.entries(o.indexers ?? {})) as Map<string, IndexFunc<KubeObject>>)
    } else if (options.indexers) {
      this.#addIndexers(inf, options.indexers as Record<string, IndexFunc<KubeObject>>)
    }
    return inf as unknown as SharedInformer<T>
  }

  /** Adds to `inf` the indexers it lacks; one of its names with another function throws, adding none. */
  #addIndexers(inf: SharedInformer<KubeObject>, indexers: Record<string, IndexFunc<KubeObject>>): void {
    const known = this.#indexers.get(inf)!
    const added: Record<string, IndexFunc<KubeObject>> = {}
    for (const [name, fn] of Object.entries(indexers)) {
      const had = known.get(name)
      if (had === fn) continue
      if (had)
        throw new EdgeopError(
          'EDGEOP_ERR_INVALID',
          `${inf.describe}: index ${JSON.stringify(name)} has another function: share one or rename it`,
          { step: 'add indexers' },
        )
      added[name] = fn
    }
    inf.store.addIndexers(added)
    for (const [name, fn] of Object.entries(added)) known.set(name, fn)
  }

  /**
   * `spec` watched in each of `namespaces` (duplicates ignored; default the factory's
   * {@link namespaces}), as one informer: a merged event source and a store that looks each
   * key up in its namespace's informer.
   * Empty `namespaces` means all of them: one cluster-wide informer. Each per-namespace
   * informer is the one {@link informer} returns for that namespace, so it is shared and
   * started with the others. Throws `EDGEOP_ERR_INVALID` for a cluster-scoped type with
   * namespaces, or a `spec` that names a namespace itself.
   */
  multiNamespaceInformer<T extends KubeObject = KubeObject>(
    spec: InformerSpec<T> | InformerSpec,
    namespaces: readonly string[] = this.namespaces,
    options: InformerOptions<T> = {},
  ): MultiNamespaceInformer<T> {
    const scopes = [...new Set(namespaces)]
    if (spec.namespace !== undefined || (!spec.type.namespaced && scopes.length > 0))
      throw new EdgeopError(
        'EDGEOP_ERR_INVALID',
        spec.namespace !== undefined
          ? `${spec.type.resource}: give the namespaces as a list, not in the spec`
          : `${spec.type.resource} are cluster-scoped: they cannot be watched per namespace`,
        { step: 'create namespace informers' },
      )
    const informers =
      scopes.length === 0
        ? [this.#informer<T>(spec, options)]
        : scopes.map((namespace) => this.#informer<T>({ ...spec, namespace }, options))
    return new MultiNamespaceInformer(scopes, informers)
  }

  #snapshotOf(spec: InformerSpec, key: string): Pick<InformerOptions<KubeObject>, 'snapshot'> {
    const p = this.#snapshots
    if (!p) return {}
    const { group, version, resource } = spec.type
    const hash = sha256(key).slice(0, 16)
    const identity = {
      resource: `${group}/${version}/${resource}`,
      namespace: spec.namespace ?? '',
      labelSelector: spec.labelSelector ?? '',
      fieldSelector: spec.fieldSelector ?? '',
      metadataOnly: !!spec.metadataOnly,
      tag: p.tag,
    }
    return { snapshot: { ...p, path: join(p.dir, `${resource}-${hash}.snapshot`), identity } }
  }

  /** Every informer created so far. */
  get informers(): SharedInformer<KubeObject>[] {
    return [...this.#informers.values()]
  }

  /** The resource types watched by the informers created so far, each once. */
  get types(): ResourceType[] {
    const seen = new Map<string, ResourceType>()
    for (const { type } of this.#specs.values())
      seen.set(`${type.group}/${type.version}/${type.resource}`, type)
    return [...seen.values()]
  }

  /** Starts every informer not yet running (call again after creating more). */
  start(signal: AbortSignal): void {
    for (const inf of this.#informers.values()) {
      if (this.#running.has(inf)) continue
      this.#running.set(inf, inf.run(signal))
    }
  }

  /** Resolves when every started informer finished (after the signal aborted). */
  async stopped(): Promise<void> {
    await Promise.allSettled(this.#running.values())
  }

  /**
   * Resolves when every informer created so far has synced (`acceptRestored`: or holds a restored
   * cache snapshot, see the `SyncState` type). Rejects with
   * `EDGEOP_ERR_SYNC` (retryable) naming the informers that did not sync, with their last
   * error, once `timeoutMs` have passed on the factory's clock; with `EDGEOP_ERR_ABORTED`
   * when `signal` aborts first. If all have synced by then, it resolves instead.
   */
  async whenSynced(
    signal?: AbortSignal,
    timeoutMs = DEFAULT_SYNC_TIMEOUT_MS,
    acceptRestored = false,
  ): Promise<void> {
    const all = this.informers
    const reached = (i: SharedInformer<KubeObject>): boolean =>
      acceptRestored ? i.syncState() !== 'unsynced' : i.hasSynced()
    try {
      await withDeadline(
        Promise.all(all.map((i) => (acceptRestored ? i.whenRestored() : i.whenSynced()))),
        this.#clock,
        timeoutMs,
        () =>
          notSyncedError(
            all.filter((i) => !reached(i)),
            timeoutMs,
          ),
        signal,
      )
    } catch (err) {
      if (all.every(reached)) return
      throw err
    }
  }

  /**
   * {@link whenSynced} with the older contract: a `signal` abort also rejects with the
   * `EDGEOP_ERR_SYNC` error naming the informers not synced yet.
   */
  async waitForSync(timeoutMs = DEFAULT_SYNC_TIMEOUT_MS, signal?: AbortSignal): Promise<void> {
    const all = this.informers
    await this.whenSynced(signal, timeoutMs).catch((err: unknown) => {
      throw isEdgeopError(err, 'EDGEOP_ERR_ABORTED')
        ? notSyncedError(
            all.filter((i) => !i.hasSynced()),
            timeoutMs,
          )
        : err
    })
  }
}

/** The store an informer of `spec` gets unless its options or the factory's defaults name one. */
function defaultStore(spec: InformerSpec): 'eager' | 'compact' {
  if (spec.metadataOnly) return DEFAULT_METADATA_STORE
  return spec.type.protobuf ? DEFAULT_PROTOBUF_STORE : DEFAULT_JSON_STORE
}

/** The error naming each informer of `waiting` (those that have not synced), with its last error. */
function notSyncedError(waiting: readonly SharedInformer<KubeObject>[], timeoutMs: number): EdgeopError {
  const what = waiting.map((i) => {
    const h = i.health()
    return `${i.describe}${h.lastError ? ` (last error: ${h.lastError})` : ''}`
  })
  return new EdgeopError(
    'EDGEOP_ERR_SYNC',
    `caches did not sync within ${timeoutMs} ms: ${what.join('; ')}`,
    {
      step: 'wait for cache sync',
      retryable: true,
    },
  )
}

function specKey(s: InformerSpec): string {
  return JSON.stringify([
    s.type.group,
    s.type.version,
    s.type.resource,
    s.namespace ?? '',
    s.labelSelector ?? '',
    s.fieldSelector ?? '',
    !!s.metadataOnly,
  ])
}
