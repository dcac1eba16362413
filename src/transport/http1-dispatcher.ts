/**
 * @module http1-dispatcher — HTTP/1.1 requests over Node's own client (`node:http`/`node:https`).
 *
 * The API server speaks HTTP/2, which undici serves (`connection-pool.ts`). HTTP/1.1 is the
 * fallback: `http://` origins (kubectl proxy, test stubs), `http2: false`, and TLS servers that do
 * not offer h2. Node ships an HTTP/1.1 client with a native llhttp, so the artifact bundles neither
 * undici's HTTP/1.1 client nor its WebAssembly llhttp (about 29 KB gzip together).
 *
 * Callers see undici's behaviour: the same request options and response shape (`wire.ts`), the
 * same timeouts with undici's error codes (`UND_ERR_CONNECT_TIMEOUT` with its step noted,
 * `UND_ERR_HEADERS_TIMEOUT`, `UND_ERR_BODY_TIMEOUT`), a connection the server closed as
 * `UND_ERR_SOCKET`, and an aborted signal as the signal's reason. So retries, error messages and
 * timeouts that name their step do not depend on the protocol.
 */
import type { Agent, request as httpRequest, IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { text } from 'node:stream/consumers'
import type { ConnectionOptions, SecureContext } from 'node:tls'
import { urlToHttpOptions } from 'node:url'
import { definedProps } from '../core/defined-props.ts'
import { nodeHttp, nodeTls } from '../core/node-builtins.ts'
import { type ConnectStep, noteConnectTimeout } from './connect-timeout.ts'
import type { ExchangeBody, ExchangeRequest, ExchangeResponse } from './exchange.ts'

/** Options of {@link Http1Dispatcher}; the TLS ones apply to `https:` origins. */
export interface Http1Options {
  /** Open connections at most (`maxSockets`). */
  connections: number
  /** How long an idle connection is kept (ms). */
  keepAliveMs: number
  /** Idle time before TCP keep-alive probes (ms); Node's agent default is 1 s. */
  tcpKeepAliveMs: number
  /** Limit on TCP connect plus TLS handshake (ms). */
  connectTimeoutMs: number
  secureContext?: SecureContext | undefined
  servername?: string | undefined
  rejectUnauthorized: boolean
  /** Opens each connection through a proxy (`proxy-tunnel.ts`); TLS to the server then runs inside it. Default: direct. */
  tunnel?: ((host: string, port: number) => Promise<Duplex>) | undefined
}

const coded = (message: string, code: string, cause?: unknown): Error =>
  Object.assign(new Error(message, { cause }), { code })

/**
 * Node's errors for a connection the server closed (`socket hang up` before the response,
 * `aborted` during the body: ECONNRESET without a syscall) as undici's `UND_ERR_SOCKET`, which it
 * raises for the same event; everything else (a real reset, refused, TLS) as it is.
 */
function undiciCode(err: unknown): unknown {
  const e = err as { code?: unknown; syscall?: unknown } | null
  return e?.code === 'ECONNRESET' && e.syscall === undefined
    ? coded('other side closed', 'UND_ERR_SOCKET', err)
    : err
}

/**
 * Makes `agent` open each connection through `tunnel`, and speak TLS inside it for `https:`
 * (Node's agents accept a connection handed to the callback later).
 */
function throughTunnel(
  agent: Agent,
  tunnel: (host: string, port: number) => Promise<Duplex>,
  tls: boolean,
): void {
  type Created = (err: Error | null, socket?: Duplex) => void
  const create = (
    options: ConnectionOptions & { host?: string; port?: number },
    created: Created,
  ): undefined => {
    const host = options.host ?? 'localhost'
    tunnel(host.includes(':') ? `[${host}]` : host, Number(options.port)).then(
      (stream) => created(null, tls ? nodeTls().connect({ ...options, socket: stream as Socket }) : stream),
      (err: Error) => created(err),
    )
    return undefined
  }
  ;(agent as unknown as { createConnection: typeof create }).createConnection = create
}

/**
 * One keep-alive `http.Agent` (or `https.Agent`) for one origin, serving requests with undici's
 * `request` contract (see the module comment). Timers: the connect timeout runs from the socket's
 * creation to TCP connect (`http:`) or the end of the TLS handshake (`https:`); the headers timeout
 * from then (at once on a reused connection) to the response headers; the body timeout is reset by
 * every chunk from the socket and, as in undici, does not fire while the reader is behind (the
 * body's buffer is full and the socket paused).
 */
export class Http1Dispatcher {
  readonly #agent: Agent
  readonly #target: ReturnType<typeof urlToHttpOptions>
  readonly #send: typeof httpRequest
  readonly #connectTimeoutMs: number

  constructor(origin: string, o: Http1Options) {
    const url = new URL(origin)
    const tls = url.protocol === 'https:'
    this.#target = urlToHttpOptions(url)
    this.#send = tls ? httpsRequest : nodeHttp().request
    this.#connectTimeoutMs = o.connectTimeoutMs
    const common = {
      keepAlive: true,
      keepAliveMsecs: o.tcpKeepAliveMs,
      timeout: o.keepAliveMs,
      maxSockets: o.connections,
    }
    this.#agent = tls
      ? new HttpsAgent({
          ...common,
          ...definedProps({ secureContext: o.secureContext, servername: o.servername }),
          rejectUnauthorized: o.rejectUnauthorized,
          ALPNProtocols: ['http/1.1'],
        })
      : new (nodeHttp().Agent)(common)
    if (o.tunnel) throughTunnel(this.#agent, o.tunnel, tls)
  }

  /** Open connections, busy or idle. */
  get connections(): number {
    let n = 0
    for (const list of [this.#agent.sockets, this.#agent.freeSockets])
      for (const sockets of Object.values(list)) n += sockets?.length ?? 0
    return n
  }

  /** Sends one request; resolves when the response headers arrive. */
  request(o: ExchangeRequest): Promise<ExchangeResponse> {
    const { signal } = o
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const headers: Record<string, string | number> = { ...o.headers }
      if (o.body !== undefined) headers['content-length'] = Buffer.byteLength(o.body)
      const req = this.#send({ ...this.#target, agent: this.#agent, method: o.method, path: o.path, headers })
      let res: IncomingMessage | undefined
      let timer: NodeJS.Timeout | undefined
      const arm = (ms: number, error: () => Error): void => {
        clearTimeout(timer)
        if (ms > 0) timer = setTimeout(() => req.destroy(error()), ms)
      }
      const waitHeaders = (): void =>
        arm(o.headersTimeout, () => coded('Headers Timeout Error', 'UND_ERR_HEADERS_TIMEOUT'))
      const onAbort = (): void => {
        res?.destroy(signal!.reason)
        req.destroy(signal!.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      const done = (): void => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      req.once('socket', (socket) => {
        // A reused connection is open already; a new one is still connecting when handed over.
        if (!socket.connecting) return waitHeaders()
        let step: ConnectStep = 'connect'
        const ms = this.#connectTimeoutMs
        arm(ms, () => noteConnectTimeout(coded('Connect Timeout Error', 'UND_ERR_CONNECT_TIMEOUT'), step, ms))
        const tls = this.#send === httpsRequest
        socket.once(tls ? 'secureConnect' : 'connect', waitHeaders)
        if (tls)
          socket.once('connect', () => {
            step = 'tls-handshake'
          })
      })
      req.on('error', (err) => {
        done()
        reject(undiciCode(err))
      })
      req.once('close', () => {
        if (!res) done()
      })
      req.once('response', (r) => {
        res = r
        clearTimeout(timer)
        r.once('close', done)
        r.on('error', () => {}) // surfaced to whoever reads the body; never an uncaught 'error' event
        const socket = r.socket
        if (o.bodyTimeout > 0 && socket) {
          const idle = setTimeout(() => {
            if (r.complete || r.destroyed) return
            if (r.readableLength >= r.readableHighWaterMark) idle.refresh()
            else r.destroy(coded('Body Timeout Error', 'UND_ERR_BODY_TIMEOUT'))
          }, o.bodyTimeout)
          const onData = (): void => void idle.refresh()
          socket.on('data', onData)
          r.once('close', () => {
            clearTimeout(idle)
            socket.off('data', onData)
          })
        }
        async function* chunks(): AsyncGenerator<Buffer> {
          try {
            yield* r
          } catch (err) {
            throw undiciCode(err)
          }
        }
        const body: ExchangeBody = {
          [Symbol.asyncIterator]: chunks,
          text: () => text(chunks()),
          destroy: () => r.destroy(),
        }
        resolve({ statusCode: r.statusCode ?? 0, headers: r.headers, body })
      })
      req.end(o.body)
    })
  }

  /** Closes idle connections now and busy ones when their response ends; later requests open new ones. */
  close(): void {
    ;(this.#agent as unknown as { keepAlive: boolean }).keepAlive = false // a socket freed from now on is closed, not kept
    for (const sockets of Object.values(this.#agent.freeSockets)) for (const s of sockets ?? []) s.destroy()
  }
}
