/**
 * @module metrics-auth — who may scrape `/metrics`: the bearer token of each request is authenticated
 * with a `TokenReview` and the user it names is authorized with a `SubjectAccessReview` on a
 * non-resource URL (`get /metrics` to read; `create /debug/parked` to re-arm a parked key), both
 * answered by the apiserver; decisions are cached briefly by token hash (controller-runtime
 * `filters.WithAuthenticationAndAuthorization`).
 *
 * Tokens that were never allowed cannot starve real scrapers: they are reviewed in their own bounded
 * lane, each review has a deadline, and their refusals are cached apart from the allowances.
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

/** A non-resource URL and verb a request needs (a `SubjectAccessReview`'s `nonResourceAttributes`). */
export interface MetricsAccess {
  /** The non-resource URL, e.g. `/metrics`. */
  readonly path: string
  /** The verb, e.g. `get`. */
  readonly verb: string
}

/** What reading `/metrics` and `GET /debug/parked` needs: `get` on `/metrics`, a scraper's grant. */
export const METRICS_ACCESS: MetricsAccess = { path: METRICS_PATH, verb: 'get' }
/**
 * What `POST /debug/parked/<key>/retry` needs: `create` on the non-resource URL `/debug/parked`, the
 * verb kube-rbac-proxy maps a POST to. An action, so a scraper's read grant does not give it; grant it with
 * a ClusterRole rule `nonResourceURLs: [/debug/parked], verbs: [create]`.
 */
export const PARKED_RETRY_ACCESS: MetricsAccess = { path: '/debug/parked', verb: 'create' }
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
 * Most reviews in flight at once, per lane: 4. Reviews go through the operator's own client and its
 * rate limit, so a flood of distinct tokens must not starve the reconcilers; excess requests get 429.
 * Tokens allowed before (whose allowance is cached or has expired) have a lane of their own, so unknown
 * tokens can fill only theirs.
 */
export const METRICS_AUTH_MAX_IN_FLIGHT = 4
/**
 * Longest a review pair may take: 5 s, half of Prometheus's default 10 s `scrape_timeout`, so a hung
 * apiserver answers the scrape 500 in time and frees the review's slot; the review is aborted.
 */
export const METRICS_AUTH_REVIEW_TIMEOUT_MS = 5_000
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
  /** Default 4 reviews per lane ({@link METRICS_AUTH_MAX_IN_FLIGHT}). */
  maxInFlight?: number
  /** Default {@link METRICS_AUTH_REVIEW_TIMEOUT_MS}. */
  reviewTimeoutMs?: number
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
const TIMED_OUT = 'review timed out'

interface TokenReviewResponse {
  status?: {
    authenticated?: boolean
    user?: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> }
  }
}

/**
 * Decides whether a request may read `/metrics` (or do what its {@link MetricsAccess} names).
 * Guarantees: the token is sent only to the apiserver and never stored (the cache key is its SHA-256),
 * logged, or echoed in a decision; a review that fails or passes `reviewTimeoutMs` (apiserver
 * unreachable or hung, RBAC missing) answers 500 and is not cached, so the next request asks again;
 * concurrent requests with one token share one review; a token allowed before is reviewed in a lane of
 * its own and its allowance is never evicted by refusals, so distinct unknown tokens cannot keep it at 429.
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
  readonly #timeout: number
  readonly #log: Logger
  /** Allowances, expired ones kept (until evicted by other allowances) to mark the token as known. */
  readonly #allowed = new Map<string, { decision: MetricsAuthDecision; expires: number }>()
  /** Refusals (401, 403), apart so that a flood of them never evicts an allowance. */
  readonly #denied = new Map<string, { decision: MetricsAuthDecision; expires: number }>()
  readonly #pending = new Map<string, Promise<MetricsAuthDecision>>()
  /** Reviews in flight: of tokens allowed before, of unknown ones. */
  readonly #inFlight = { known: 0, unknown: 0 }

  /** `reviewer` is the client whose identity creates the reviews (needs `create` on both kinds). */
  constructor(reviewer: AccessReviewer, options: MetricsAuthFilterOptions = {}) {
    this.#reviewer = reviewer
    this.#clock = options.clock ?? realClock
    this.#allowedTtl = options.allowedTtlMs ?? METRICS_AUTH_ALLOWED_TTL_MS
    this.#deniedTtl = options.deniedTtlMs ?? METRICS_AUTH_DENIED_TTL_MS
    this.#size = options.cacheSize ?? METRICS_AUTH_CACHE_SIZE
    this.#maxInFlight = options.maxInFlight ?? METRICS_AUTH_MAX_IN_FLIGHT
    this.#timeout = options.reviewTimeoutMs ?? METRICS_AUTH_REVIEW_TIMEOUT_MS
    this.#log = options.logger ?? noopLogger
  }

  /** Decisions currently cached, allowances (expired ones included) and refusals. */
  get cached(): number {
    return this.#allowed.size + this.#denied.size
  }

  /**
   * The decision for a request carrying this `Authorization` header value that needs `access`
   * (default {@link METRICS_ACCESS}). Never rejects.
   */
  async decide(
    authorization: string | undefined,
    access: MetricsAccess = METRICS_ACCESS,
  ): Promise<MetricsAuthDecision> {
    const token = bearerToken(authorization)
    if (token === undefined) return UNAUTHORIZED
    const key = `${access.verb} ${access.path} ${createHash('sha256').update(token).digest('base64')}`
    const now = this.#clock.monotonic()
    const allowed = this.#allowed.get(key)
    if (allowed && allowed.expires > now) return allowed.decision
    const denied = this.#denied.get(key)
    if (denied && denied.expires > now) return denied.decision
    this.#denied.delete(key)
    const pending = this.#pending.get(key)
    if (pending) return pending
    const lane = allowed ? 'known' : 'unknown'
    if (this.#inFlight[lane] >= this.#maxInFlight) return BUSY
    this.#inFlight[lane]++
    const review = this.#decide(token, key, access).finally(() => {
      this.#inFlight[lane]--
      this.#pending.delete(key)
    })
    this.#pending.set(key, review)
    return review
  }

  async #decide(token: string, key: string, access: MetricsAccess): Promise<MetricsAuthDecision> {
    const abort = new AbortController()
    const cancel = this.#clock.setTimer(() => abort.abort(new Error(TIMED_OUT)), this.#timeout)
    let decision: MetricsAuthDecision
    try {
      decision = await Promise.race([
        this.#review(token, access, abort.signal),
        new Promise<never>((_, reject) =>
          abort.signal.addEventListener('abort', () => reject(abort.signal.reason)),
        ),
      ])
    } catch (err) {
      // A failed request's message could quote what it sent: the token is cut out, the rest bounded.
      const error = abort.signal.aborted
        ? TIMED_OUT
        : errorMessage(err).split(token).join('[token]').slice(0, 512)
      this.#log.warn('metrics scrape review failed', {
        error,
        code: (err as { code?: unknown } | undefined)?.code,
      })
      return { status: 500, reason: 'review failed; see the operator log' }
    } finally {
      cancel()
    }
    if (decision.status !== 200) this.#log.debug('metrics scrape refused', { status: decision.status })
    // A token refused now (a revoked grant) is no longer known-good: it leaves the allowances' lane.
    if (decision.status !== 200) this.#allowed.delete(key)
    const cache = decision.status === 200 ? this.#allowed : this.#denied
    cache.delete(key)
    cache.set(key, {
      decision,
      expires: this.#clock.monotonic() + (decision.status === 200 ? this.#allowedTtl : this.#deniedTtl),
    })
    while (cache.size > this.#size) cache.delete(cache.keys().next().value as string)
    return decision
  }

  async #review(token: string, access: MetricsAccess, signal: AbortSignal): Promise<MetricsAuthDecision> {
    const tr = await this.#reviewer.request<TokenReviewResponse>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      signal,
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
          nonResourceAttributes: { path: access.path, verb: access.verb },
        },
      },
      signal,
    })
    // Usernames are apiserver-issued and bounded; quoted so that no character of one can forge a line.
    const who = JSON.stringify(user.username.slice(0, 256))
    return sar?.status?.allowed === true && sar.status.denied !== true
      ? { ...ALLOWED, user: user.username }
      : { status: 403, reason: `Authorization denied for user ${who}`, user: user.username }
  }
}
