/**
 * @module webhook-server — the HTTPS server the apiserver calls for admission and CRD conversion
 * (controller-runtime's webhook server): validating and mutating handlers registered by path, each
 * answering an admission.k8s.io/v1 `AdmissionReview` (mutations go back as a JSON Patch), and
 * converters answering an apiextensions.k8s.io/v1 `ConversionReview`.
 *
 * Routes are a table of path → review function. Faults stay in the answer: a body that is no
 * `AdmissionReview` (`ConversionReview`) gets a 400 with a message, a validating handler that throws
 * denies with its message (code 500), a mutating one that throws answers 500, so the apiserver applies
 * the webhook's `failurePolicy`; a converter that throws fails the review (`result.status: Failure`
 * with its message), which fails the request that needed it.
 */
import type { Server } from 'node:https'
import type { KubeObject } from '../core/index.ts'
import { EdgeopError, errorMessage, type Logger, noopLogger } from '../core/index.ts'
import { jsonDeeperThan } from '../core/json-depth.ts'
import type { MetricsRegistry } from '../metrics/metrics-registry.ts'
import { RECONCILE_TIME_BUCKETS } from '../metrics/reconcile-metrics.ts'
import { createHardenedServer, type HttpLimits, hardenedLimits, readBody } from '../server/http-guard.ts'
import { listen, parseBindAddress } from '../server/ops-server.ts'
import type { CertificatePair } from '../tls/index.ts'
import { type AdmissionRequest, type AdmissionResult, jsonPatch } from './admission.ts'
import { reviewHeader } from './review-header.ts'

/** controller-runtime's webhook port (`webhook.DefaultPort`), also kubebuilder's Service `targetPort`. */
export const DEFAULT_WEBHOOK_BIND_ADDRESS = ':9443'
/**
 * Largest review body read: 7 MiB, controller-runtime's limit (`maxRequestSize`): etcd stores objects
 * up to 1.5 MiB and a review carries the object and the old one, JSON-encoded and escaped.
 */
export const MAX_REVIEW_BYTES = 7 * 1024 * 1024
/** The apiserver waits at most 30 s (`timeoutSeconds`' maximum) for an answer; longer is never read. */
export const WEBHOOK_REQUEST_TIMEOUT_MS = 30_000
/**
 * Deepest JSON nesting of a review body: 512 levels, checked on the bytes before parsing. A Pod in an
 * `AdmissionReview` nests about 15 levels; `structuredClone` of the parsed object overflowed Node 24's
 * default stack at about 2,000 (measured), which crashed the process. 512 leaves a fourfold margin and
 * still admits unusual `x-kubernetes-preserve-unknown-fields` data (the apiserver's decoder, on Go's
 * `encoding/json` scanner, refuses only past 10,000), so a deeper object is refused with a 400 and the
 * webhook's `failurePolicy` decides.
 */
export const MAX_REVIEW_DEPTH = 512

/** Validates a request: return a denial (`allowed: false`) or warnings, or nothing to allow it. */
export type ValidatingHandler = (
  request: AdmissionRequest,
) => AdmissionResult | undefined | Promise<AdmissionResult | undefined>
/**
 * Mutates `object`, a copy of `request.object` that the handler changes in place; the patch sent back
 * is computed from those changes (unless the result carries its own `patch`).
 */
export type MutatingHandler = (
  request: AdmissionRequest,
  object: KubeObject,
) => AdmissionResult | undefined | Promise<AdmissionResult | undefined>

/**
 * Converts one object to `apiVersion` (`<group>/<version>`); called only when its own differs. Return a
 * converted copy with the same metadata (labels and annotations may change); throw to fail the review.
 */
export type Converter = (object: KubeObject, apiVersion: string) => KubeObject

/** Options of {@link WebhookServer}. */
export interface WebhookServerOptions {
  /** Where `edgeop_webhook_requests_total{webhook,outcome}` and `controller_runtime_webhook_latency_seconds{webhook}` go. */
  registry?: MetricsRegistry
  /** Handler errors at warn (path and message only, never the object). Default: none. */
  logger?: Logger
  /** Overrides of the connection, header and timeout limits; the request timeout defaults to {@link WEBHOOK_REQUEST_TIMEOUT_MS}. */
  limits?: Partial<HttpLimits>
}

/** A response: HTTP status and body (an object is sent as JSON, a string as text). */
export interface WebhookResponse {
  /** HTTP status. */
  status: number
  /** The body. */
  body: unknown
}

/** A registered path: its answer to a parsed review, and the review kind it takes (to refuse one unparsed). */
interface Route {
  answer(review: Record<string, unknown>): Promise<[outcome: string, body: unknown, status?: number]>
  apiVersion: string
  kind: string
  /** The response (the review's `response` field) that refuses review `uid` with `message`. */
  refusal(uid: string, message: string): Record<string, unknown>
}
/** The `outcome` label values. */
type Outcome = 'allowed' | 'denied' | 'patched' | 'converted' | 'error' | 'bad_request'

/**
 * Admission webhooks on their own HTTPS port, for every replica (no leader election): the apiserver
 * calls whichever pod its Service picks.
 *
 * Guarantees: only `POST` (405), registered paths only (404), bodies up to {@link MAX_REVIEW_BYTES}
 * (413); every answer echoes the request's `uid`; a handler never crashes the server. Metrics (when a
 * registry is given), label `webhook` = the registered path: `edgeop_webhook_requests_total` by
 * `outcome` (`allowed`, `denied`, `patched`, `converted`, `error` = handler threw, `bad_request`) and
 * `controller_runtime_webhook_latency_seconds`.
 *
 * @example
 * const server = new WebhookServer({ registry })
 *   .validate('/validate', (req) => (req.object?.metadata.name === 'x' ? { allowed: false, message: 'no x' } : undefined))
 *   .mutate('/mutate', (_req, obj) => void ((obj.metadata.labels ??= {}).team = 'edge'))
 * await server.start(':9443', certificatePair)
 */
export class WebhookServer {
  readonly #routes = new Map<string, Route>()
  readonly #log: Logger
  readonly #count?: (webhook: string, outcome: Outcome) => void
  readonly #latency?: (webhook: string, seconds: number) => void
  readonly #limits: HttpLimits
  #server: Server | undefined

  /** Creates a server with no routes; register them, then {@link start}. */
  constructor(options: WebhookServerOptions = {}) {
    this.#log = options.logger ?? noopLogger
    this.#limits = hardenedLimits({ requestTimeoutMs: WEBHOOK_REQUEST_TIMEOUT_MS, ...options.limits })
    const r = options.registry
    if (r) {
      const requests = r.counter({
        name: 'edgeop_webhook_requests_total',
        help: 'Admission and conversion reviews answered, by webhook path and outcome.',
        labelNames: ['webhook', 'outcome'],
      })
      const latency = r.histogram({
        name: 'controller_runtime_webhook_latency_seconds',
        help: 'Time to answer an admission or conversion review.',
        labelNames: ['webhook'],
        buckets: RECONCILE_TIME_BUCKETS,
      })
      this.#count = (webhook, outcome) => requests.inc({ webhook, outcome })
      this.#latency = (webhook, s) => latency.observe({ webhook }, s)
    }
  }

  /** Serves a validating webhook at `path` (e.g. `/validate-appservice`). */
  validate(path: string, handler: ValidatingHandler): this {
    return this.#admission(path, false, handler)
  }

  /** Serves a mutating webhook at `path`. */
  mutate(path: string, handler: MutatingHandler): this {
    return this.#admission(path, true, handler)
  }

  #admission(path: string, mutating: boolean, handler: MutatingHandler): this {
    const apiVersion = 'admission.k8s.io/v1'
    const kind = 'AdmissionReview'
    const refusal = (uid: string, message: string) => ({
      uid,
      allowed: false,
      status: { code: 400, message },
    })
    this.#routes.set(path, {
      apiVersion,
      kind,
      refusal,
      answer: async (review) => {
        const request = review.request as AdmissionRequest | undefined
        if (
          review.apiVersion !== 'admission.k8s.io/v1' ||
          review.kind !== 'AdmissionReview' ||
          typeof request?.uid !== 'string'
        )
          return ['bad_request', 'expected an admission.k8s.io/v1 AdmissionReview with request.uid', 400]
        let object: KubeObject = {} as KubeObject
        let r: AdmissionResult
        let failed = false
        try {
          object = structuredClone(request.object ?? {}) as KubeObject
          r = (await handler(request, object)) ?? {}
        } catch (err) {
          const message = `webhook ${path} failed: ${errorMessage(err).slice(0, 512)}`
          this.#log.warn('admission handler failed', { webhook: path, uid: request.uid, error: message })
          if (mutating) return ['error', message, 500]
          r = { allowed: false, code: 500, message }
          failed = true
        }
        const denied = r.allowed === false
        const patch = denied || !mutating ? [] : (r.patch ?? jsonPatch(request.object ?? {}, object))
        const response = {
          uid: request.uid,
          allowed: !denied,
          ...(denied ? { status: { code: r.code ?? 403, message: r.message ?? 'denied' } } : {}),
          ...(r.warnings?.length ? { warnings: r.warnings } : {}),
          ...(patch.length
            ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') }
            : {}),
        }
        const outcome = failed ? 'error' : denied ? 'denied' : patch.length ? 'patched' : 'allowed'
        return [outcome, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }]
      },
    })
    return this
  }

  /**
   * Serves a CRD conversion webhook at `path` (e.g. `/convert`): every object of `request.objects` is
   * converted to `request.desiredAPIVersion`, in order; the first that throws fails the whole review.
   */
  convert(path: string, converter: Converter): this {
    const refusal = (uid: string, message: string) => ({
      uid,
      result: { status: 'Failure', message },
      convertedObjects: [],
    })
    const [apiVersion, kind] = ['apiextensions.k8s.io/v1', 'ConversionReview']
    this.#routes.set(path, {
      apiVersion,
      kind,
      refusal,
      answer: async (review) => {
        const r = review.request as
          | { uid?: unknown; desiredAPIVersion?: unknown; objects?: unknown }
          | undefined
        if (
          review.apiVersion !== 'apiextensions.k8s.io/v1' ||
          review.kind !== 'ConversionReview' ||
          typeof r?.uid !== 'string' ||
          typeof r.desiredAPIVersion !== 'string' ||
          !Array.isArray(r.objects)
        )
          return [
            'bad_request',
            'expected an apiextensions.k8s.io/v1 ConversionReview with request.uid, desiredAPIVersion and objects',
            400,
          ]
        const to = r.desiredAPIVersion
        let response: Record<string, unknown>
        try {
          const convertedObjects = (r.objects as KubeObject[]).map((o) =>
            o.apiVersion === to ? o : converter(o, to),
          )
          response = { uid: r.uid, result: { status: 'Success' }, convertedObjects }
        } catch (err) {
          const message = `conversion to ${to} failed: ${errorMessage(err).slice(0, 512)}`
          this.#log.warn('conversion failed', { webhook: path, uid: r.uid, error: message })
          response = { uid: r.uid, result: { status: 'Failure', message }, convertedObjects: [] }
        }
        const ok = (response.result as { status: string }).status === 'Success'
        return [ok ? 'converted' : 'error', { apiVersion: review.apiVersion, kind: review.kind, response }]
      },
    })
    return this
  }

  /** The registered paths. */
  get paths(): string[] {
    return [...this.#routes.keys()]
  }

  /**
   * Answers one review body posted to `path`, as the HTTPS server does (and counts it). A body nested
   * deeper than {@link MAX_REVIEW_DEPTH} is never parsed: when its `apiVersion`, `kind` and
   * `request.uid` (read from the bytes) fit the path, it is refused in the review's own terms (an
   * admission denial with code 400, a failed conversion) so the apiserver shows the user why; otherwise
   * it gets a 400. Never rejects.
   */
  async serve(path: string, body: string): Promise<WebhookResponse> {
    const route = this.#routes.get(path)
    if (!route) return { status: 404, body: 'not found' }
    const started = performance.now()
    const bytes = Buffer.from(body)
    let outcome: string
    let out: unknown
    let status = 200
    if (jsonDeeperThan(bytes, MAX_REVIEW_DEPTH)) {
      const message = `the review nests deeper than ${MAX_REVIEW_DEPTH} levels`
      const h = reviewHeader(bytes)
      outcome = 'bad_request'
      if (h.uid !== undefined && h.apiVersion === route.apiVersion && h.kind === route.kind)
        out = { apiVersion: h.apiVersion, kind: h.kind, response: route.refusal(h.uid, message) }
      else [out, status] = [message, 400]
    } else {
      let review: unknown
      try {
        review = JSON.parse(body)
      } catch {
        review = undefined
      }
      ;[outcome, out, status = 200] =
        typeof review === 'object' && review !== null
          ? await route.answer(review as Record<string, unknown>)
          : ['bad_request', 'the body is not a JSON object', 400]
    }
    this.#count?.(path, outcome as Outcome)
    this.#latency?.(path, (performance.now() - started) / 1000)
    return { status, body: out }
  }

  /**
   * Listens on `bindAddress` (`[host]:port`) with `certificate`; resolves with the address listened on.
   *
   * @throws EdgeopError `EDGEOP_ERR_CONFIG` for a bad or busy address.
   */
  async start(bindAddress: string, certificate: CertificatePair): Promise<string> {
    if (!parseBindAddress(bindAddress))
      throw new EdgeopError('EDGEOP_ERR_CONFIG', 'webhook bind address is disabled', {
        step: 'start webhooks',
      })
    const server = createHardenedServer(
      async (req, res, url) => {
        const reply = (status: number, body: unknown): void => {
          const json = typeof body !== 'string'
          res.writeHead(status, { 'content-type': json ? 'application/json' : 'text/plain; charset=utf-8' })
          res.end(json ? JSON.stringify(body) : `${body}\n`)
        }
        if (req.method !== 'POST') return reply(405, 'method not allowed')
        if (!this.#routes.has(url.pathname)) return reply(404, 'not found')
        const body = await readBody(req, { maxBytes: MAX_REVIEW_BYTES })
        const answer = await this.serve(url.pathname, body.toString('utf8'))
        reply(answer.status, answer.body)
      },
      { name: 'webhooks', limits: this.#limits, tls: certificate, logger: this.#log },
    ) as Server
    this.#server = server
    return listen(server, bindAddress, 'start webhooks')
  }

  /** Serves `certificate` from the next TLS handshake on, without a restart. */
  setCertificate(certificate: CertificatePair): void {
    this.#server?.setSecureContext(certificate)
  }

  /** Stops accepting, ends every connection and resolves when closed. */
  close(): Promise<void> {
    const s = this.#server
    this.#server = undefined
    return new Promise((resolve) => {
      if (!s) return resolve()
      s.close(() => resolve())
      s.closeAllConnections()
    })
  }
}
