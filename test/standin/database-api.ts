/**
 * @module database-api — a stand-in for the external database service the AppService
 * operator provisions into (tests and demos). In-memory; loopback only.
 *
 *   PUT    /v1/databases/{key}  {name, namespace, class}  → 201 created | 200 exists
 *   GET    /v1/databases                                  → {items: [{key, …}]}
 *   DELETE /v1/databases/{key}                            → 204 | 404
 *
 * Tests control it in-process (`down`, `failNext`); run alone with
 * `node test/standin/database-api.ts [port]` for a demo.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One provisioned entry. */
export interface Entry {
  key: string
  name: string
  namespace: string
  class: string
}

/** A running stand-in. */
export interface DatabaseStandin {
  readonly url: string
  readonly entries: Map<string, Entry>
  /** Entries ever created (a second create of the same key would show here). */
  readonly created: string[]
  /** Every request, for assertions. */
  readonly requests: { method: string; key: string; status: number }[]
  /** When true, every request gets 503. */
  down: boolean
  /** The next N requests get 503. */
  failNext(n: number): void
  close(): Promise<void>
}

/** Starts the stand-in on 127.0.0.1 (`port` 0 = any). */
export async function startDatabaseStandin(port = 0): Promise<DatabaseStandin> {
  const entries = new Map<string, Entry>()
  const created: string[] = []
  const requests: DatabaseStandin['requests'] = []
  let failing = 0
  const state = { down: false }
  const server: Server = createServer((req, res) => void handle(req, res))
  const reply = (res: ServerResponse, status: number, body?: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(body === undefined ? '' : JSON.stringify(body))
  }
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const m = /^\/v1\/databases(?:\/([^/?]+))?$/.exec(new URL(req.url ?? '/', 'http://x').pathname)
    const key = m?.[1] ? decodeURIComponent(m[1]) : ''
    const done = (status: number, body?: unknown): void => {
      requests.push({ method: req.method ?? '', key, status })
      reply(res, status, body)
    }
    if (state.down || failing > 0) {
      if (failing > 0) failing--
      return done(503, { error: 'unavailable' })
    }
    if (!m) return done(404, { error: 'not found' })
    if (req.method === 'GET' && !key) return done(200, { items: [...entries.values()] })
    if (req.method === 'PUT' && key) {
      if (entries.has(key)) return done(200, entries.get(key))
      let body: Partial<Entry>
      try {
        body = JSON.parse(Buffer.concat(chunks).toString() || '{}') as Partial<Entry>
      } catch {
        return done(400, { error: 'body is not JSON' })
      }
      const entry = {
        key,
        name: String(body.name ?? ''),
        namespace: String(body.namespace ?? ''),
        class: String(body.class ?? ''),
      }
      entries.set(key, entry)
      created.push(key)
      return done(201, entry)
    }
    if (req.method === 'DELETE' && key)
      return entries.delete(key) ? done(204) : done(404, { error: 'not found' })
    return done(405, { error: 'method not allowed' })
  }
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  const { port: bound } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${bound}`,
    entries,
    created,
    requests,
    get down() {
      return state.down
    },
    set down(v: boolean) {
      state.down = v
    },
    failNext(n: number) {
      failing = n
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
