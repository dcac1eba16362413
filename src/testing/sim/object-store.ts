/**
 * @module object-store — the model's etcd and registry: objects by resource, one resourceVersion
 * counter, the event history watches replay, and every write rule the API server applies
 * (optimistic concurrency, generation, the status subresource, finalizers, schemas).
 */
import type { KubeObject } from '../../core/types.ts'
import { ApiStatus, conflict, invalid, notFound } from './api-status.ts'
import { DEFAULT_HISTORY_EVENTS, EventHistory, type StoreEvent } from './event-history.ts'
import {
  applyConflicts,
  deepMerge,
  leafPaths,
  type Ownership,
  recordApply,
  recordUpdate,
  removeAt,
} from './field-ownership.ts'
import type { Json } from './patches.ts'
import {
  FOREGROUND,
  isNoOp,
  NO_STATUS,
  ORPHAN,
  type ResourceRules,
  resourceOf,
  timestamp,
  updatedObject,
} from './update-rules.ts'

export { DEFAULT_HISTORY_EVENTS, type StoreEvent } from './event-history.ts'
export type { ResourceRules, SpecSchema } from './update-rules.ts'

interface Entry {
  object: KubeObject
  owners: Ownership
}

/** Where a write comes from: the field manager (`fieldManager` or the User-Agent's product). */
export interface WriteContext {
  /** The field manager. */
  manager: string
  /** Virtual wall time for timestamps. */
  now: number
}

const clone = <T>(v: T): T => structuredClone(v)
const keyOf = (ns: string | undefined, name: string): string => (ns ? `${ns}/${name}` : name)
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)
const sameOwners = (a: Ownership, b: Ownership): boolean => {
  const flat = (o: Ownership) => JSON.stringify([...o].map(([m, p]) => [m, [...p].sort()]).sort())
  return flat(a) === flat(b)
}
const deepFreeze = (v: unknown): void => {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return
  Object.freeze(v)
  for (const x of Object.values(v)) deepFreeze(x)
}

/**
 * The state of the simulated cluster.
 *
 * Guarantees: every write gets the next resourceVersion (a decimal integer, as etcd's revision);
 * history is ordered by it; `stateAt(rv)` is the collection as it was then, until compacted.
 */
export class ObjectStore {
  /** The latest resourceVersion. */
  rv = 1
  readonly #collections = new Map<string, Map<string, Entry>>()
  readonly #rules = new Map<string, ResourceRules>()
  readonly #listeners = new Set<(e: StoreEvent) => void>()
  /** The changes watches and paginated lists replay. */
  readonly history: EventHistory
  #uid = 0

  /** An empty store keeping `historyLimit` events for watches. */
  constructor(historyLimit = DEFAULT_HISTORY_EVENTS) {
    this.history = new EventHistory(historyLimit)
  }

  /** The oldest resourceVersion a watch or a paginated list may start from; older ones are 410. */
  get floor(): number {
    return this.history.floor
  }

  /** Sets the rules of `collection` (`group/resource`). */
  setRules(collection: string, rules: ResourceRules): void {
    this.#rules.set(collection, rules)
  }

  /** The rules of `collection`; unknown collections have a status subresource and no schema. */
  rules(collection: string): ResourceRules {
    return this.#rules.get(collection) ?? { statusSubresource: !NO_STATUS.has(collection) }
  }

  /** Calls `fn` with every change, in resourceVersion order; returns the unsubscribe function. */
  subscribe(fn: (e: StoreEvent) => void): () => void {
    this.#listeners.add(fn)
    return () => this.#listeners.delete(fn)
  }

  /** Events of `collection` after `rv`. @throws ApiStatus 410 when `rv` is older than {@link floor}. */
  eventsAfter(collection: string, rv: number): StoreEvent[] {
    return this.history.after(collection, rv)
  }

  /** Forgets every event up to now: older resourceVersions become 410 (etcd compaction). */
  compact(): void {
    this.history.compact(this.rv)
  }

  /** One object, or undefined. The store's own (deeply frozen): read it, never modify it. */
  get(collection: string, ns: string | undefined, name: string): KubeObject | undefined {
    return this.#collections.get(collection)?.get(keyOf(ns, name))?.object
  }

  /** Every object of `collection` now, ordered by key; the store's own, as {@link get}. */
  list(collection: string): KubeObject[] {
    const m = this.#collections.get(collection)
    if (!m) return []
    return [...m.keys()].sort().map((k) => (m.get(k) as Entry).object)
  }

  /** The objects of `collection` as they were at `rv`, by key. @throws ApiStatus 410 when compacted. */
  stateAt(collection: string, rv: number): Map<string, KubeObject> {
    const now = new Map<string, KubeObject>()
    for (const [k, e] of this.#collections.get(collection) ?? []) now.set(k, e.object)
    return this.history.rewind(collection, rv, now)
  }

  /** Every collection's objects, for invariants and GC. */
  *all(): Generator<[string, KubeObject]> {
    for (const [c, m] of this.#collections) for (const e of m.values()) yield [c, e.object]
  }

  /** POST: a new object. 409 AlreadyExists, 422 when the schema refuses it. */
  create(collection: string, ns: string | undefined, body: KubeObject, ctx: WriteContext): KubeObject {
    const meta = body.metadata ?? {}
    let name = meta.name
    if (!name && meta.generateName)
      name = `${meta.generateName}${(this.#uid + 1).toString(36).padStart(5, '0')}`
    if (!name)
      throw invalid(
        resourceOf(collection),
        '',
        'metadata.name: Required value: name or generateName is required',
      )
    const m = this.#collection(collection)
    const key = keyOf(ns, name)
    if (m.has(key))
      throw new ApiStatus(409, 'AlreadyExists', `${resourceOf(collection)} "${name}" already exists`)
    const rules = this.rules(collection)
    const obj = clone(body) as KubeObject & { status?: unknown }
    if (rules.statusSubresource) delete obj.status
    const {
      resourceVersion: _rv,
      deletionTimestamp: _d,
      managedFields: _mf,
      generateName: _g,
      ...keep
    } = obj.metadata ?? {}
    obj.metadata = {
      ...keep,
      name,
      ...(ns ? { namespace: ns } : {}),
      uid: this.#nextUid(),
      generation: 1,
      creationTimestamp: timestamp(ctx.now),
    }
    this.#admit(collection, obj)
    const owners: Ownership = new Map()
    recordUpdate(owners, ctx.manager, undefined, obj as unknown as Json, false)
    return this.#commit(collection, key, 'ADDED', obj, owners, undefined)
  }

  /**
   * PUT of the object (`subresource` undefined) or its status. `metadata.resourceVersion`, when set,
   * must be the live one (409 otherwise); generation moves when anything but metadata and status changes.
   */
  update(
    collection: string,
    ns: string | undefined,
    name: string,
    body: KubeObject,
    subresource: string | undefined,
    ctx: WriteContext,
  ): KubeObject {
    const entry = this.#entry(collection, ns, name)
    const rv = body.metadata?.resourceVersion
    if (rv !== undefined && rv !== '' && rv !== entry.object.metadata.resourceVersion)
      throw conflict(resourceOf(collection), name)
    if (body.metadata?.uid && body.metadata.uid !== entry.object.metadata.uid)
      throw conflict(resourceOf(collection), name)
    return this.#replace(collection, entry, body, subresource, ctx, false)
  }

  /** A patch already applied to a copy of the live object (`patched`), written like an update (no RV check unless the patch set one). */
  writePatched(
    collection: string,
    ns: string | undefined,
    name: string,
    patched: KubeObject,
    readAt: string | undefined,
    subresource: string | undefined,
    ctx: WriteContext,
  ): KubeObject {
    const entry = this.#entry(collection, ns, name)
    const rv = patched.metadata?.resourceVersion
    if (rv !== undefined && rv !== readAt) throw conflict(resourceOf(collection), name)
    return this.#replace(collection, entry, patched, subresource, ctx, false)
  }

  /** Server-side apply of `applied` by `ctx.manager`; creates the object when it does not exist. */
  apply(
    collection: string,
    ns: string | undefined,
    name: string,
    applied: KubeObject,
    subresource: string | undefined,
    force: boolean,
    ctx: WriteContext,
  ): KubeObject {
    const m = this.#collection(collection)
    const entry = m.get(keyOf(ns, name))
    const status = subresource === 'status'
    const paths = leafPaths(applied as unknown as Json, status)
    if (!entry) {
      if (status) throw notFound(resourceOf(collection), name)
      const created = this.create(
        collection,
        ns,
        { ...applied, metadata: { ...applied.metadata, name } },
        ctx,
      )
      const owners = this.#entry(collection, ns, name).owners
      owners.clear()
      recordApply(owners, ctx.manager, paths)
      return created
    }
    const live = entry.object as unknown as Json
    const clashes = applyConflicts(entry.owners, ctx.manager, live, applied as unknown as Json, paths)
    if (clashes.length && !force)
      throw new ApiStatus(
        409,
        'Conflict',
        `Apply failed with ${clashes.length} conflict${clashes.length > 1 ? 's' : ''}: ${clashes.join(', ')}`,
        clashes.map((c) => ({ reason: 'FieldManagerConflict', message: c })),
      )
    const owners: Ownership = new Map([...entry.owners].map(([k, v]) => [k, new Set(v)]))
    const orphaned = recordApply(owners, ctx.manager, paths)
    const { resourceVersion: _rv, ...appliedMeta } = applied.metadata ?? {}
    // A copy: the merge shares the live object's untouched maps, and orphaned fields are removed in place.
    const merged = clone(
      deepMerge(live, { ...applied, metadata: appliedMeta } as unknown as Json),
    ) as KubeObject
    for (const p of orphaned) removeAt(merged as unknown as Json, p)
    return this.#replace(collection, entry, merged, subresource, ctx, true, owners)
  }

  /**
   * DELETE: with finalizers (or `Foreground`, which adds `foregroundDeletion`) the object gets its
   * deletionTimestamp and stays; else it is removed. Preconditions as DeleteOptions states them.
   */
  delete(
    collection: string,
    ns: string | undefined,
    name: string,
    options: { propagationPolicy?: string; preconditions?: { uid?: string; resourceVersion?: string } },
    ctx: WriteContext,
  ): KubeObject {
    const entry = this.#entry(collection, ns, name)
    const p = options.preconditions
    if (
      (p?.uid && p.uid !== entry.object.metadata.uid) ||
      (p?.resourceVersion && p.resourceVersion !== entry.object.metadata.resourceVersion)
    )
      throw conflict(resourceOf(collection), name)
    const finalizers = [...(entry.object.metadata.finalizers ?? [])]
    if (options.propagationPolicy === 'Foreground' && !finalizers.includes(FOREGROUND))
      finalizers.push(FOREGROUND)
    if (options.propagationPolicy === 'Orphan' && !finalizers.includes(ORPHAN)) finalizers.push(ORPHAN)
    if (finalizers.length === 0) return this.#remove(collection, entry)
    if (entry.object.metadata.deletionTimestamp && same(finalizers, entry.object.metadata.finalizers))
      return entry.object
    const next = { ...entry.object, metadata: { ...entry.object.metadata } }
    next.metadata.finalizers = finalizers
    next.metadata.deletionTimestamp ??= timestamp(ctx.now)
    next.metadata.generation = (next.metadata.generation ?? 0) + 1
    return this.#commit(collection, keyOf(ns, name), 'MODIFIED', next, entry.owners, entry.object)
  }

  /** Removes an object whatever its finalizers (the garbage collector's last step). */
  removeNow(collection: string, ns: string | undefined, name: string): void {
    const e = this.#collections.get(collection)?.get(keyOf(ns, name))
    if (e) this.#remove(collection, e)
  }

  #replace(
    collection: string,
    entry: Entry,
    body: KubeObject,
    subresource: string | undefined,
    ctx: WriteContext,
    applied: boolean,
    owners?: Ownership,
  ): KubeObject {
    const old = entry.object
    const next = updatedObject(old, body, subresource, this.rules(collection).statusSubresource, collection)
    if (subresource === undefined) this.#admit(collection, next)
    const own = owners ?? new Map([...entry.owners].map(([k, v]) => [k, new Set(v)]))
    if (!applied)
      recordUpdate(
        own,
        ctx.manager,
        old as unknown as Json,
        next as unknown as Json,
        subresource === 'status',
      )
    // A write that changes neither the object nor who owns its fields keeps its resourceVersion.
    if (isNoOp(old, next) && sameOwners(own, entry.owners)) return old
    const key = keyOf(old.metadata.namespace, old.metadata.name ?? '')
    // The last finalizer gone from a deleted object: the update deletes it (one DELETED event).
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length)
      return this.#remove(collection, { object: next, owners: own }, old)
    return this.#commit(collection, key, 'MODIFIED', next, own, old)
  }

  #admit(collection: string, obj: KubeObject & { spec?: unknown }): void {
    const schema = this.rules(collection).spec
    if (!schema) return
    const r = schema.safeParse(obj.spec)
    if (!r.success) throw invalid(resourceOf(collection), obj.metadata.name ?? '', `spec: ${r.error.message}`)
    obj.spec = r.data
  }

  #remove(collection: string, entry: Entry, previous = entry.object): KubeObject {
    const m = this.#collection(collection)
    const key = keyOf(entry.object.metadata.namespace, entry.object.metadata.name ?? '')
    m.delete(key)
    const gone = {
      ...entry.object,
      metadata: { ...entry.object.metadata, resourceVersion: String(++this.rv) },
    }
    deepFreeze(gone)
    this.#record({ rv: this.rv, type: 'DELETED', collection, key, object: gone, previous })
    // The watch sees the deletion's resourceVersion; the caller gets the object at its last one (etcd's previous state).
    const answer = {
      ...gone,
      metadata: { ...gone.metadata, resourceVersion: previous.metadata.resourceVersion },
    }
    deepFreeze(answer)
    return answer
  }

  #commit(
    collection: string,
    key: string,
    type: 'ADDED' | 'MODIFIED',
    obj: KubeObject,
    owners: Ownership,
    previous: KubeObject | undefined,
  ): KubeObject {
    obj.metadata.resourceVersion = String(++this.rv)
    obj.metadata.managedFields = [...owners.keys()]
      .sort()
      .map((manager) => ({ manager, fieldsType: 'FieldsV1' }))
    deepFreeze(obj) // what the store hands out is read-only: a stray write throws instead of changing history
    this.#collection(collection).set(key, { object: obj, owners })
    this.#record({ rv: this.rv, type, collection, key, object: obj, previous })
    return obj
  }

  #record(e: StoreEvent): void {
    this.history.record(e)
    for (const fn of this.#listeners) fn(e)
  }

  #entry(collection: string, ns: string | undefined, name: string): Entry {
    const e = this.#collections.get(collection)?.get(keyOf(ns, name))
    if (!e) throw notFound(resourceOf(collection), name)
    return e
  }

  #collection(collection: string): Map<string, Entry> {
    let m = this.#collections.get(collection)
    if (!m) {
      m = new Map()
      this.#collections.set(collection, m)
    }
    return m
  }

  #nextUid(): string {
    return `00000000-0000-4000-8000-${(++this.#uid).toString(16).padStart(12, '0')}`
  }
}
