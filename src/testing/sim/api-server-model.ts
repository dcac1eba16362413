/**
 * @module api-server-model — the in-memory API server: answers the transport's exchanges (no socket)
 * from an {@link ObjectStore}, with the verbs, query parameters and status codes of kube-apiserver.
 */
import { Buffer } from 'node:buffer'
import type { Clock } from '../../core/clock.ts'
import type { KubeObject } from '../../core/types.ts'
import type { ExchangeRequest, ExchangeResponse } from '../../transport/exchange.ts'
import { ApiStatus, expired } from './api-status.ts'
import { ObjectStore, type StoreEvent } from './object-store.ts'
import { type Json, JsonPatchError, jsonPatch, mergePatch } from './patches.ts'
import { parseRequestTarget, type RequestTarget } from './request-target.ts'
import { StreamBody, wholeBody } from './response-body.ts'
import { parseFieldSelector, parseLabelSelector } from './selectors.ts'
import { WatchSession, type WatchView } from './watch-session.ts'

/** The exchange function the transport's `exchange` option takes. */
export type Exchange = (req: ExchangeRequest) => Promise<ExchangeResponse>

/** A fault's answer instead of the model's: a response, or an error the transport sees as a lost connection. */
export type Interception = { response: ExchangeResponse } | { error: Error } | undefined

/** Decides, per request, whether a fault answers instead of the model (the simulator's fault plan). */
export type Interceptor = (
  process: string,
  req: ExchangeRequest,
  target: RequestTarget | undefined,
) => Interception

/** Told after every write the model answered, before the answer reaches the caller (the place a crash is injected). */
export type WriteObserver = (process: string, method: string, target: RequestTarget, status: number) => void

const NO_VIEW: WatchView = { lagMs: 0, coalesce: false }

/**
 * The model of one API server. `exchange(process)` gives each simulated process its own exchange,
 * so faults can single one out (a partitioned leader, a crashed replica).
 *
 * Guarantees: a resource path is answered with kube-apiserver's codes (200/201, 404, 409
 * Conflict/AlreadyExists, 410 Expired, 422 Invalid, 400 BadRequest); a watch is a JSON-lines
 * stream in resourceVersion order.
 */
export class ApiServerModel {
  /** The objects. */
  readonly store: ObjectStore
  readonly #clock: Clock
  readonly #watches = new Set<WatchSession>()
  /** Faults that answer instead of the model. */
  interceptor: Interceptor | undefined
  /** Called after each write. */
  onWrite: WriteObserver | undefined
  /** The watch view of each process (lag, coalescing). */
  readonly views = new Map<string, WatchView>()
  /** Requests answered, by the model or a fault. */
  requests = 0

  /** A model on `clock` (timestamps, watch timers). */
  constructor(clock: Clock, store = new ObjectStore()) {
    this.#clock = clock
    this.store = store
    store.subscribe((e) => this.#fanOut(e))
  }

  /** The exchange of `process`. */
  exchange(process: string): Exchange {
    return async (req) => this.handle(process, req)
  }

  /** Ends every watch of `process` (`fail`: as a broken connection, else as a server close). */
  cutWatches(process: string | undefined, fail: boolean): number {
    let n = 0
    for (const w of [...this.#watches]) {
      if (process !== undefined && w.process !== process) continue
      if (fail) w.fail()
      else w.close()
      this.#watches.delete(w)
      n++
    }
    return n
  }

  /** Answers one exchange. */
  async handle(process: string, req: ExchangeRequest): Promise<ExchangeResponse> {
    this.requests++
    const target = parseRequestTarget(req.path)
    const fault = this.interceptor?.(process, req, target)
    if (fault && 'error' in fault) throw fault.error
    if (fault) return fault.response
    if (!target) return this.#nonResource(req.path)
    try {
      const res = this.#resource(process, req, target)
      if (req.method !== 'GET') this.onWrite?.(process, req.method, target, res.statusCode)
      return res
    } catch (err) {
      if (err instanceof ApiStatus) return statusResponse(err)
      throw err
    }
  }

  #resource(process: string, req: ExchangeRequest, t: RequestTarget): ExchangeResponse {
    const collection = `${t.group}/${t.resource}`
    const q = t.query
    const ctx = {
      manager: q.get('fieldManager') ?? (req.headers['user-agent'] ?? 'unknown').split('/')[0] ?? 'unknown',
      now: this.#clock.now(),
    }
    const body = (): KubeObject => parseBody(req.body)
    const s = this.store
    switch (req.method) {
      case 'GET':
        if (t.name !== undefined) {
          const o = s.get(collection, t.namespace, t.name)
          if (!o) throw new ApiStatus(404, 'NotFound', `${t.resource} "${t.name}" not found`)
          return json(200, o)
        }
        if (q.get('watch') === 'true' || q.get('watch') === '1')
          return this.#watch(process, collection, t, req.signal)
        return json(200, this.#list(collection, t))
      case 'POST':
        return json(201, s.create(collection, t.namespace, body(), ctx))
      case 'PUT':
        return json(200, s.update(collection, t.namespace, need(t), body(), t.subresource, ctx))
      case 'PATCH': {
        const name = need(t)
        const type = req.headers['content-type'] ?? ''
        if (type.startsWith('application/apply-patch')) {
          return json(
            200,
            s.apply(collection, t.namespace, name, body(), t.subresource, q.get('force') === 'true', ctx),
          )
        }
        const live = s.get(collection, t.namespace, name)
        if (!live) throw new ApiStatus(404, 'NotFound', `${t.resource} "${name}" not found`)
        let patched: Json
        try {
          const p = JSON.parse(req.body ?? 'null') as Json
          if (type.startsWith('application/json-patch'))
            patched = jsonPatch(live as unknown as Json, p as never)
          else if (
            type.startsWith('application/merge-patch') ||
            type.startsWith('application/strategic-merge-patch')
          )
            patched = mergePatch(live as unknown as Json, p)
          else
            throw new ApiStatus(
              415,
              'UnsupportedMediaType',
              `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
            )
        } catch (err) {
          if (err instanceof JsonPatchError)
            throw new ApiStatus(
              422,
              'Invalid',
              `the server rejected our request due to an error in our request: ${err.message}`,
            )
          if (err instanceof SyntaxError) throw new ApiStatus(400, 'BadRequest', 'the patch is not JSON')
          throw err
        }
        const readAt = live.metadata.resourceVersion
        // A copy of the metadata: a merge patch shares the live object's untouched maps.
        const out = { ...(patched as unknown as KubeObject) }
        out.metadata = { ...out.metadata }
        // A patch that leaves the resourceVersion as read is not a precondition.
        if (out.metadata.resourceVersion === readAt) delete out.metadata.resourceVersion
        return json(200, s.writePatched(collection, t.namespace, name, out, readAt, t.subresource, ctx))
      }
      case 'DELETE': {
        const options = req.body ? (JSON.parse(req.body) as Parameters<ObjectStore['delete']>[3]) : {}
        if (t.name === undefined) {
          const items = this.#list(collection, t).items.map((o) =>
            s.delete(collection, o.metadata.namespace, o.metadata.name ?? '', options, ctx),
          )
          return json(200, { kind: 'List', apiVersion: 'v1', metadata: {}, items })
        }
        const out = s.delete(collection, t.namespace, t.name, options, ctx)
        // A built-in resource removed at once answers a Status; custom resources and objects kept
        // by finalizers answer the object (the registry's `ReturnDeletedObject`).
        if (out.metadata.deletionTimestamp === undefined && isBuiltIn(t.group))
          return json(200, {
            kind: 'Status',
            apiVersion: 'v1',
            metadata: {},
            status: 'Success',
            details: { name: t.name, kind: t.resource, uid: out.metadata.uid },
          })
        return json(200, out)
      }
      default:
        throw new ApiStatus(405, 'MethodNotAllowed', `${req.method} is not supported`)
    }
  }

  #list(
    collection: string,
    t: RequestTarget,
  ): { kind: string; apiVersion: string; metadata: Record<string, unknown>; items: KubeObject[] } {
    const q = t.query
    const match = this.#matcher(t)
    const limit = Number(q.get('limit') ?? 0)
    const cont = q.get('continue')
    let at = this.store.rv
    let after = ''
    if (cont) {
      const token = decodeContinue(cont)
      if (token.rv < this.store.floor - 1) throw expired(token.rv)
      at = token.rv
      after = token.after
    } else if (q.get('resourceVersionMatch') === 'Exact') {
      at = Number(q.get('resourceVersion'))
    }
    const state = at === this.store.rv ? undefined : this.store.stateAt(collection, at)
    const all = state
      ? [...state.entries()]
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
          .map(([, o]) => structuredClone(o))
      : this.store.list(collection)
    const items = all.filter(
      (o) =>
        keyOf(o) > after && (t.namespace === undefined || o.metadata.namespace === t.namespace) && match(o),
    )
    const page = limit > 0 ? items.slice(0, limit) : items
    const more = limit > 0 && items.length > limit
    const last = page[page.length - 1]
    return {
      kind: 'List',
      apiVersion: t.group ? `${t.group}/${t.version}` : t.version,
      metadata: {
        resourceVersion: String(at),
        ...(more && last
          ? { continue: encodeContinue(at, keyOf(last)), remainingItemCount: items.length - limit }
          : {}),
      },
      items: page,
    }
  }

  #watch(
    process: string,
    collection: string,
    t: RequestTarget,
    signal: AbortSignal | undefined,
  ): ExchangeResponse {
    const q = t.query
    const matchSel = this.#matcher(t)
    const match = (o: KubeObject) =>
      (t.namespace === undefined || o.metadata.namespace === t.namespace) && matchSel(o)
    const rvParam = q.get('resourceVersion') ?? ''
    const initial = q.get('sendInitialEvents') === 'true'
    // 410 before the stream starts when the RV is compacted (the real server sends it as an ERROR event; both are handled alike by clients).
    const replay =
      initial || rvParam === '' || rvParam === '0' ? [] : this.store.eventsAfter(collection, Number(rvParam))
    const body = new StreamBody(() => this.#watches.delete(session))
    const session: WatchSession = new WatchSession({
      process,
      collection,
      body,
      match,
      clock: this.#clock,
      view: () => this.views.get(process) ?? NO_VIEW,
      bookmarks: q.get('allowWatchBookmarks') === 'true',
      timeoutMs: Number(q.get('timeoutSeconds') ?? 0) * 1000,
      currentRv: () => this.store.rv,
    })
    if (initial || rvParam === '' || rvParam === '0') {
      for (const o of this.store.list(collection)) if (match(o)) session.sendNow('ADDED', o)
      if (initial) session.bookmark(this.store.rv, true)
    } else {
      for (const e of replay) session.offer(e)
    }
    this.#watches.add(session)
    // The client gave up on the stream (its signal aborted): as undici, the reader gets the reason.
    signal?.addEventListener('abort', () => body.fail(signal.reason as Error), { once: true })
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body }
  }

  #matcher(t: RequestTarget): (o: KubeObject) => boolean {
    const ls = t.query.get('labelSelector')
    const fs = t.query.get('fieldSelector')
    const l = ls ? parseLabelSelector(ls) : () => true
    const selectable = this.store.rules(`${t.group}/${t.resource}`).selectableFields
    const f = fs ? parseFieldSelector(fs, selectable) : () => true
    if (!l) throw new ApiStatus(400, 'BadRequest', `unable to parse requirement: ${JSON.stringify(ls)}`)
    if (!f) throw new ApiStatus(400, 'BadRequest', `field label not supported: ${JSON.stringify(fs)}`)
    return (o) => l(o) && f(o)
  }

  #fanOut(e: StoreEvent): void {
    for (const w of this.#watches) {
      if (w.closed) this.#watches.delete(w)
      else if (w.collection === e.collection) w.offer(e)
    }
  }

  #nonResource(path: string): ExchangeResponse {
    const p = path.split('?')[0]
    if (p === '/version') return json(200, { major: '1', minor: '37', gitVersion: 'v1.37.0-edgeop-sim' })
    if (p === '/api') return json(200, { kind: 'APIVersions', versions: ['v1'] })
    if (p === '/livez' || p === '/readyz' || p === '/healthz')
      return { statusCode: 200, headers: {}, body: wholeBody('ok') }
    return statusResponse(new ApiStatus(404, 'NotFound', 'the server could not find the requested resource'))
  }
}

/** The core group, un-dotted groups (`apps`, `batch`) and `*.k8s.io` are kube-apiserver's own; the rest are CRDs. */
const isBuiltIn = (group: string): boolean => !group.includes('.') || group.endsWith('.k8s.io')

function need(t: RequestTarget): string {
  if (t.name === undefined)
    throw new ApiStatus(405, 'MethodNotAllowed', 'a collection cannot be written this way')
  return t.name
}

function parseBody(text: string | undefined): KubeObject {
  try {
    const o = JSON.parse(text ?? '') as KubeObject
    if (o && typeof o === 'object') return { ...o, metadata: o.metadata ?? {} }
  } catch {
    // below
  }
  throw new ApiStatus(400, 'BadRequest', 'the body is not a JSON object')
}

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`

function json(statusCode: number, value: unknown): ExchangeResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json' },
    body: wholeBody(JSON.stringify(value)),
  }
}

/** The response for a refusal. */
export function statusResponse(s: ApiStatus, headers: Record<string, string> = {}): ExchangeResponse {
  return {
    statusCode: s.code,
    headers: { 'content-type': 'application/json', ...headers },
    body: wholeBody(JSON.stringify(s)),
  }
}

function encodeContinue(rv: number, after: string): string {
  return Buffer.from(JSON.stringify({ rv, after })).toString('base64url')
}

function decodeContinue(token: string): { rv: number; after: string } {
  try {
    const v = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv: number; after: string }
    if (typeof v.rv === 'number' && typeof v.after === 'string') return v
  } catch {
    // below
  }
  throw new ApiStatus(400, 'BadRequest', 'continue key is not valid')
}
