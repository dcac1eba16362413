/**
 * @module transport — sends one API request: throttling, deadline, attempts and retries over the cluster's pool.
 *
 * The pieces live beside it: the pool and TLS in `connection-pool.ts`, the retry rules
 * (client-go's) in `retry-policy.ts`, headers and credentials in `auth-headers.ts`, error
 * mapping in `request-errors.ts`, body encoding and decoding in `body-codec.ts`. This file
 * is the driver: it runs attempts, asks {@link decideRetry} what follows a failure, waits
 * on the injected clock and reports to the observer. Every retry passes the rate limiter
 * again; the first attempt of a watch does not.
 */
import { Buffer } from 'node:buffer'
import { isProtobufResponse } from '../codec/content-negotiation.ts'
import type { ClusterConfig } from '../config/cluster-config.ts'
import { type Clock, realClock, sleep } from '../core/clock.ts'
import { EdgeopError } from '../core/errors.ts'
import { activeSpan, type Span } from '../tracing/span.ts'
import { VERSION } from '../version.ts'
import type { ApiError } from './api-error.ts'
import { currentCredentials, requestHeaders } from './auth-headers.ts'
import { decodeJson, encodeBody, readBytes, readText, streamChunks } from './body-codec.ts'
import { ConnectionPool } from './connection-pool.ts'
import type { ExchangeRequest, ExchangeResponse } from './exchange.ts'
import { type ProxyEnvironment, selectProxy } from './proxy-selection.ts'
import {
  abortedWhileWaiting,
  errorCodeOf,
  type FailureContext,
  responseError,
  transportError,
  withPrevious,
} from './request-errors.ts'
import { type RequestRateLimiter, tokenBucketLimiter } from './request-rate-limiter.ts'
import { type AttemptOutcome, DEFAULT_MAX_RETRIES, decideRetry } from './request-retry.ts'
import {
  displayPath,
  type Method,
  type RequestSpec,
  type StreamResponse,
  type StreamSpec,
} from './request-spec.ts'

export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_KEEP_ALIVE_MS,
  DEFAULT_MAX_CONNECTIONS,
} from './connection-pool.ts'
export { TIMEOUT_REASONS } from './request-errors.ts'
export { DEFAULT_MAX_RETRIES } from './request-retry.ts'
export type { Method, RequestSpec, StreamResponse, StreamSpec } from './request-spec.ts'

/**
 * Default deadline of a non-watch call: 60 s, also sent to the server as `timeout=60s`.
 * client-go has none by default; undici would wait 300 s for headers. A bounded call
 * keeps a hung server from stalling a reconcile forever.
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000
/**
 * undici `headersTimeout` when a request has no deadline (`timeoutMs: 0`, or a watch without
 * an idle timeout): 60 s, the same bound as {@link DEFAULT_REQUEST_TIMEOUT_MS}, instead of
 * undici's 300 s. A request with a deadline waits for headers as long as the deadline.
 */
export const DEFAULT_HEADERS_TIMEOUT_MS = 60_000

/** Default User-Agent: `edgeop/<version> (<platform>/<arch>) node/<version>`. */
export const DEFAULT_USER_AGENT = `edgeop/${VERSION} (${process.platform}/${process.arch}) node/${process.version}`

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
  /** Replaces the token bucket built from `qps` and `burst` (both are then ignored). */
  rateLimiter?: RequestRateLimiter
  /** User-Agent header; the server derives a default `fieldManager` from it. Default {@link DEFAULT_USER_AGENT}. */
  userAgent?: string
  /** Deadline of a non-watch call (ms), including retries; 0 = none. Default {@link DEFAULT_REQUEST_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Limit on TCP connect plus TLS handshake (ms). Default `DEFAULT_CONNECT_TIMEOUT_MS`. */
  connectTimeoutMs?: number
  /** Longest wait for response headers (ms). Default: the request's deadline, else the watch idle timeout, else {@link DEFAULT_HEADERS_TIMEOUT_MS}. */
  headersTimeoutMs?: number
  /** Longest gap between body chunks of a non-watch response (ms); 0 = none. Default: the request's deadline. Watches use `idleTimeoutMs`. */
  bodyTimeoutMs?: number
  /** Retries per call (429/5xx with `Retry-After`, lost GET connections); negative counts as 0. Default {@link DEFAULT_MAX_RETRIES}. */
  maxRetries?: number
  /**
   * Negotiate HTTP/2 (ALPN) so that requests and watches share one connection. Default true. HTTP/1.1
   * (Node's own client, keep-alive) serves `http:` servers, `http2: false`, and a TLS server that does
   * not select h2, after which that server stays on HTTP/1.1; callers see the same errors either way.
   */
  http2?: boolean
  /**
   * Where `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` are read from when the config has no `proxyUrl`
   * (client-go's precedence: `proxy-url`, else the environment). Default `process.env`.
   */
  proxyEnvironment?: ProxyEnvironment
  /** Drives the rate limiter, retry waits and measured durations (deadlines use real time). Default {@link realClock}. */
  clock?: Clock
  /** Receives per-attempt statuses and throttle waits. Default: none. */
  observer?: RequestObserver
  /**
   * Answers every attempt instead of the connection pool (no socket is opened): an in-memory API
   * server, such as `edgeop/testing`'s simulator. Everything above it (throttling, retries,
   * errors, decoding) runs as it does over HTTP. Default: the pool.
   */
  exchange?: (req: ExchangeRequest) => Promise<ExchangeResponse>
}

/**
 * The connection to one API server.
 *
 * Guarantees: one pool (keep-alive, TLS from the config; HTTP/2 through undici, HTTP/1.1 through
 * `node:http`); every error is an
 * {@link ApiError} (`EDGEOP_ERR_API`, `EDGEOP_ERR_NETWORK`, `EDGEOP_ERR_TIMEOUT`,
 * `EDGEOP_ERR_ABORTED`) or `EDGEOP_ERR_DECODE`; no credential is ever in a message.
 */
export class Transport {
  /** The cluster this transport connects to. */
  readonly config: ClusterConfig
  /** `scheme://host:port` of `config.server`; a path prefix of the server is put before every request path. */
  readonly origin: string
  /**
   * The proxy every connection goes through as `scheme://host:port` (never its credentials), chosen
   * as client-go does: the config's `proxyUrl`, else `HTTPS_PROXY`/`HTTP_PROXY` unless `NO_PROXY`
   * (or a loopback server) exempts it; undefined = direct.
   */
  readonly proxy: string | undefined
  readonly #basePath: string
  readonly #limiter: RequestRateLimiter
  readonly #userAgent: string
  readonly #timeoutMs: number
  readonly #headersTimeoutMs: number | undefined
  readonly #bodyTimeoutMs: number | undefined
  readonly #maxRetries: number
  readonly #clock: Clock
  readonly #observer: RequestObserver
  readonly #pool: ConnectionPool
  readonly #exchange: TransportOptions['exchange']
  #closed = false

  /**
   * Opens no connection yet.
   *
   * @throws EdgeopError `EDGEOP_ERR_CONFIG` when `config` sets a `proxyUrl` that is not an `http:`,
   *   `https:` or `socks5:` URL, sets both a CA and `insecureSkipVerify` (as client-go refuses), or
   *   `server` is not a URL.
   */
  constructor(config: ClusterConfig, options: TransportOptions = {}) {
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
    this.#headersTimeoutMs = options.headersTimeoutMs
    this.#bodyTimeoutMs = options.bodyTimeoutMs
    this.#maxRetries = Math.max(0, options.maxRetries ?? DEFAULT_MAX_RETRIES)
    this.#observer = options.observer ?? {}
    this.#exchange = options.exchange
    const proxy = selectProxy(url, config.proxyUrl, options.proxyEnvironment ?? process.env, config.source)
    this.proxy = proxy?.display
    this.#pool = new ConnectionPool(config, this.origin, {
      http2: options.http2 ?? true,
      connectTimeoutMs: options.connectTimeoutMs,
      proxy,
    })
  }

  /** Sends a request and decodes the JSON response. Throws {@link ApiError} on failure. */
  async request<T = unknown>(spec: RequestSpec): Promise<T> {
    const { res, ctx } = await this.#send(spec, false)
    return decodeJson(await readText(res.body, ctx), spec) as T
  }

  /**
   * Sends a request and returns the response body as bytes with its Content-Type (for protobuf answers).
   * Throws {@link ApiError} on failure, as {@link request} does.
   */
  async requestBytes(spec: RequestSpec): Promise<{ contentType: string; bytes: Buffer }> {
    const { res, ctx } = await this.#send(spec, false)
    const ct = res.headers['content-type']
    return { contentType: (Array.isArray(ct) ? ct[0] : ct) ?? '', bytes: await readBytes(res.body, ctx) }
  }

  /** Opens a streamed response (a watch). Throws {@link ApiError} if the server refuses it. */
  async stream(spec: StreamSpec): Promise<StreamResponse> {
    const { res, ctx } = await this.#send(spec, true)
    const body = res.body
    return {
      status: res.statusCode,
      headers: res.headers,
      body: streamChunks(body, ctx),
      close: () => body.destroy(),
    }
  }

  /** Open connections of the pool (1 when HTTP/2 multiplexes everything). */
  get connections(): number {
    return this.#pool.connections
  }

  /** Closes the pool; in-flight requests finish, new ones fail. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#pool.close()
  }

  /**
   * Sends `spec`; inside a traced reconcile a non-watch call is a client span whose `traceparent`
   * goes out with every attempt (a watch outlives any reconcile: it is not traced).
   */
  async #send(spec: StreamSpec, streaming: boolean): Promise<{ res: ExchangeResponse; ctx: FailureContext }> {
    const path = displayPath(spec.path)
    const span = streaming
      ? undefined
      : activeSpan()?.child(`${spec.method} ${path}`, {
          kind: 'client',
          attributes: { 'http.request.method': spec.method, 'url.full': this.origin + this.#basePath + path },
        })
    if (!span) return this.#attempts(spec, streaming, undefined)
    try {
      return await this.#attempts(spec, streaming, span)
    } catch (err) {
      span.fail(err)
      throw err
    } finally {
      span.end()
    }
  }

  async #attempts(
    spec: StreamSpec,
    streaming: boolean,
    span: Span | undefined,
  ): Promise<{ res: ExchangeResponse; ctx: FailureContext }> {
    if (this.#closed) throw new EdgeopError('EDGEOP_ERR_ABORTED', 'the client is closed', { step: spec.path })
    // Throttle the first attempt before the deadline starts (client-go), except watches.
    if (!streaming) await this.#throttle(spec.signal)
    const timeoutMs = streaming ? 0 : (spec.timeoutMs ?? this.#timeoutMs)
    const deadline = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined
    const signal = combine(spec.signal, deadline)
    const path = this.#basePath + (timeoutMs > 0 ? withServerTimeout(spec.path, timeoutMs) : spec.path)
    const body = encodeBody(spec.body)
    const idle = streaming ? (spec.idleTimeoutMs ?? 0) : 0
    const ctx: FailureContext = {
      spec,
      deadline,
      deadlineMs: timeoutMs,
      headersTimeoutMs:
        this.#headersTimeoutMs ?? (timeoutMs > 0 ? timeoutMs : idle > 0 ? idle : DEFAULT_HEADERS_TIMEOUT_MS),
      bodyTimeoutMs: streaming ? idle : (this.#bodyTimeoutMs ?? timeoutMs),
      phase: 'headers',
    }
    let refreshedCredentials = false
    let previous: ApiError | undefined

    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await this.#throttle(signal)
      const provider = this.config.credentials
      const credentials = provider ? await currentCredentials(provider, spec, signal) : undefined
      const send = this.#exchange ?? this.#pool.for(credentials, spec)
      const started = this.#clock.monotonic()
      let err: ApiError
      let outcome: AttemptOutcome
      try {
        const res = await send({
          path,
          method: spec.method,
          headers: requestHeaders(spec, this.#userAgent, credentials, span?.traceparent),
          body,
          signal,
          headersTimeout: ctx.headersTimeoutMs,
          bodyTimeout: ctx.bodyTimeoutMs,
        })
        this.#observer.onResponse?.(spec.method, res.statusCode, this.#clock.monotonic() - started)
        span?.set('http.response.status_code', res.statusCode)
        if (res.statusCode < 400) return { res, ctx }
        const bytes = await readBytes(res.body, ctx).catch(() => Buffer.alloc(0))
        const retryAfter = res.headers['retry-after']
        err = responseError(
          res.statusCode,
          errorBody(res.headers['content-type'], bytes, spec),
          spec,
          retryAfter,
        )
        outcome = { kind: 'response', status: res.statusCode, retryAfter }
      } catch (cause) {
        this.#observer.onResponse?.(spec.method, 0, this.#clock.monotonic() - started)
        err = transportError(cause, ctx)
        // No headers before a timeout: the connection may have died without a reset. New requests
        // get a new one; its other streams drain (or the PING and keep-alive checks end them).
        if (err.code === 'EDGEOP_ERR_TIMEOUT' || isTimeoutReason(spec.signal)) this.#pool.retire()
        // Watches too (client-go `Watch()` retries probable EOF and HTTP/2 connection loss
        // the same way): a watch reopened just after its connection dropped may be sent on
        // the dead connection; without this retry that costs a relist and a backoff step
        // each time, and a cache under frequent drops falls minutes behind.
        outcome = { kind: 'transport', errorCode: errorCodeOf(cause) }
      }
      const decision = decideRetry(
        { attempt, refreshedCredentials, maxRetries: this.#maxRetries },
        spec.method,
        outcome,
      )
      if (decision.action === 'refresh-credentials') {
        refreshedCredentials = true
        if (credentials && provider?.invalidate?.(credentials)) {
          previous = err
          continue
        }
        // Same as client-go: without fresher credentials the 401 stands.
        throw withPrevious(err, previous)
      }
      if (decision.action === 'give-up') throw withPrevious(err, previous)
      previous = err
      await this.#wait(decision.afterMs, signal, spec)
    }
  }

  async #throttle(signal: AbortSignal | undefined): Promise<void> {
    const waited = await this.#limiter.wait(signal)
    if (waited > 0) this.#observer.onThrottle?.(waited)
  }

  async #wait(ms: number, signal: AbortSignal | undefined, spec: RequestSpec): Promise<void> {
    try {
      await sleep(ms, this.#clock, signal)
    } catch (cause) {
      throw abortedWhileWaiting(spec, cause)
    }
  }
}

/** Whether the caller gave up with a timeout (an `EDGEOP_ERR_TIMEOUT` or a `TimeoutError` reason), not a shutdown. */
function isTimeoutReason(signal: AbortSignal | undefined): boolean {
  if (!signal?.aborted) return false
  const reason = signal.reason as { code?: unknown; name?: unknown } | undefined
  return reason?.code === 'EDGEOP_ERR_TIMEOUT' || reason?.name === 'TimeoutError'
}

function withServerTimeout(path: string, timeoutMs: number): string {
  const s = `timeout=${Math.max(1, Math.ceil(timeoutMs / 1000))}s`
  return path.includes('?') ? `${path}&${s}` : `${path}?${s}`
}

function combine(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (!a) return b
  if (!b) return a
  return AbortSignal.any([a, b])
}

/** An error answer's body: the decoded Status of a protobuf answer, else its text (JSON or not). */
function errorBody(
  contentType: string | string[] | undefined,
  bytes: Buffer,
  spec: RequestSpec,
): string | object {
  if (!isProtobufResponse(contentType)) return bytes.toString('utf8')
  try {
    if (spec.decodeStatus) return spec.decodeStatus(bytes)
  } catch {
    // the message below
  }
  return `an undecodable protobuf body of ${bytes.length} bytes`
}
