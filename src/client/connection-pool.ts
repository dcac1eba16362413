/**
 * @module connection-pool — the one undici pool per cluster and its TLS context, rebuilt when the client certificate rotates.
 */
import { createSecureContext, type SecureContext } from 'node:tls'
import type { ClusterConfig, Credentials } from '../config/cluster-config.ts'
import { EdgeopError } from '../core/errors.ts'
import { displayPath, type RequestSpec } from './request-spec.ts'
import { Pool, stepAwareConnector } from './undici.ts'

/** Idle connections are kept 60 s; reopening after that costs one TLS handshake, and an idle edge node holds no socket for nothing. */
export const DEFAULT_KEEP_ALIVE_MS = 60_000
/** Connections per pool when HTTP/1.1 is negotiated; client-go `MaxIdleConnsPerHost` is 25. */
export const DEFAULT_MAX_CONNECTIONS = 25

/**
 * Limit on opening a connection, TCP connect and TLS handshake together: 10 s, undici's
 * default, which edgeop always used. client-go's `net.Dialer` allows 30 s for TCP and then
 * `TLSHandshakeTimeout` 10 s for TLS; an API server that has not answered a SYN in 10 s is
 * down or unreachable, and the caller's backoff retries sooner than 30 s would.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000

/** Options of {@link ConnectionPool}. */
export interface ConnectionPoolOptions {
  /** Negotiate HTTP/2 (ALPN). */
  http2: boolean
  /** Limit on TCP connect plus TLS handshake (ms). Default {@link DEFAULT_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number
}

/**
 * Owns the pool of one cluster. Guarantees: at most one live pool; a rotated client
 * certificate gets a new pool and the old one drains; TLS material OpenSSL refuses fails
 * once, by name, as `EDGEOP_ERR_CONFIG`, without quoting the PEM.
 */
export class ConnectionPool {
  readonly #config: ClusterConfig
  readonly #origin: string
  readonly #options: ConnectionPoolOptions
  #pool: Pool | undefined
  #poolCertKey = ''

  constructor(config: ClusterConfig, origin: string, options: ConnectionPoolOptions) {
    this.#config = config
    this.#origin = origin
    this.#options = options
  }

  /** Open connections (1 when HTTP/2 multiplexes everything). */
  get connections(): number {
    return this.#pool?.stats.connected ?? 0
  }

  /**
   * The pool for the current client certificate; rebuilt (old one drained) when an exec plugin rotates it.
   *
   * One TLS context per pool, shared by its connections (Go: one `tls.Config` per transport).
   * Given `ca`/`cert`/`key` instead, Node parses them into a new OpenSSL context on every
   * connection: CPU on each reconnect, and native memory that glibc keeps (4,000 reconnects of
   * one client: RSS 164 MiB that way, 89 MiB with a shared context). A PEM that OpenSSL refuses
   * fails here, once, by name.
   */
  for(credentials: Credentials | undefined, spec: RequestSpec): Pool {
    const cert = credentials?.clientCertificate ?? this.#config.tls.cert
    const key = credentials?.clientKey ?? this.#config.tls.key
    const certKey = cert && key ? cert + key : ''
    if (this.#pool && certKey === this.#poolCertKey) return this.#pool
    const old = this.#pool
    const tls = this.#config.tls
    const secureContext = this.#origin.startsWith('https:')
      ? this.#secureContext(tls.ca, cert && key ? { cert, key } : undefined, spec)
      : undefined
    this.#pool = new Pool(this.#origin, {
      connections: DEFAULT_MAX_CONNECTIONS,
      keepAliveTimeout: DEFAULT_KEEP_ALIVE_MS,
      allowH2: this.#options.http2,
      connect: stepAwareConnector({
        ...(secureContext === undefined ? {} : { secureContext }),
        ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
        rejectUnauthorized: !tls.insecureSkipVerify,
        allowH2: this.#options.http2,
        timeout: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      }),
    })
    this.#poolCertKey = certKey
    void old?.close().catch(() => {})
    return this.#pool
  }

  /** Closes the pool; in-flight requests finish. */
  async close(): Promise<void> {
    const pool = this.#pool
    this.#pool = undefined
    await pool?.close()
  }

  #secureContext(
    ca: string | undefined,
    pair: { cert: string; key: string } | undefined,
    spec: RequestSpec,
  ): SecureContext {
    try {
      return createSecureContext({ ...(ca === undefined ? {} : { ca }), ...pair })
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
