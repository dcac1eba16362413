/**
 * @module database-api — a stand-in for the external database service the AppService
 * operator provisions into (tests and demos). In-memory; on loopback unless told another address.
 *
 *   POST   /v1/databases         {key, name, namespace, class} → 201 ready | 202 provisioning {task}
 *                                (not deduplicated: a second POST of a key provisions a second database)
 *   GET    /v1/databases/{key}   → 200 {key, …, state, task?} | 404
 *   GET    /v1/tasks/{id}        → 200 {id, key, state: running | succeeded, progress: 0–100} | 404
 *   PUT    /v1/databases/{key}   {name, namespace, class} → 201 created | 200 exists (idempotent)
 *   GET    /v1/databases         → {items: [{key, …}]}
 *   DELETE /v1/databases/{key}   → 204 | 404
 *
 * Writes (POST, PUT, DELETE) may carry a `fencing-token` header: one lower than the highest
 * token seen for that entry's key is refused with 409 `{error: "fenced"}` and changes nothing
 * (per key, so that sharded owners, each fencing its own objects, do not fence each other);
 * writes without one are not checked (the API as it was before fencing).
 *
 * Tests inject trouble in-process: `down` (every request 503), `failNext(n)`, `slowMs` (every
 * answer delayed), `commitThenHang(n)` (the next n writes are applied but never answered, as a
 * timeout after the request was sent), `provisionMs` (POST provisions asynchronously for that
 * long). Run alone with `node test/standin/database-api.ts [port]` for a demo.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One provisioned entry. */
export interface Entry {
  key: string
  name: string
  namespace: string
  class: string
  /** The provisioning task of an entry created by POST while `provisionMs` > 0. */
  task?: string
}

/** One asynchronous provisioning. */
interface Task {
  id: string
  key: string
  start: number
  ms: number
}

/** A running stand-in. */
export interface DatabaseStandin {
  readonly url: string
  readonly entries: Map<string, Entry>
  /** Entries ever created (a second create of the same key shows here twice). */
  readonly created: string[]
  /** Every answered request, for assertions. */
  readonly requests: {
    method: string
    key: string
    status: number
    fencingToken?: number
    /** The W3C `traceparent` header, when the caller sent one. */
    traceparent?: string
  }[]
  /** The highest fencing token seen (for any key). */
  readonly fence: number
  /** When true, every request gets 503. */
  down: boolean
  /** Every answer is delayed this long (ms). */
  slowMs: number
  /** POST provisions asynchronously for this long (ms); 0 = ready at once. */
  provisionMs: number
  /** The next N requests get 503. */
  failNext(n: number): void
  /** The next N writes are applied and then never answered (the caller times out after the commit). */
  commitThenHang(n: number): void
  /** Writes {@link DatabaseStandin.commitThenHang} still has to hang (0 when disarmed or used up). */
  readonly hangsLeft: number
  close(): Promise<void>
}

/**
 * Starts the stand-in on `host` (default loopback; the real node's scripts give the node's address,
 * which its pods reach) and `port` (0 = any).
 */
export async function startDatabaseStandin(port = 0, host = '127.0.0.1'): Promise<DatabaseStandin> {
  const entries = new Map<string, Entry>()
  const tasks = new Map<string, Task>()
  const created: string[] = []
  const fences = new Map<string, number>()
  const requests: DatabaseStandin['requests'] = []
  let failing = 0
  let hanging = 0
  const state = { down: false, slowMs: 0, provisionMs: 0, fence: 0 }
  const server: Server = createServer((req, res) => void handle(req, res))
  const taskView = (t: Task) => {
    const progress = t.ms === 0 ? 100 : Math.min(100, Math.floor(((Date.now() - t.start) / t.ms) * 100))
    return { id: t.id, key: t.key, state: progress >= 100 ? 'succeeded' : 'running', progress }
  }
  const entryView = (e: Entry) => {
    const t = e.task === undefined ? undefined : tasks.get(e.task)
    return { ...e, state: t && taskView(t).state === 'running' ? 'provisioning' : 'ready' }
  }
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const m = /^\/v1\/(databases|tasks)(?:\/([^/?]+))?$/.exec(path)
    const key = m?.[2] ? decodeURIComponent(m[2]) : ''
    const method = req.method ?? ''
    const write = method === 'POST' || method === 'PUT' || method === 'DELETE'
    const header = req.headers['fencing-token']
    const token = typeof header === 'string' && /^\d+$/.test(header) ? Number(header) : undefined
    let hang = false
    const done = (status: number, body?: unknown): void => {
      const traceparent = req.headers.traceparent
      requests.push({
        method,
        key,
        status,
        ...(token === undefined ? {} : { fencingToken: token }),
        ...(typeof traceparent === 'string' ? { traceparent } : {}),
      })
      if (hang) return // committed; the answer is never sent
      const send = () => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(body === undefined ? '' : JSON.stringify(body))
      }
      if (state.slowMs > 0) setTimeout(send, state.slowMs)
      else send()
    }
    if (state.down || failing > 0) {
      if (failing > 0) failing--
      return done(503, { error: 'unavailable' })
    }
    if (!m) return done(404, { error: 'not found' })
    if (write && token !== undefined) {
      // Per entry: sharded owners write different entries with unrelated tokens.
      const k = key || String((JSON.parse(Buffer.concat(chunks).toString() || '{}') as Partial<Entry>).key)
      const fence = fences.get(k) ?? 0
      if (token < fence) return done(409, { error: 'fenced', fence })
      fences.set(k, token)
      state.fence = Math.max(state.fence, token)
    }
    if (write && hanging > 0) {
      hanging--
      hang = true
    }
    const parse = (): Partial<Entry> | undefined => {
      try {
        return JSON.parse(Buffer.concat(chunks).toString() || '{}') as Partial<Entry>
      } catch {
        return undefined
      }
    }
    const entryOf = (k: string, body: Partial<Entry>): Entry => ({
      key: k,
      name: String(body.name ?? ''),
      namespace: String(body.namespace ?? ''),
      class: String(body.class ?? ''),
    })
    if (m[1] === 'tasks') {
      const t = tasks.get(key)
      return method === 'GET' && t ? done(200, taskView(t)) : done(404, { error: 'not found' })
    }
    if (method === 'GET' && !key) return done(200, { items: [...entries.values()].map(entryView) })
    if (method === 'GET') {
      const e = entries.get(key)
      return e ? done(200, entryView(e)) : done(404, { error: 'not found' })
    }
    if (method === 'POST' && !key) {
      const body = parse()
      if (!body || typeof body.key !== 'string' || body.key === '')
        return done(400, { error: 'body is not JSON with a key' })
      const entry = entryOf(body.key, body)
      if (state.provisionMs > 0) {
        const id = `task-${tasks.size + 1}`
        tasks.set(id, { id, key: entry.key, start: Date.now(), ms: state.provisionMs })
        entry.task = id
      }
      entries.set(entry.key, entry)
      created.push(entry.key)
      return done(entry.task ? 202 : 201, entryView(entry))
    }
    if (method === 'PUT' && key) {
      if (entries.has(key)) return done(200, entryView(entries.get(key)!))
      const body = parse()
      if (!body) return done(400, { error: 'body is not JSON' })
      const entry = entryOf(key, body)
      entries.set(key, entry)
      created.push(key)
      return done(201, entryView(entry))
    }
    if (method === 'DELETE' && key) return entries.delete(key) ? done(204) : done(404, { error: 'not found' })
    return done(405, { error: 'method not allowed' })
  }
  await new Promise<void>((resolve) => server.listen(port, host, resolve))
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://${host}:${bound}`,
    entries,
    created,
    requests,
    get fence() {
      return state.fence
    },
    get down() {
      return state.down
    },
    set down(v: boolean) {
      state.down = v
    },
    get slowMs() {
      return state.slowMs
    },
    set slowMs(v: number) {
      state.slowMs = v
    },
    get provisionMs() {
      return state.provisionMs
    },
    set provisionMs(v: number) {
      state.provisionMs = v
    },
    failNext(n: number) {
      failing = n
    },
    commitThenHang(n: number) {
      hanging = n
    },
    get hangsLeft() {
      return hanging
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const s = await startDatabaseStandin(Number(process.argv[2] ?? 0))
  process.stdout.write(`database API stand-in listening on ${s.url}\n`)
}
