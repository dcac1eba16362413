/**
 * @module transport — sends one API request: TLS, auth, throttling, timeout, retries.
 *
 * One undici pool per cluster, kept alive and shared by every request and watch.
 * Retry rules are client-go's (`rest/with_retry.go`, `rest/request.go`):
 * - any verb is retried on 429 or 5xx **only** when the response has an integer
 *   `Retry-After`, waiting that many seconds, at most {@link DEFAULT_MAX_RETRIES} times;
 * - GET (never a write; watches included) is retried after a connection reset / EOF, as if
 *   told `Retry-After: 1`;
 * - a 401 is retried once when the credential provider says fresh credentials differ;
 * - nothing else is retried silently.
 * Every retry passes the rate limiter again; the first attempt of a watch does not.
 */
import { arch, version as nodeVersion, platform } from 'node:process'
import { createSecureContext, type SecureContext } from 'node:tls'
import type { ClusterConfig, Credentials } from '../config/cluster-config.ts'
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { EdgeopError, isEdgeopError } from '../core/errors.ts'
import { VERSION } from '../version.ts'
import { ApiError, apiErrorFromResponse, parseRetryAfter } from './api-error.ts'
import { type RequestRateLimiter, tokenBucketLimiter } from './rate-limiter.ts'
import { type Dispatcher, Pool, request } from './undici.ts'

/** client-go `rest` default `maxRetries`: 10. */
export const DEFAULT_MAX_RETRIES = 10
/**
 * Default deadline of a non-watch call: 60 s, also sent to the server as `timeout=60s`.
 * client-go has none by default; undici would wait 300 s for headers. A bounded call
 * keeps a hung server from stalling a reconcile forever.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000
/** Idle connections are kept 60 s; reopening after that costs one TLS handshake, and an idle edge node holds no socket for nothing. */
export const DEFAULT_KEEP_ALIVE_MS = 60_000
/** Connections per pool when HTTP/1.1 is negotiated; client-go `MaxIdleConnsPerHost` is 25. */
export const DEFAULT_MAX_CONNECTIONS = 25
/** Transport errors (no response) are retried for GET as if the server said `Retry-After: 1` (client-go). */
const TRANSPORT_RETRY_AFTER_S = 1

/** Default User-Agent: `edgeop/<version> (<platform>/<arch>) node/<version>`. */
export const DEFAULT_USER_AGENT = `edgeop/${VERSION} (${platform}/${arch}) node/${nodeVersion}`

/** HTTP methods the API uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** One request. */
export interface RequestSpec {
  method: Method
  /** Path and query, e.g. `/api/v1/namespaces/x/pods?limit=500`. */
  path: string
  /** An object (sent as JSON) or a string. */
  body?: unknown
  contentType?: string
  accept?: string
  /** Overall deadline including retries (ms); 0 = none. Default {@link DEFAULT_REQUEST_TIMEOUT_MS}; watches: none. */
  timeoutMs?: number
  signal?: AbortSignal
}

/** A watch (long-running, streamed) request. */
export interface StreamSpec extends RequestSpec {
  /** Tear the stream down when no byte arrives for this long (ms); 0 = never. */
  idleTimeoutMs?: number
}

/** A streamed response: consume `body` once; `close()` aborts it early. */
export interface StreamResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: AsyncIterable<Uint8Array>
  close(): void
}

/** Observes requests for metrics. Both hooks are optional and must not throw. */
export interface RequestObserver {
  /** One call per attempt; `status` 0 for transport errors. */
  onResponse?(method: Method, status: number, durationMs: number): void
  /** Time spent waiting for the client-side rate limiter. */
  onThrottle?(waitedMs: number): void
}

/** Options of {@link Transport}. */
export interface TransportOptions {
  /** Client-side QPS; 0 → client-go default 5; negative disables the limiter. */
  qps?: number
  /** Client-side burst; 0 → client-go default 10. */
  burst?: number
  rateLimiter?: RequestRateLimiter
  userAgent?: string
  timeoutMs?: number
  maxRetries?: number
  /** Negotiate HTTP/2 (ALPN) so that requests and watches share one connection. Default true. */
  http2?: boolean
  clock?: Clock
  observer?: RequestObserver
}

interface Attempt {
  dispatcher: Dispatcher
  headers: Record<string, string>
  credentials: Credentials | undefined
}

/**
 * The connection to one API server.
 *
 * Guarantees: one pool (keep-alive, TLS from the config); every error is an
 * {@link ApiError} (`EDGEOP_ERR_API`, `EDGEOP_ERR_NETWORK`, `EDGEOP_ERR_TIMEOUT`,
 * `EDGEOP_ERR_ABORTED`) or `EDGEOP_ERR_DECODE`; no credential is ever in a message.
 */
export class Transport {
  readonly config: ClusterConfig
  readonly origin: string
  readonly #basePath: string
  readonly #limiter: RequestRateLimiter
  readonly #userAgent: string
  readonly #timeoutMs: number
  readonly #maxRetries: number
  readonly #http2: boolean
  readonly #clock: Clock
  readonly #observer: RequestObserver
  #pool: Pool | undefined
  #poolCertKey = ''
  #closed = false

  constructor(config: ClusterConfig, options: TransportOptions = {}) {
    if (config.proxyUrl) {
      throw new EdgeopError(
        'EDGEOP_ERR_CONFIG',
        `${config.source}: proxy-url is not supported by edgeop yet`,
        {
          step: 'create transport',
        },
      )
    }
    if (config.tls.insecureSkipVerify && config.tls.ca !== undefined) {
      // client-go refuses this too: a CA that is never checked is a configuration mistake.
      throw new EdgeopError(
        'EDGEOP_ERR_CONFIG',
        `${config.source}: certificate-authority and insecure-skip-tls-verify are both set; remove one`,
        { step: 'create transport' },
      )
    }
    let url: URL
    try {
      url = new URL(config.server)
    } catch (cause) {
      throw new EdgeopError('EDGEOP_ERR_CONFIG', `${config.source}: server is not a URL`, { cause })
    }
    this.config = config
    this.origin = url.origin
    this.#basePath = url.pathname.replace(/\/+$/, '')
    this.#clock = options.clock ?? realClock
    this.#limiter = options.rateLimiter ?? tokenBucketLimiter(options.qps, options.burst, this.#clock)
    this.#userAgent = options.userAgent ?? DEFAULT_USER_AGENT
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
    this.#maxRetries = Math.max(0, options.maxRetries ?? DEFAULT_MAX_RETRIES)
    this.#http2 = options.http2 ?? true
    this.#observer = options.observer ?? {}
  }

  /** Sends a request and decodes the JSON response. Throws {@link ApiError} on failure. */
  async request<T = unknown>(spec: RequestSpec): Promise<T> {
    const res = await this.#send(spec, false)
    const text = await readText(res.body, spec)
    if (text === '') return undefined as T
    return parseJson(text, spec) as T
  }

  /** Opens a streamed response (a watch). Throws {@link ApiError} if the server refuses it. */
  async stream(spec: StreamSpec): Promise<StreamResponse> {
    const res = await this.#send(spec, true)
    const body = res.body
    return {
      status: res.statusCode,
      headers: res.headers,
      body: streamChunks(body, spec),
      close: () => body.destroy(),
    }
  }

  /** Open connections of the pool (1 when HTTP/2 multiplexes everything). */
  get connections(): number {
    return this.#pool?.stats.connected ?? 0
  }

  /** Closes the pool; in-flight requests finish, new ones fail. */
  async close(): Promise<void> {
    this.#closed = true
    const pool = this.#pool
    this.#pool = undefined
    await pool?.close()
  }

  async #send(spec: StreamSpec, streaming: boolean): Promise<Dispatcher.ResponseData> {
    if (this.#closed) throw new EdgeopError('EDGEOP_ERR_ABORTED', 'the client is closed', { step: spec.path })
    const display = displayPath(spec.path)
    // Throttle the first attempt before the deadline starts (client-go), except watches.
    if (!streaming) await this.#throttle(spec.signal)
    const timeoutMs = streaming ? 0 : (spec.timeoutMs ?? this.#timeoutMs)
    const deadline = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined
    const signal = combine(spec.signal, deadline)
    const path = this.#basePath + (timeoutMs > 0 ? withServerTimeout(spec.path, timeoutMs) : spec.path)
    const body = encodeBody(spec.body)
    let retried401 = false
    let previous: ApiError | undefined

    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await this.#throttle(signal)
      const a = await this.#prepare(spec, signal, display)
      const started = this.#clock.monotonic()
      let res: Dispatcher.ResponseData
      try {
        res = await request(a.dispatcher, {
          path,
          method: spec.method,
          headers: a.headers,
          body,
          signal,
          headersTimeout:
            timeoutMs > 0 ? timeoutMs : streaming && spec.idleTimeoutMs ? spec.idleTimeoutMs : 60_000,
          bodyTimeout: streaming ? (spec.idleTimeoutMs ?? 0) : timeoutMs,
        })
      } catch (cause) {
        this.#observer.onResponse?.(spec.method, 0, this.#clock.monotonic() - started)
        const err = transportError(cause, spec, display, spec.signal, deadline, timeoutMs)
        // Watches too (client-go `Watch()` retries probable EOF and HTTP/2 connection loss
        // the same way): a watch reopened just after its connection dropped may be sent on
        // the dead connection; without this retry that costs a relist and a backoff step
        // each time, and a cache under frequent drops falls minutes behind.
        if (spec.method === 'GET' && isRetryableTransport(cause) && attempt < this.#maxRetries) {
          previous = err
          await this.#wait(TRANSPORT_RETRY_AFTER_S, signal, spec, display)
          continue
        }
        throw withPrevious(err, previous)
      }
      this.#observer.onResponse?.(spec.method, res.statusCode, this.#clock.monotonic() - started)
      if (res.statusCode < 400) return res

      const text = await readText(res.body, spec).catch(() => '')
      const err = apiErrorFromResponse(
        res.statusCode,
        tryJson(text),
        spec.method,
        display,
        res.headers['retry-after'],
      )
      if (
        res.statusCode === 401 &&
        !retried401 &&
        a.credentials &&
        this.config.credentials?.invalidate?.(a.credentials)
      ) {
        retried401 = true
        previous = err
        continue
      }
      const retryAfter = parseRetryAfter(res.headers['retry-after'])
      if (
        (res.statusCode === 429 || res.statusCode >= 500) &&
        retryAfter !== undefined &&
        attempt < this.#maxRetries
      ) {
        previous = err
        await this.#wait(retryAfter, signal, spec, display)
        continue
      }
      throw withPrevious(err, previous)
    }
  }

  async #throttle(signal: AbortSignal | undefined): Promise<void> {
    const waited = await this.#limiter.wait(signal)
    if (waited > 0) this.#observer.onThrottle?.(waited)
  }

  async #wait(
    seconds: number,
    signal: AbortSignal | undefined,
    spec: RequestSpec,
    display: string,
  ): Promise<void> {
    try {
      await sleep(seconds * 1000, this.#clock, signal)
    } catch (cause) {
      throw new ApiError({
        code: 'EDGEOP_ERR_ABORTED',
        status: 0,
        reason: 'Aborted',
        message: 'aborted while waiting to retry',
        method: spec.method,
        path: display,
        cause,
      })
    }
  }

  async #prepare(spec: RequestSpec, signal: AbortSignal | undefined, display: string): Promise<Attempt> {
    const headers: Record<string, string> = {
      'user-agent': this.#userAgent,
      accept: spec.accept ?? 'application/json',
    }
    if (spec.body !== undefined) headers['content-type'] = spec.contentType ?? 'application/json'
    let credentials: Credentials | undefined
    const provider = this.config.credentials
    if (provider) {
      try {
        credentials = await provider.get(signal)
      } catch (cause) {
        if (isEdgeopError(cause)) throw cause
        throw new EdgeopError(
          'EDGEOP_ERR_AUTH',
          `${spec.method} ${display}: getting credentials from ${provider.describe} failed`,
          {
            step: 'get credentials',
            cause,
          },
        )
      }
      if (credentials.token) headers.authorization = `Bearer ${credentials.token}`
      else if (credentials.basic) {
        headers.authorization = `Basic ${Buffer.from(`${credentials.basic.username}:${credentials.basic.password}`).toString('base64')}`
      }
    }
    return { dispatcher: this.#dispatcher(credentials, spec, display), headers, credentials }
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
  #dispatcher(credentials: Credentials | undefined, spec: RequestSpec, display: string): Pool {
    const cert = credentials?.clientCertificate ?? this.config.tls.cert
    const key = credentials?.clientKey ?? this.config.tls.key
    const certKey = cert && key ? cert + key : ''
    if (this.#pool && certKey === this.#poolCertKey) return this.#pool
    const old = this.#pool
    const tls = this.config.tls
    const secureContext = this.origin.startsWith('https:')
      ? this.#secureContext(tls.ca, cert && key ? { cert, key } : undefined, spec, display)
      : undefined
    this.#pool = new Pool(this.origin, {
      connections: DEFAULT_MAX_CONNECTIONS,
      keepAliveTimeout: DEFAULT_KEEP_ALIVE_MS,
      allowH2: this.#http2,
      connect: {
        ...(secureContext === undefined ? {} : { secureContext }),
        ...(tls.serverName === undefined ? {} : { servername: tls.serverName }),
        rejectUnauthorized: !tls.insecureSkipVerify,
      },
    })
    this.#poolCertKey = certKey
    void old?.close().catch(() => {})
    return this.#pool
  }

  #secureContext(
    ca: string | undefined,
    pair: { cert: string; key: string } | undefined,
    spec: RequestSpec,
    display: string,
  ): SecureContext {
    try {
      return createSecureContext({ ...(ca === undefined ? {} : { ca }), ...pair })
    } catch (cause) {
      // OpenSSL's reason names the decoder step, never the PEM's content.
      const what = pair ? 'the CA or the client certificate and key' : 'the CA'
      throw new EdgeopError(
        'EDGEOP_ERR_CONFIG',
        `${spec.method} ${display}: ${what} from ${this.config.source} cannot be used for TLS: ${(cause as Error).message}`,
        { step: 'load TLS material', cause },
      )
    }
  }
}

/** The path without its query, for messages (queries may be long; never secret, but noisy). */
function displayPath(path: string): string {
  const q = path.indexOf('?')
  return q < 0 ? path : path.slice(0, q)
}

function withServerTimeout(path: string, timeoutMs: number): string {
  const s = `timeout=${Math.max(1, Math.ceil(timeoutMs / 1000))}s`
  return path.includes('?') ? `${path}&${s}` : `${path}?${s}`
}

function encodeBody(body: unknown): string | undefined {
  if (body === undefined) return undefined
  return typeof body === 'string' ? body : JSON.stringify(body)
}

function combine(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a) return b
  if (!b) return a
  return AbortSignal.any([a, b])
}

const RETRYABLE_TRANSPORT = new Set([
  'ECONNRESET',
  'EPIPE',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
])

/** client-go retries GET on connection reset, probable EOF and HTTP/2 connection loss only. */
function isRetryableTransport(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code
  return typeof code === 'string' && RETRYABLE_TRANSPORT.has(code)
}

function transportError(
  cause: unknown,
  spec: RequestSpec,
  display: string,
  callerSignal: AbortSignal | undefined,
  deadline: AbortSignal | undefined,
  timeoutMs: number,
): ApiError {
  const base = { status: 0, method: spec.method, path: display, cause }
  if (callerSignal?.aborted)
    return new ApiError({
      ...base,
      code: 'EDGEOP_ERR_ABORTED',
      reason: 'Aborted',
      message: 'the request was aborted',
    })
  const code = (cause as { code?: unknown })?.code
  if (
    deadline?.aborted ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return new ApiError({
      ...base,
      code: 'EDGEOP_ERR_TIMEOUT',
      reason: 'Timeout',
      message: `no answer within ${timeoutMs} ms`,
    })
  }
  const detail = typeof code === 'string' ? code : ((cause as Error)?.message ?? 'unknown error')
  return new ApiError({
    ...base,
    code: 'EDGEOP_ERR_NETWORK',
    reason: 'NetworkError',
    message: `connection failed (${detail})`,
  })
}

function withPrevious(err: ApiError, previous: ApiError | undefined): ApiError {
  if (!previous || previous.message === err.message) return err
  return new ApiError({
    code: err.code,
    status: err.status,
    reason: err.reason,
    message: `${err.serverMessage} - error from a previous attempt: ${previous.serverMessage || previous.reason}`,
    method: err.method,
    path: err.path,
    ...(err.details === undefined ? {} : { details: err.details }),
    ...(err.retryAfter === undefined ? {} : { retryAfter: err.retryAfter }),
    cause: err.cause,
  })
}

async function readText(body: Dispatcher.ResponseData['body'], spec: RequestSpec): Promise<string> {
  try {
    return await body.text()
  } catch (cause) {
    throw transportError(cause, spec, displayPath(spec.path), spec.signal, undefined, 0)
  }
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function parseJson(text: string, spec: RequestSpec): unknown {
  try {
    return JSON.parse(text)
  } catch (cause) {
    const t = text.trimStart()
    const shape = t.startsWith('<') ? 'markup' : 'text'
    throw new EdgeopError(
      'EDGEOP_ERR_DECODE',
      `${spec.method} ${displayPath(spec.path)}: the response is not JSON (${shape} of ${text.length} characters)`,
      { step: `decode ${spec.method} ${displayPath(spec.path)}`, cause },
    )
  }
}

async function* streamChunks(
  body: Dispatcher.ResponseData['body'],
  spec: StreamSpec,
): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk as Uint8Array
  } catch (cause) {
    throw transportError(cause, spec, displayPath(spec.path), spec.signal, undefined, spec.idleTimeoutMs ?? 0)
  } finally {
    body.destroy()
  }
}
