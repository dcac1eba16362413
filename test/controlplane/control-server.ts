/**
 * @module control-server — the loopback HTTP API through which test processes use the control plane.
 *
 * The process that owns the control plane (the supervisor) serves it; test files reach
 * it through `env.ts`. Every request carries `Authorization: Bearer <token>` (a random
 * secret handed to test processes in the environment). Bodies are JSON.
 *
 * | route | what | lease |
 * |---|---|---|
 * | `GET /v1/lease?mode=shared\|exclusive` | waits for a lease; answers `{"id","mode"}\n` and stays open; closing the connection releases it | — |
 * | `GET /v1/info` | {@link ControlPlaneInfo} | any |
 * | `GET /v1/stats` | timings and memory per process | any |
 * | `POST /v1/apiservers/uncached` | starts the uncached apiserver if needed → `{server, kubeconfig}` | any |
 * | `POST /v1/namespaces` `{prefix?}` | → `{name}` | any |
 * | `POST /v1/user-kubeconfig` `{user, groups?, apiserver?}` | → {@link KubeconfigInfo} | any |
 * | `POST /v1/controllers` | starts kcm, scheduler, kwok and a fake node | any |
 * | `POST /v1/compact` | → `{revision}` | exclusive |
 * | `POST /v1/restart-apiserver` `{which?}` | restarts and waits for ready | exclusive |
 * | `POST /v1/etcd/stop`, `POST /v1/etcd/start` | | exclusive |
 *
 * Routes marked "exclusive" need header `X-Edgeop-Lease: <id>` of an exclusive lease
 * (else 409), because they disturb every other test file. When an exclusive lease ends,
 * the control plane is healed (etcd started, dead apiservers restarted) before the next grant.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { ApiserverFlavor } from '../../src/testing/apiserver.ts'
import { LOOPBACK } from '../../src/testing/ports.ts'
import type { ControlPlane } from './control-plane.ts'
import { type LeaseMode, LeaseQueue } from './lease.ts'

/** Header carrying the caller's lease id. */
export const LEASE_HEADER = 'x-edgeop-lease'

/** Largest request body accepted (all bodies are a few small fields). */
const MAX_BODY_BYTES = 64 * 1024

class HttpError extends Error {
  readonly status: number
  constructor(status: number, message: string) {
    super(message)
    this.status = status
  }
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'request body too large')
    chunks.push(chunk)
  }
  if (size === 0) return {}
  const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'))
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'body must be a JSON object')
  return value as Record<string, unknown>
}

function flavorOf(value: unknown, fallback: ApiserverFlavor): ApiserverFlavor {
  if (value === undefined) return fallback
  if (value === 'cached' || value === 'uncached') return value
  throw new HttpError(400, `apiserver must be "cached" or "uncached", not ${JSON.stringify(value)}`)
}

/** Serves the API; create with {@link ControlServer.start}. */
export class ControlServer {
  readonly url: string
  readonly token: string
  readonly #server: Server
  readonly #plane: ControlPlane
  readonly #leases: LeaseQueue
  readonly #onChange: () => void

  private constructor(server: Server, plane: ControlPlane, url: string, token: string, onChange: () => void) {
    this.#server = server
    this.#plane = plane
    this.url = url
    this.token = token
    this.#onChange = onChange
    this.#leases = new LeaseQueue(() => plane.heal())
  }

  /**
   * Listens on a free loopback port. `onChange` runs after every operation that may
   * change process IDs (the supervisor rewrites its state file).
   */
  static async start(plane: ControlPlane, onChange: () => void = () => {}): Promise<ControlServer> {
    const token = randomBytes(24).toString('base64url')
    const server = createServer()
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(0, LOOPBACK, () => resolve())
    })
    const address = server.address()
    const port = typeof address === 'object' && address !== null ? address.port : 0
    const control = new ControlServer(server, plane, `http://${LOOPBACK}:${port}`, token, onChange)
    server.on('request', (req, res) => void control.#handle(req, res))
    return control
  }

  /** Closes the listener and every open connection (which releases all leases). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    this.#server.closeAllConnections()
    await closed
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      if (req.headers.authorization !== `Bearer ${this.token}`)
        throw new HttpError(401, 'bad or missing control token')
      const url = new URL(req.url ?? '/', 'http://control.invalid')
      const route = `${req.method} ${url.pathname}`
      if (route === 'GET /v1/lease') return await this.#lease(url, req, res)
      const body = req.method === 'POST' ? await readJson(req) : {}
      const result = await this.#route(route, body, req)
      const text = JSON.stringify(result ?? {})
      res.writeHead(200, { 'content-type': 'application/json' }).end(text)
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500
      const message = err instanceof Error ? err.message : String(err)
      if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: message }))
    }
  }

  #requireExclusive(req: IncomingMessage, what: string): void {
    const id = req.headers[LEASE_HEADER]
    if (typeof id !== 'string' || this.#leases.modeOf(id) !== 'exclusive') {
      throw new HttpError(
        409,
        `${what} disturbs every test file; it needs an exclusive lease: getTestEnv({ exclusive: true })`,
      )
    }
  }

  async #route(route: string, body: Record<string, unknown>, req: IncomingMessage): Promise<unknown> {
    const plane = this.#plane
    const changed = <T>(value: T): T => {
      this.#onChange()
      return value
    }
    switch (route) {
      case 'GET /v1/info':
        return plane.info
      case 'GET /v1/stats':
        return { timings: plane.timings, processes: await plane.stats() }
      case 'POST /v1/apiservers/uncached': {
        const a = await plane.apiserver('uncached')
        return changed({ server: a.url, kubeconfig: plane.info.uncachedKubeconfig })
      }
      case 'POST /v1/namespaces':
        return {
          name: await plane.createNamespace(typeof body.prefix === 'string' ? body.prefix : undefined),
        }
      case 'POST /v1/user-kubeconfig': {
        if (typeof body.user !== 'string' || body.user === '') throw new HttpError(400, 'user is required')
        const groups = Array.isArray(body.groups) ? body.groups.map(String) : []
        return await plane.userKubeconfig(body.user, groups, flavorOf(body.apiserver, 'cached'))
      }
      case 'POST /v1/controllers':
        await plane.startControllers()
        return changed({})
      case 'POST /v1/compact':
        this.#requireExclusive(req, 'compact()')
        return { revision: await plane.compact() }
      case 'POST /v1/restart-apiserver': {
        this.#requireExclusive(req, 'restartApiserver()')
        const which = body.which === 'all' ? 'all' : flavorOf(body.which, 'cached')
        await plane.restartApiserver(which)
        return changed({})
      }
      case 'POST /v1/etcd/stop':
        this.#requireExclusive(req, 'stopEtcd()')
        await plane.stopEtcd()
        return changed({})
      case 'POST /v1/etcd/start':
        this.#requireExclusive(req, 'startEtcd()')
        await plane.startEtcd()
        return changed({})
      default:
        throw new HttpError(404, `no route ${route}`)
    }
  }

  async #lease(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const mode = url.searchParams.get('mode') ?? 'shared'
    if (mode !== 'shared' && mode !== 'exclusive')
      throw new HttpError(400, 'mode must be shared or exclusive')
    const abort = new AbortController()
    res.on('close', () => abort.abort(new Error('lease requester went away')))
    const lease = await this.#leases.acquire(mode as LeaseMode, abort.signal).catch(() => undefined)
    if (lease === undefined) return
    if (abort.signal.aborted) return lease.release()
    res.on('close', () => lease.release())
    req.socket.setKeepAlive(true)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write(`${JSON.stringify({ id: lease.id, mode: lease.mode })}\n`)
  }
}
