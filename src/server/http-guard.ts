/**
 * @module http-guard — the one request path every HTTP server of edgeop goes through (probes, metrics
 * and the parked-keys view, admission and conversion webhooks): connection, header, body and JSON-depth
 * limits, handshake and request timeouts, a request target parsed without throwing, and every failure
 * answered (400, 408, 413, 431, 500) and logged once instead of ending the process.
 *
 * A route gets a parsed {@link URL}; it throws an {@link HttpRefusal} to answer a 4xx, anything else it
 * throws is a 500. Nothing a client sends reaches an uncaught exception.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { Socket } from 'node:net'
import type { SecureContextOptions } from 'node:tls'
import { errorMessage } from '../core/errors.ts'
import { jsonDeeperThan } from '../core/json-depth.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import { nodeHttp } from '../core/node-builtins.ts'

/**
 * Time for a request's head (request line and headers): 10 s. kube-apiserver allows 32 s
 * (k8s.io/apiserver `secure_serving.go`, `ReadHeaderTimeout`); a probe's, scrape's or review's head is a
 * few hundred bytes, so a client still sending it after 10 s is broken or holding the connection.
 */
export const HTTP_HEADERS_TIMEOUT_MS = 10_000
/**
 * Time for a TLS handshake: 10 s, Go's `http.DefaultTransport.TLSHandshakeTimeout` (the apiserver's
 * and Prometheus's side of the same handshake); Node's server default is 120 s.
 */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000
/**
 * Idle time of a kept-alive connection between requests: 5 s (Node's default, made explicit). A Go
 * client (the apiserver, Prometheus) reopens a connection the server closed while idle and resends
 * the request, so a short idle time costs a handshake, never a failed request, and idle connections
 * do not sit against {@link HTTP_MAX_CONNECTIONS}.
 */
export const HTTP_KEEP_ALIVE_TIMEOUT_MS = 5_000
/**
 * Open connections per server: 256. Callers are a few apiservers, kubelets and scrapers with a few
 * kept-alive connections each; past the cap a new connection is closed at once, so a flood of
 * connections costs file descriptors and memory up to this bound only.
 */
export const HTTP_MAX_CONNECTIONS = 256
/**
 * Largest request head: 16 KiB (Node's `--max-http-header-size` default, made explicit so that no flag
 * changes it). A bound service-account token is about 1 KiB; larger heads get 431.
 */
export const HTTP_MAX_HEADER_BYTES = 16 * 1024
/**
 * How often Node checks the head and request timeouts: 1 s. Its default, 30 s, is why a slow request
 * used to be cut only about a minute after its timeout had passed.
 */
export const HTTP_TIMEOUT_CHECK_INTERVAL_MS = 1_000

/** The limits of one hardened server; {@link hardenedLimits} fills in the defaults. */
export interface HttpLimits {
  /** Time for a request's head; default {@link HTTP_HEADERS_TIMEOUT_MS}. */
  headersTimeoutMs: number
  /** Time for a whole request, head and body (the server's own; no default here). */
  requestTimeoutMs: number
  /** Idle time between requests on one connection; default {@link HTTP_KEEP_ALIVE_TIMEOUT_MS}. */
  keepAliveTimeoutMs: number
  /** Time for a TLS handshake (HTTPS only); default {@link TLS_HANDSHAKE_TIMEOUT_MS}. */
  handshakeTimeoutMs: number
  /** Open connections at once; default {@link HTTP_MAX_CONNECTIONS}. */
  maxConnections: number
  /** Largest request head in bytes; default {@link HTTP_MAX_HEADER_BYTES}. */
  maxHeaderBytes: number
  /** How often the timeouts are checked; default {@link HTTP_TIMEOUT_CHECK_INTERVAL_MS}. */
  timeoutCheckIntervalMs: number
}

/**
 * `requestTimeoutMs` and any overrides, with the defaults for the rest; the head's timeout is at most
 * the request's (Node refuses a longer one).
 */
export function hardenedLimits(limits: Partial<HttpLimits> & { requestTimeoutMs: number }): HttpLimits {
  return {
    headersTimeoutMs: Math.min(HTTP_HEADERS_TIMEOUT_MS, limits.requestTimeoutMs),
    keepAliveTimeoutMs: HTTP_KEEP_ALIVE_TIMEOUT_MS,
    handshakeTimeoutMs: TLS_HANDSHAKE_TIMEOUT_MS,
    maxConnections: HTTP_MAX_CONNECTIONS,
    maxHeaderBytes: HTTP_MAX_HEADER_BYTES,
    timeoutCheckIntervalMs: HTTP_TIMEOUT_CHECK_INTERVAL_MS,
    ...limits,
  }
}

/**
 * A refusal of a request, answered with `status` (4xx) and `message` as a line of text. Routes and
 * {@link readBody} throw it; the guard answers it and logs it at debug only (the client's fault).
 */
export class HttpRefusal extends Error {
  /** The status answered. */
  readonly status: number

  /** `message` is sent to the client: never echo what it sent. */
  constructor(status: number, message: string) {
    super(message)
    this.name = 'HttpRefusal'
    this.status = status
  }
}

/** A route of a hardened server: the request, its response and its target, parsed. */
export type GuardedRoute = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>

/** Options of {@link createHardenedServer}. */
export interface HardenedServerOptions {
  /** Names the server in log lines, e.g. `probes`, `webhooks`. */
  name: string
  /** The limits; see {@link hardenedLimits}. */
  limits: HttpLimits
  /** Certificate and key: HTTPS. Absent: plain HTTP. */
  tls?: SecureContextOptions
  /** Handler failures at error, refusals and client errors at debug. Default: none. */
  logger?: Logger
}

/**
 * Creates (does not start) an HTTP or HTTPS server whose every request goes to `route` through the
 * guard. Guarantees: a request target that is no URL is answered 400 without reaching `route`; a
 * thrown {@link HttpRefusal} is answered with its status; any other throw or rejection is answered
 * 500 (or, once the response has started, ends the connection) and logged once; a malformed or
 * oversized head is answered 400 or 431, a head or request past its timeout 408, and the connection
 * closed; connections past `maxConnections` are closed at once; the process never exits for a request.
 */
export function createHardenedServer(route: GuardedRoute, options: HardenedServerOptions): Server {
  const { limits, name } = options
  const log = options.logger ?? noopLogger
  const serverOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
    connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
  }
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    void guard(route, req, res, name, log)
  }
  const server: Server = options.tls
    ? createHttpsServer(
        { ...serverOptions, ...options.tls, handshakeTimeout: limits.handshakeTimeoutMs },
        handler,
      )
    : nodeHttp().createServer(serverOptions, handler)
  server.maxConnections = limits.maxConnections
  // A client that stops reading a response: its socket is cut once quiet for twice the request time
  // (longer than the request timeout, so that a slow request still gets its 408 first).
  server.setTimeout(2 * limits.requestTimeoutMs)
  server.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    log.debug('request refused', { server: name, code: err.code })
    if (socket.writable && socket.bytesWritten === 0) {
      const status =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? '408 Request Timeout'
            : '400 Bad Request'
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
    }
    socket.destroySoon()
  })
  // An accept that fails once listening (EMFILE, the file-descriptor limit): logged, never an
  // unhandled 'error' event that would end the process. Errors while starting reach `listen`'s own listener.
  server.on('error', (err: Error & { code?: string }) => {
    if (server.listening) log.error('server error', { server: name, code: err.code, error: err.message })
  })
  // A TLS handshake that fails or passes its timeout: nothing can be answered; the socket is ended.
  server.on('tlsClientError', (err: Error & { code?: string }, socket: Socket) => {
    log.debug('TLS handshake failed', { server: name, code: err.code })
    socket.destroy()
  })
  return server
}

async function guard(
  route: GuardedRoute,
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  log: Logger,
): Promise<void> {
  // A request aborted by its client must not become an unhandled 'error' event.
  req.on('error', () => {})
  res.on('error', () => {})
  try {
    await route(req, res, requestTarget(req))
  } catch (err) {
    if (err instanceof HttpRefusal) {
      log.debug('request refused', { server: name, status: err.status, reason: err.message })
      return answer(res, err.status, err.message)
    }
    log.error('request failed', { server: name, method: req.method, error: errorMessage(err).slice(0, 512) })
    answer(res, 500, 'internal server error')
  }
}

/**
 * The target of `req` as a URL (origin-form `/path?q` or absolute-form `http://host/path`).
 *
 * @throws HttpRefusal 400 when it is no URL (e.g. a port past 65535).
 */
export function requestTarget(req: IncomingMessage): URL {
  try {
    return new URL(req.url ?? '/', 'http://localhost')
  } catch {
    throw new HttpRefusal(400, 'malformed request target')
  }
}

/**
 * Answers `status` with one line of text (no-store, nosniff), or ends the connection when the
 * response has already started. A refusal of a body closes the connection, as its unread rest
 * cannot be skipped safely.
 */
export function answer(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...(status === 413 || status === 400 ? { connection: 'close' } : {}),
  })
  res.end(`${message}\n`)
}

/** Limits of {@link readBody}. */
export interface BodyLimits {
  /** Largest body in bytes: 413 beyond (as soon as `content-length` or the bytes read say so). */
  maxBytes: number
  /** Deepest JSON nesting (`{}` is 1): 400 beyond, found by a scan before any parse. Absent: not checked. */
  maxJsonDepth?: number
}

/**
 * Reads the body of `req` within `limits`.
 *
 * @throws HttpRefusal 413 when it is larger than `maxBytes` (reading stops there), 400 when it nests
 *   JSON deeper than `maxJsonDepth`.
 */
export async function readBody(req: IncomingMessage, limits: BodyLimits): Promise<Buffer> {
  const tooLarge = (): HttpRefusal => new HttpRefusal(413, `body larger than ${limits.maxBytes} bytes`)
  const declared = Number(req.headers['content-length'])
  if (declared > limits.maxBytes) throw tooLarge()
  const chunks: Buffer[] = []
  await new Promise<void>((resolve, reject) => {
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= limits.maxBytes) return void chunks.push(chunk)
      // Stop reading but keep the socket: the 413 goes out on it, then it closes.
      req.off('data', onData).off('end', resolve).pause()
      reject(tooLarge())
    }
    req.on('data', onData).once('end', resolve).once('error', reject)
  })
  const body = Buffer.concat(chunks)
  if (limits.maxJsonDepth !== undefined && jsonDeeperThan(body, limits.maxJsonDepth))
    throw new HttpRefusal(400, `JSON nested deeper than ${limits.maxJsonDepth} levels`)
  return body
}
