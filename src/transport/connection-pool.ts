/**
 * @module connection-pool — the connections of one cluster (HTTP/2: undici, HTTP/1.1: node:http) and their TLS context, rebuilt when the client certificate rotates.
 */
import type { Duplex } from 'node:stream'
import type { SecureContext } from 'node:tls'
import type { ClusterConfig, Credentials } from '../config/cluster-config.ts'
import { definedProps } from '../core/defined-props.ts'
import { EdgeopError } from '../core/errors.ts'
import { nodeTls } from '../core/node-builtins.ts'
import type { ExchangeRequest, ExchangeResponse } from './exchange.ts'
import { Http1Dispatcher } from './http1-dispatcher.ts'
import type { ProxyRoute } from './proxy-selection.ts'
import { openTunnel } from './proxy-tunnel.ts'
import { displayPath, type RequestSpec } from './request-spec.ts'
import { NOT_H2, Pool, request, stepAwareConnector } from './undici.ts'

/** Idle connections are kept 60 s; reopening after that costs one TLS handshake, and an idle edge node holds no socket for nothing. */
export const DEFAULT_KEEP_ALIVE_MS = 60_000
/**
 * Idle time before TCP keep-alive probes start (ms): 30 s, client-go's dialer `KeepAlive`
 * (`net.Dialer{KeepAlive: 30 * time.Second}` in client-go `transport/cache.go`). Node then probes
 * every 1 s, 10 times (`socket.setKeepAlive`: TCP_KEEPINTVL 1, TCP_KEEPCNT 10), so an idle
 * connection whose peer vanished fails within 40 s. Set on every connection: undici's, Node's
 * HTTP/1.1 agent (whose default is 1 s, probes on every idle second of a quiet watch), the proxy's.
 * Probes stop while sent data is unacknowledged; Node offers no TCP_USER_TIMEOUT to bound that
 * case, the HTTP/2 PING and request deadlines do.
 */
export const DEFAULT_TCP_KEEPALIVE_MS = 30_000

/**
 * Interval of HTTP/2 PINGs on every session (ms): 15 s. undici (8.13 and later) destroys a session
 * whose PING is still unanswered at the next one, so a session that died silently is found within
 * 30 s even while requests are in flight on it (when TCP keep-alive is silent). client-go's HTTP/2
 * health check allows 30 s read-idle plus 15 s ping timeout (client-go `transport/http2` defaults).
 * Cost: one 17-byte frame and its ack per 15 s, under 10 KB a day per connection.
 */
export const DEFAULT_H2_PING_INTERVAL_MS = 15_000
/** Connections per cluster over HTTP/1.1 (`maxSockets`); client-go `MaxIdleConnsPerHost` is 25. */
export const DEFAULT_MAX_CONNECTIONS = 25

/**
 * Limit on opening a connection, TCP connect and TLS handshake together: 10 s, undici's
 * default, which edgeop always used. client-go's `net.Dialer` allows 30 s for TCP and then
 * `TLSHandshakeTimeout` 10 s for TLS; an API server that has not answered a SYN in 10 s is
 * down or unreachable, and the caller's backoff retries sooner than 30 s would.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

/**
 * Node's error for a stream opened on a destroyed HTTP/2 session. Node (24.x) fails the stream
 * with it instead of throwing from `session.request()`, where undici would drop the session and
 * requeue; undici keeps a destroyed session whose socket has not closed yet, which takes until TCP
 * gives up on a link that stopped acknowledging (its PINGs stop on a destroyed session). Seen for
 * minutes in the soak over an emulated satellite link; the pool is retired on it.
 */
const SESSION_DESTROYED = 'ERR_HTTP2_INVALID_SESSION'

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  /** Negotiate HTTP/2 (ALPN). */
  http2: boolean
  /** Limit on TCP connect plus TLS handshake (ms). Default {@link DEFAULT_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number
  /** The proxy every connection goes through (`proxy-selection.ts`); undefined = direct. */
  proxy?: ProxyRoute | undefined
}

/**
 * Owns the connections of one cluster: HTTP/2 through undici's pool (`allowH2`), HTTP/1.1 through
 * Node's own client ({@link Http1Dispatcher}), which the artifact gets for free instead of bundling
 * undici's HTTP/1.1 client and its WebAssembly parser.
 *
 * Which protocol: `http:` origins and `http2: false` use HTTP/1.1. `https:` with HTTP/2 starts on
 * undici; when ALPN does not select h2 (a server or proxy without HTTP/2), the connector fails that
 * connection with `NOT_H2` before a byte of any request is written, this pool switches the origin
 * to HTTP/1.1 for good (the server will not start offering h2 within a process's life; a restart
 * negotiates afresh) and sends the failed requests again there, inside the same attempt.
 *
 * Guarantees: at most one live undici pool and one HTTP/1.1 agent; a rotated client certificate
 * gets new ones and the old ones drain; TLS material OpenSSL refuses fails once, by name, as
 * `EDGEOP_ERR_CONFIG`, without quoting the PEM.
 */
export class ConnectionPool {
  readonly #config: ClusterConfig
  readonly #origin: string
  readonly #options: ConnectionPoolOptions
  #http1: boolean
  #pool: Pool | undefined
  #h1: Http1Dispatcher | undefined
  #certKey: string | undefined
  #secureContext: SecureContext | undefined

  constructor(config: ClusterConfig, origin: string, options: ConnectionPoolOptions) {
    this.#config = config
    this.#origin = origin
    this.#options = options
    this.#http1 = !options.http2 || !origin.startsWith('https:')
  }

  /** Open connections (1 when HTTP/2 multiplexes everything). */
  get connections(): number {
    return (this.#pool?.stats.connected ?? 0) + (this.#h1?.connections ?? 0)
  }

  /**
   * The sender for the current client certificate (see {@link ConnectionPool}); it rejects with
   * undici's error codes on both protocols, and with the signal's reason when aborted.
   *
   * @throws EdgeopError `EDGEOP_ERR_CONFIG` when OpenSSL refuses the TLS material.
   */
  for(
    credentials: Credentials | undefined,
    spec: RequestSpec,
  ): (req: ExchangeRequest) => Promise<ExchangeResponse> {
    this.#rotate(credentials, spec)
    return (req) => this.#send(req)
  }

  async #send(req: ExchangeRequest): Promise<ExchangeResponse> {
    if (this.#http1) return this.#http1Dispatcher().request(req)
    this.#pool ??= this.#undiciPool()
    const pool = this.#pool
    try {
      return await request(pool, req)
    } catch (err) {
      const code = (err as { code?: unknown }).code
      if (code === NOT_H2) {
        this.#http1 = true
        if (this.#pool === pool) this.#pool = undefined
        void pool.close().catch(() => {})
        return this.#http1Dispatcher().request(req)
      }
      if (code !== SESSION_DESTROYED) throw err
      // Not one byte of the request left: Node refuses a stream on a destroyed session before
      // sending it, so any method is sent once more, on a new connection.
      if (this.#pool === pool) this.retire()
      this.#pool ??= this.#undiciPool()
      return request(this.#pool, req)
    }
  }

  /**
   * Retires the HTTP/2 connection after a request on it timed out waiting for headers (or found
   * its session destroyed): later requests open a new one, the old one's streams drain. HTTP/1.1
   * needs nothing: a timed-out request destroys its own socket.
   */
  retire(): void {
    const pool = this.#pool
    this.#pool = undefined
    void pool?.close().catch(() => {})
  }

  /** Closes the pool and the agent; in-flight requests finish. */
  async close(): Promise<void> {
    const pool = this.#pool
    this.#pool = undefined
    this.#h1?.close()
    this.#h1 = undefined
    await pool?.close()
  }

  /**
   * Drops the pool and agent (old ones drain) when an exec plugin rotated the client certificate,
   * and prepares the TLS context of the new one.
   *
   * One TLS context per pool, shared by its connections (Go: one `tls.Config` per transport).
   * Given `ca`/`cert`/`key` instead, Node parses them into a new OpenSSL context on every
   * connection: CPU on each reconnect, and native memory that glibc keeps (4,000 reconnects of
   * one client: RSS 164 MiB that way, 89 MiB with a shared context). A PEM that OpenSSL refuses
   * fails here, once, by name.
   */
  #rotate(credentials: Credentials | undefined, spec: RequestSpec): void {
    const cert = credentials?.clientCertificate ?? this.#config.tls.cert
    const key = credentials?.clientKey ?? this.#config.tls.key
    const certKey = cert && key ? cert + key : ''
    if (certKey === this.#certKey) return
    if (this.#origin.startsWith('https:'))
      this.#secureContext = this.#newSecureContext(
        this.#config.tls.ca,
        cert && key ? { cert, key } : undefined,
        spec,
      )
    this.#certKey = certKey
    void this.close()
  }

  /** The TLS options both protocols connect with. */
  #tls() {
    const tls = this.#config.tls
    return {
      secureContext: this.#secureContext,
      ...definedProps({ servername: tls.serverName }),
      rejectUnauthorized: !tls.insecureSkipVerify,
    }
  }

  #undiciPool(): Pool {
    const timeout = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    return new Pool(this.#origin, {
      connections: DEFAULT_MAX_CONNECTIONS,
      keepAliveTimeout: DEFAULT_KEEP_ALIVE_MS,
      allowH2: true,
      pingInterval: DEFAULT_H2_PING_INTERVAL_MS,
      connect: stepAwareConnector(
        {
          ...this.#tls(),
          allowH2: true,
          timeout,
          keepAlive: true,
          keepAliveInitialDelay: DEFAULT_TCP_KEEPALIVE_MS,
        },
        this.#tunnel(),
      ),
    })
  }

  #http1Dispatcher(): Http1Dispatcher {
    this.#h1 ??= new Http1Dispatcher(this.#origin, {
      connections: DEFAULT_MAX_CONNECTIONS,
      keepAliveMs: DEFAULT_KEEP_ALIVE_MS,
      tcpKeepAliveMs: DEFAULT_TCP_KEEPALIVE_MS,
      connectTimeoutMs: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      ...this.#tls(),
      tunnel: this.#tunnel(),
    })
    return this.#h1
  }

  /** Opens a tunnel through the proxy, reached with this pool's TLS settings; undefined without a proxy. */
  #tunnel(): ((host: string, port: number) => Promise<Duplex>) | undefined {
    const proxy = this.#options.proxy
    if (!proxy) return undefined
    const tls = this.#tls()
    const timeoutMs = this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
    return (host, port) =>
      openTunnel(proxy, host, port, {
        timeoutMs,
        secureContext: tls.secureContext,
        rejectUnauthorized: tls.rejectUnauthorized,
        keepAliveMs: DEFAULT_TCP_KEEPALIVE_MS,
      })
  }

  #newSecureContext(
    ca: string | undefined,
    pair: { cert: string; key: string } | undefined,
    spec: RequestSpec,
  ): SecureContext {
    try {
      return nodeTls().createSecureContext({ ...definedProps({ ca }), ...pair })
    } catch (cause) {
      // OpenSSL's reason names the decoder step, never the PEM's content.
      const what = pair ? 'the CA or the client certificate and key' : 'the CA'
      throw new EdgeopError(
        'EDGEOP_ERR_CONFIG',
        `${spec.method} ${displayPath(spec.path)}: ${what} from ${this.#config.source} cannot be used for TLS: ${(cause as Error).message}`,
        { step: 'load TLS material', cause },
      )
    }
  }
}
