/**
 * @module metrics-auth — who may scrape `/metrics`: the bearer token of each request is authenticated
 * with a `TokenReview` and the user it names is authorized with a `SubjectAccessReview` on the
 * `/metrics` non-resource URL (verb `get`), both answered by the apiserver; decisions are cached
 * briefly by token hash (controller-runtime `filters.WithAuthenticationAndAuthorization`).
 *
 * A pure decision layer over an injected reviewer: no HTTP server, no timers of its own.
 */
import { createHash } from 'node:crypto'
import { type Clock, realClock } from '../core/clock.ts'
import { definedProps } from '../core/defined-props.ts'
import { errorMessage } from '../core/errors.ts'
import { type Logger, noopLogger } from '../core/log.ts'
import type { RequestSpec } from '../transport/request-spec.ts'

/** The path and verb a scraper must be granted (kubebuilder's `metrics-reader` ClusterRole: `nonResourceURLs: [/metrics], verbs: [get]`). */
export const METRICS_PATH = '/metrics'
/**
 * How long an allowed decision is reused: 60 s, controller-runtime's authentication cache TTL
 * (`DelegatingAuthenticatorConfig.CacheTTL`, shorter than its 5 min allow cache): at the common 30 s
 * scrape interval a steady scraper costs one review pair a minute, and a deleted token or a removed
 * binding stops working within a minute.
 */
export const METRICS_AUTH_ALLOWED_TTL_MS = 60_000
/**
 * How long a denied or unauthenticated decision is reused: 10 s (controller-runtime's deny cache is
 * 30 s). Long enough to absorb a retry burst of the same bad token, short enough that a binding granted
 * a moment ago works on the next scrape but one.
 */
export const METRICS_AUTH_DENIED_TTL_MS = 10_000
/**
 * Most cached decisions: 256. Legitimate scrapers are a handful of Prometheus replicas; beyond that the
 * entries come from distinct tokens (rotation, or someone trying tokens), and the oldest is evicted.
 */
export const METRICS_AUTH_CACHE_SIZE = 256
/**
 * Most reviews in flight at once: 4. Reviews go through the operator's own client and its rate limit,
 * so a flood of distinct tokens must not starve the reconcilers; excess requests get 429.
 */
export const METRICS_AUTH_MAX_IN_FLIGHT = 4
/** Longest `Authorization` header considered: 8 KiB (bound tokens are about 1 KiB; Go's default header limit is 1 MiB, but nothing this large is a token). */
export const MAX_AUTHORIZATION_HEADER = 8192

/** What the filter needs from the apiserver: a raw POST (a `KubeClient` is one). */
export interface AccessReviewer {
  /** Sends one request and resolves with the decoded response body. */
  request<T = unknown>(spec: RequestSpec): Promise<T>
}

/** The outcome for one request: 200 serve it; 401, 403, 429 or 500 refuse it with `reason` as the body. */
export interface MetricsAuthDecision {
  /** HTTP status to answer with. */
  readonly status: 200 | 401 | 403 | 429 | 500
  /** One line for the response body; never contains the token. */
  readonly reason: string
  /** The authenticated user's name, when the token was valid. */
  readonly user?: string
}

/** Options of {@link MetricsAuthFilter}. */
export interface MetricsAuthFilterOptions {
  /** Time source of the cache. Default: real time. */
  clock?: Clock
  /** Default 60 s ({@link METRICS_AUTH_ALLOWED_TTL_MS}). */
  allowedTtlMs?: number
  /** Default 10 s ({@link METRICS_AUTH_DENIED_TTL_MS}). */
  deniedTtlMs?: number
  /** Default 256 tokens ({@link METRICS_AUTH_CACHE_SIZE}). */
  cacheSize?: number
  /** Default 4 reviews ({@link METRICS_AUTH_MAX_IN_FLIGHT}). */
  maxInFlight?: number
  /** Refusals at debug, review failures at warn; never the token. Default: none. */
  logger?: Logger
}

/**
 * The token of an `Authorization: Bearer <token>` header (scheme case-insensitive, RFC 6750 §2.1), or
 * undefined when the header is absent, another scheme, empty, longer than
 * 8 KiB ({@link MAX_AUTHORIZATION_HEADER}), or holds more than one word.
 */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length > MAX_AUTHORIZATION_HEADER) return undefined
  const m = /^bearer +([^\s]+) *$/i.exec(header)
  return m?.[1]
}

const ALLOWED: MetricsAuthDecision = { status: 200, reason: 'allowed' }
const UNAUTHORIZED: MetricsAuthDecision = { status: 401, reason: 'Unauthorized' }
const BUSY: MetricsAuthDecision = { status: 429, reason: 'too many scrapes under review' }

interface TokenReviewResponse {
  status?: {
    authenticated?: boolean
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }
  }
}

/**
 * Decides whether a scrape may read `/metrics`. Guarantees: the token is sent only to the apiserver
 * and never stored (the cache key is its SHA-256), logged, or echoed in a decision; a review that fails
 * (apiserver unreachable, RBAC missing) answers 500 and is not cached, so the next scrape asks again.
 *
 * @example
 * const filter = new MetricsAuthFilter(client)
 * const d = await filter.decide(req.headers.authorization)
 * if (d.status !== 200) return reply(d.status, d.reason)
 */
export class MetricsAuthFilter {
  readonly #reviewer: AccessReviewer
  readonly #clock: Clock
  readonly #allowedTtl: number
  readonly #deniedTtl: number
  readonly #size: number
  readonly #maxInFlight: number
  readonly #log: Logger
  readonly #cache = new Map<string, { decision: MetricsAuthDecision; expires: number }>()
  #inFlight = 0

  /** `reviewer` is the client whose identity creates the reviews (needs `create` on both kinds). */
  constructor(reviewer: AccessReviewer, options: MetricsAuthFilterOptions = {}) {
    this.#reviewer = reviewer
    this.#clock = options.clock ?? realClock
    this.#allowedTtl = options.allowedTtlMs ?? METRICS_AUTH_ALLOWED_TTL_MS
    this.#deniedTtl = options.deniedTtlMs ?? METRICS_AUTH_DENIED_TTL_MS
    this.#size = options.cacheSize ?? METRICS_AUTH_CACHE_SIZE
    this.#maxInFlight = options.maxInFlight ?? METRICS_AUTH_MAX_IN_FLIGHT
    this.#log = options.logger ?? noopLogger
  }

  /** Decisions currently cached (expired ones are dropped when next looked up or evicted). */
  get cached(): number {
    return this.#cache.size
  }

  /** The decision for a request carrying this `Authorization` header value. Never rejects. */
  async decide(authorization: string | undefined): Promise<MetricsAuthDecision> {
    const token = bearerToken(authorization)
    if (token === undefined) return UNAUTHORIZED
    const key = createHash('sha256').update(token).digest('base64')
    const now = this.#clock.monotonic()
    const hit = this.#cache.get(key)
    if (hit && hit.expires > now) return hit.decision
    this.#cache.delete(key)
    if (this.#inFlight >= this.#maxInFlight) return BUSY
    this.#inFlight++
    let decision: MetricsAuthDecision
    try {
      decision = await this.#review(token)
    } catch (err) {
      // A failed request's message could quote what it sent: the token is cut out, the rest bounded.
      const error = errorMessage(err).split(token).join('[token]').slice(0, 512)
      this.#log.warn('metrics scrape review failed', {
        error,
        code: (err as { code?: unknown } | undefined)?.code,
      })
      return { status: 500, reason: 'review failed; see the operator log' }
    } finally {
      this.#inFlight--
    }
    if (decision.status !== 200) this.#log.debug('metrics scrape refused', { status: decision.status })
    this.#cache.set(key, {
      decision,
      expires: this.#clock.monotonic() + (decision.status === 200 ? this.#allowedTtl : this.#deniedTtl),
    })
    while (this.#cache.size > this.#size) this.#cache.delete(this.#cache.keys().next().value as string)
    return decision
  }

  async #review(token: string): Promise<MetricsAuthDecision> {
    const tr = await this.#reviewer.request<TokenReviewResponse>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    })
    const user = tr?.status?.user
    if (tr?.status?.authenticated !== true || !user?.username) return UNAUTHORIZED
    const sar = await this.#reviewer.request<{ status?: { allowed?: boolean; denied?: boolean } }>({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...definedProps({ uid: user.uid || undefined, groups: user.groups, extra: user.extra }),
          nonResourceAttributes: { path: METRICS_PATH, verb: 'get' },
        },
      },
    })
    // Usernames are apiserver-issued and bounded; quoted so that no character of one can forge a line.
    const who = JSON.stringify(user.username.slice(0, 256))
    return sar?.status?.allowed === true && sar.status.denied !== true
      ? { ...ALLOWED, user: user.username }
      : { status: 403, reason: `Authorization denied for user ${who}`, user: user.username }
  }
}
