/**
 * @module fault-proxy — a TLS-terminating proxy in front of the apiserver that injects faults on command.
 *
 * Clients connect over HTTP/1.1 or HTTP/2 (ALPN) to `https://127.0.0.1:<port>` and
 * authenticate as they would to the apiserver: with a client certificate signed by the
 * cluster CA (verified here; the identity is passed upstream as `X-Remote-User` /
 * `X-Remote-Group`, which the apiserver trusts from the front-proxy client cert) or with
 * `Authorization: Bearer`, forwarded unchanged. Anything else gets 401.
 *
 * Responses, including watch streams, are forwarded chunk by chunk as they arrive.
 * Tests add {@link FaultRule}s (first matching rule with hits left wins), inspect the
 * {@link RequestRecord} log, and can {@link FaultProxy.dropAll} connections at any time.
 *
 * @example
 * const proxy = await FaultProxy.start(options)
 * proxy.addFault({ method: 'GET', path: /\/configmaps$/, times: 2, action: { type: 'status', status: 429, retryAfterSeconds: 1 } })
 * // … point the client at proxy.url …
 * assert.equal(proxy.requests().filter((r) => r.status === 429).length, 2)
 * await proxy.close()
 */
import { EventEmitter } from 'node:events'
import type { ClientRequest, IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  constants as h2constants,
} from 'node:http2'
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https'
import type { Socket } from 'node:net'
import type { TLSSocket } from 'node:tls'
import { REQUEST_HEADER_GROUP, REQUEST_HEADER_USER } from '../../src/testing/apiserver.ts'
import { LOOPBACK } from '../../src/testing/ports.ts'

/** A PEM certificate and its key. */
export interface PemPair {
  certPem: string
  keyPem: string
}

/** Options for {@link FaultProxy.start}. */
export interface FaultProxyOptions {
  /** Upstream apiserver, `https://127.0.0.1:<port>`. */
  upstream: string
  /** CA that signed the upstream's serving cert. */
  upstreamCaPem: string
  /** Front-proxy client cert presented upstream. */
  upstreamClientCert: PemPair
  /** The proxy's own serving cert (must cover 127.0.0.1). */
  servingCert: PemPair
  /** CA that callers' client certs must chain to. */
  clientCaPem: string
  /** Port to listen on; default 0 (any free port). */
  port?: number
}

/** What a matching rule does. */
export type FaultAction =
  /** Answer with this status and a `metav1.Status` body, without contacting the upstream. */
  | { type: 'status'; status: number; retryAfterSeconds?: number; reason?: string; message?: string }
  /** Wait `ms`, then forward normally. */
  | { type: 'latency'; ms: number }
  /** Accept the request and never answer (until the client gives up, or dropAll/close). */
  | { type: 'stall' }
  /**
   * Forward, but cut the response body after `afterBytes` bytes (mid-chunk when it falls
   * inside one): the HTTP/1.1 connection is destroyed; on HTTP/2 the stream is reset
   * (`scope: 'stream'`, default) or the whole connection destroyed (`scope: 'connection'`).
   */
  | { type: 'cut'; afterBytes: number; scope?: 'stream' | 'connection' }
  /** Destroy the connection (HTTP/2: the stream, with `scope: 'stream'`) without any response. */
  | { type: 'drop'; scope?: 'stream' | 'connection' }

/** When a rule applies, and what it does. Omitted matchers match everything. */
export interface FaultRule {
  /** HTTP method(s), case-insensitive. */
  method?: string | readonly string[]
  /** A regular expression tested against the path (without query), or an exact path. */
  path?: RegExp | string
  /** true: only watch requests; false: only non-watch requests. */
  watch?: boolean
  /** How many requests the rule applies to; default: until cleared. */
  times?: number
  action: FaultAction
}

/** A rule that has been added. */
export interface FaultHandle {
  readonly id: number
  readonly rule: FaultRule
  /** Requests the rule has applied to so far. */
  readonly hits: number
  /** Requests it will still apply to (Infinity = until cleared). */
  readonly remaining: number
  /** Removes the rule. */
  clear(): void
}

/** How a request ended. */
export type RequestOutcome = 'completed' | 'client-closed' | 'cut' | 'dropped' | 'rejected' | 'upstream-error'

/** One request as seen by the proxy. Records are updated in place while the request runs. */
export interface RequestRecord {
  readonly id: number
  readonly method: string
  /** Path without the query string. */
  readonly path: string
  /** Raw query string without `?` (empty when none). */
  readonly query: string
  readonly params: URLSearchParams
  /** `watch=1|true` in the query, or a legacy `/watch/` path. */
  readonly watch: boolean
  readonly httpVersion: '1.1' | '2'
  /** How the caller authenticated, and as whom (client cert) . */
  readonly auth: 'cert' | 'bearer' | 'none'
  readonly user: string | undefined
  readonly groups: readonly string[]
  /** The fault applied, if any. */
  readonly fault: FaultAction['type'] | undefined
  /** Status sent to the client (undefined while none has been sent). */
  status: number | undefined
  /** Bytes of response body sent to the client. */
  bytes: number
  /** Epoch milliseconds. */
  readonly startedAt: number
  respondedAt: number | undefined
  endedAt: number | undefined
  outcome: RequestOutcome | undefined
  error: string | undefined
}

/** Canonical `reason` of a `metav1.Status` per HTTP status. */
const STATUS_REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Expired',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
}

/** What kube-apiserver's priority-and-fairness filter sends with a 429 when no value is given. */
export const DEFAULT_RETRY_AFTER_SECONDS = 1

/** Request headers never forwarded: hop-by-hop headers, and identity headers a caller could spoof. */
const DROP_REQUEST_HEADERS =
  /^(?::|connection$|keep-alive$|proxy-connection$|transfer-encoding$|upgrade$|te$|host$|http2-settings$|x-remote-)/i

/** Response headers never forwarded (connection-specific; forbidden in HTTP/2). */
const DROP_RESPONSE_HEADERS =
  /^(?:connection|keep-alive|proxy-connection|transfer-encoding|upgrade|trailer)$/i

/** Builds a `metav1.Status` failure object like the apiserver's. */
export function statusObject(
  code: number,
  options: { reason?: string; message?: string; retryAfterSeconds?: number } = {},
): Record<string, unknown> {
  const reason = options.reason ?? STATUS_REASONS[code] ?? 'Unknown'
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: options.message ?? `injected by the edgeop fault proxy: ${code} ${reason}`,
    reason,
    ...(options.retryAfterSeconds === undefined
      ? {}
      : { details: { retryAfterSeconds: options.retryAfterSeconds } }),
    code,
  }
}

type AnyRequest = IncomingMessage | Http2ServerRequest
type AnyResponse = ServerResponse | Http2ServerResponse

/** The part of the HTTP/1.1 and HTTP/2 compat response APIs the proxy uses (their union is not callable). */
interface ResponseLike {
  writeHead(status: number, headers: Record<string, string | string[]>): unknown
  write(chunk: Uint8Array, callback?: (err?: Error | null) => void): boolean
  end(chunk?: string): unknown
}

const like = (res: AnyResponse): ResponseLike => res as unknown as ResponseLike

interface ActiveRule {
  id: number
  rule: FaultRule
  hits: number
  remaining: number
}

interface Identity {
  auth: RequestRecord['auth']
  user: string | undefined
  groups: string[]
}

function isHttp2(req: AnyRequest): req is Http2ServerRequest {
  return req.httpVersionMajor === 2
}

function tlsSocketOf(req: AnyRequest): TLSSocket {
  return (isHttp2(req) ? req.stream.session?.socket : req.socket) as TLSSocket
}

function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

/** The proxy. Create with {@link FaultProxy.start}. */
export class FaultProxy {
  readonly url: string
  readonly port: number
  readonly #server: Http2SecureServer
  readonly #agent: Agent
  readonly #options: FaultProxyOptions
  readonly #rules: ActiveRule[] = []
  readonly #log: RequestRecord[] = []
  readonly #events = new EventEmitter()
  readonly #sockets = new Set<Socket>()
  readonly #upstreamRequests = new Set<ClientRequest>()
  readonly #timers = new Set<NodeJS.Timeout>()
  #ruleSeq = 0
  #requestSeq = 0
  #closed = false

  private constructor(server: Http2SecureServer, options: FaultProxyOptions, port: number) {
    this.#server = server
    this.#options = options
    this.port = port
    this.url = `https://${LOOPBACK}:${port}`
    this.#agent = new Agent({
      keepAlive: true,
      ca: options.upstreamCaPem,
      cert: options.upstreamClientCert.certPem,
      key: options.upstreamClientCert.keyPem,
    })
    this.#events.setMaxListeners(0)
  }

  /** Starts listening on 127.0.0.1. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = createSecureServer({
      allowHTTP1: true,
      cert: options.servingCert.certPem,
      key: options.servingCert.keyPem,
      ca: options.clientCaPem,
      requestCert: true,
      // Verified per request instead, so an unverified caller gets a 401 it can read
      // rather than a TLS alert.
      rejectUnauthorized: false,
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(options.port ?? 0, LOOPBACK, () => {
        server.off('error', reject)
        resolve()
      })
    })
    const address = server.address()
    const port = typeof address === 'object' && address !== null ? address.port : 0
    const proxy = new FaultProxy(server, options, port)
    server.on('secureConnection', (socket: TLSSocket) => {
      proxy.#sockets.add(socket)
      socket.once('close', () => proxy.#sockets.delete(socket))
    })
    server.on('request', (req: AnyRequest, res: AnyResponse) => proxy.#handle(req, res))
    // A client that vanishes mid-handshake or resets a session is routine here.
    server.on('sessionError', () => {})
    server.on('tlsClientError', () => {})
    return proxy
  }

  /** Adds a rule at the end of the list and returns a handle to watch or remove it. */
  addFault(rule: FaultRule): FaultHandle {
    const active: ActiveRule = { id: ++this.#ruleSeq, rule, hits: 0, remaining: rule.times ?? Infinity }
    this.#rules.push(active)
    return {
      id: active.id,
      rule,
      get hits() {
        return active.hits
      },
      get remaining() {
        return active.remaining
      },
      clear: () => {
        const i = this.#rules.indexOf(active)
        if (i >= 0) this.#rules.splice(i, 1)
      },
    }
  }

  /** Removes every rule (requests already stalled or delayed stay so). */
  clearFaults(): void {
    this.#rules.length = 0
  }

  /** A copy of the request log, oldest first, optionally filtered. */
  requests(filter?: (r: RequestRecord) => boolean): RequestRecord[] {
    return filter === undefined ? [...this.#log] : this.#log.filter(filter)
  }

  /** Empties the request log. */
  clearLog(): void {
    this.#log.length = 0
  }

  /**
   * Resolves with the first record (already logged or future) for which `predicate`
   * holds, re-checking whenever a record changes; rejects after `timeoutMs`.
   */
  waitFor(predicate: (r: RequestRecord) => boolean, timeoutMs = 10_000): Promise<RequestRecord> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.#log.find(predicate)
        if (found === undefined) return false
        cleanup()
        resolve(found)
        return true
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`fault proxy: no matching request within ${timeoutMs} ms`))
      }, timeoutMs)
      const cleanup = (): void => {
        clearTimeout(timer)
        this.#events.off('change', check)
      }
      if (!check()) this.#events.on('change', check)
    })
  }

  /** Destroys every client connection (so every stream on them) and every upstream request, now. */
  dropAll(): void {
    for (const rec of this.#log) if (rec.endedAt === undefined) this.#finish(rec, 'dropped')
    for (const r of this.#upstreamRequests) r.destroy()
    for (const s of this.#sockets) s.destroy()
  }

  /** Stops listening, drops everything, and releases the upstream connections. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    for (const t of this.#timers) clearTimeout(t)
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    this.dropAll()
    this.#agent.destroy()
    await closed
  }

  #match(method: string, path: string, watch: boolean): ActiveRule | undefined {
    for (const r of this.#rules) {
      if (r.remaining <= 0) continue
      const { rule } = r
      if (rule.method !== undefined) {
        const methods = (typeof rule.method === 'string' ? [rule.method] : rule.method).map((m) =>
          m.toUpperCase(),
        )
        if (!methods.includes(method)) continue
      }
      if (
        rule.path !== undefined &&
        !(typeof rule.path === 'string' ? rule.path === path : rule.path.test(path))
      ) {
        continue
      }
      if (rule.watch !== undefined && rule.watch !== watch) continue
      r.hits++
      r.remaining--
      return r
    }
    return undefined
  }

  #identify(req: AnyRequest): Identity | undefined {
    const socket = tlsSocketOf(req)
    const cert = socket.getPeerCertificate()
    if (cert !== null && cert.subject !== undefined) {
      if (!socket.authorized) return undefined
      const user = asList(cert.subject.CN)[0]
      if (user === undefined || user === '') return undefined
      return { auth: 'cert', user, groups: asList(cert.subject.O) }
    }
    if (/^bearer\s+\S/i.test(req.headers.authorization ?? ''))
      return { auth: 'bearer', user: undefined, groups: [] }
    return undefined
  }

  #changed(): void {
    this.#events.emit('change')
  }

  #finish(rec: RequestRecord, outcome: RequestOutcome, error?: string): void {
    if (rec.endedAt !== undefined) return
    rec.endedAt = Date.now()
    rec.outcome = outcome
    if (error !== undefined) rec.error = error
    this.#changed()
  }

  #writeHead(
    rec: RequestRecord,
    res: AnyResponse,
    status: number,
    headers: Record<string, string | string[]>,
  ): void {
    like(res).writeHead(status, headers)
    rec.status = status
    rec.respondedAt = Date.now()
    this.#changed()
  }

  #sendStatus(
    rec: RequestRecord,
    res: AnyResponse,
    code: number,
    options: Parameters<typeof statusObject>[1] = {},
  ) {
    const body = JSON.stringify(statusObject(code, options))
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      'cache-control': 'no-cache, private',
    }
    if (options.retryAfterSeconds !== undefined) headers['retry-after'] = String(options.retryAfterSeconds)
    this.#writeHead(rec, res, code, headers)
    rec.bytes += Buffer.byteLength(body)
    like(res).end(body)
  }

  /** Ends the client's transport abruptly: the HTTP/2 stream or the whole connection. */
  #kill(req: AnyRequest, res: AnyResponse, scope: 'stream' | 'connection'): void {
    if (isHttp2(req) && scope === 'stream') {
      ;(res as Http2ServerResponse).stream.close(h2constants.NGHTTP2_INTERNAL_ERROR)
    } else {
      tlsSocketOf(req).destroy()
    }
  }

  #handle(req: AnyRequest, res: AnyResponse): void {
    const url = new URL(req.url ?? '/', 'https://proxy.invalid')
    const watchParam = url.searchParams.get('watch')
    const watch = watchParam === '1' || watchParam === 'true' || /\/watch\//.test(url.pathname)
    const method = (req.method ?? 'GET').toUpperCase()
    const identity = this.#identify(req)
    const matched = identity === undefined ? undefined : this.#match(method, url.pathname, watch)
    const action = matched?.rule.action
    const rec: RequestRecord = {
      id: ++this.#requestSeq,
      method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      params: url.searchParams,
      watch,
      httpVersion: isHttp2(req) ? '2' : '1.1',
      auth: identity?.auth ?? 'none',
      user: identity?.user,
      groups: identity?.groups ?? [],
      fault: action?.type,
      status: undefined,
      bytes: 0,
      startedAt: Date.now(),
      respondedAt: undefined,
      endedAt: undefined,
      outcome: undefined,
      error: undefined,
    }
    this.#log.push(rec)
    this.#changed()
    res.on('close', () => this.#finish(rec, 'client-closed'))

    if (identity === undefined) {
      this.#sendStatus(rec, res, 401, {
        message: 'Unauthorized: no verified client certificate and no bearer token',
      })
      this.#finish(rec, 'rejected')
      return
    }
    switch (action?.type) {
      case 'status': {
        const retryAfterSeconds =
          action.retryAfterSeconds ?? (action.status === 429 ? DEFAULT_RETRY_AFTER_SECONDS : undefined)
        req.resume()
        this.#sendStatus(rec, res, action.status, { ...action, retryAfterSeconds })
        this.#finish(rec, 'completed')
        return
      }
      case 'stall':
        return
      case 'drop':
        this.#finish(rec, 'dropped')
        this.#kill(req, res, action.scope ?? 'connection')
        return
      case 'latency': {
        const timer = setTimeout(() => {
          this.#timers.delete(timer)
          if (rec.endedAt === undefined) this.#forward(req, res, rec, identity, undefined)
        }, action.ms)
        this.#timers.add(timer)
        return
      }
      case 'cut':
        this.#forward(req, res, rec, identity, action)
        return
      default:
        this.#forward(req, res, rec, identity, undefined)
    }
  }

  #forward(
    req: AnyRequest,
    res: AnyResponse,
    rec: RequestRecord,
    identity: Identity,
    cut: Extract<FaultAction, { type: 'cut' }> | undefined,
  ): void {
    const upstream = new URL(this.#options.upstream)
    const headers: Record<string, string | string[]> = {}
    for (const [name, value] of Object.entries(req.headers as IncomingHttpHeaders)) {
      if (value === undefined || DROP_REQUEST_HEADERS.test(name)) continue
      if (identity.auth === 'cert' && name === 'authorization') continue
      headers[name] = value
    }
    if (identity.auth === 'cert') {
      headers[REQUEST_HEADER_USER] = identity.user ?? ''
      if (identity.groups.length > 0) headers[REQUEST_HEADER_GROUP] = identity.groups
    }
    const options: RequestOptions = {
      hostname: upstream.hostname,
      port: upstream.port,
      method: rec.method,
      path: req.url,
      headers,
      agent: this.#agent,
    }
    let aborted = false
    const upreq = httpsRequest(options, (upres) => {
      const out: Record<string, string | string[]> = {}
      for (const [name, value] of Object.entries(upres.headers)) {
        if (value !== undefined && !DROP_RESPONSE_HEADERS.test(name)) out[name] = value
      }
      if (rec.endedAt !== undefined) {
        upres.destroy()
        return
      }
      this.#writeHead(rec, res, upres.statusCode ?? 502, out)
      if ('flushHeaders' in res && !isHttp2(req)) res.flushHeaders()
      upres.on('data', (chunk: Buffer) => {
        if (cut !== undefined && rec.bytes + chunk.length >= cut.afterBytes) {
          const part = chunk.subarray(0, Math.max(0, cut.afterBytes - rec.bytes))
          rec.bytes += part.length
          aborted = true
          upres.destroy()
          this.#finish(rec, 'cut')
          const kill = (): void => this.#kill(req, res, cut.scope ?? 'stream')
          if (part.length === 0) kill()
          else like(res).write(part, kill)
          return
        }
        rec.bytes += chunk.length
        this.#changed()
        if (!like(res).write(chunk)) upres.pause()
      })
      res.on('drain', () => upres.resume())
      upres.on('end', () => {
        if (aborted) return
        like(res).end()
        this.#finish(rec, 'completed')
      })
      upres.on('error', (err) => {
        if (aborted) return
        this.#finish(rec, 'upstream-error', err.message)
        this.#kill(req, res, 'stream')
      })
    })
    this.#upstreamRequests.add(upreq)
    upreq.on('close', () => this.#upstreamRequests.delete(upreq))
    upreq.on('error', (err) => {
      if (aborted || rec.endedAt !== undefined) return
      if (rec.status === undefined) {
        this.#sendStatus(rec, res, 502, { message: `fault proxy: upstream error: ${err.message}` })
        this.#finish(rec, 'upstream-error', err.message)
      } else {
        this.#finish(rec, 'upstream-error', err.message)
        this.#kill(req, res, 'stream')
      }
    })
    res.on('close', () => {
      if (rec.outcome !== 'completed') {
        aborted = true
        upreq.destroy()
      }
    })
    req.pipe(upreq)
  }
}
