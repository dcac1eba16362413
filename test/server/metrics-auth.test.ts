import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import {
  bearerToken,
  MAX_AUTHORIZATION_HEADER,
  METRICS_AUTH_ALLOWED_TTL_MS,
  METRICS_AUTH_DENIED_TTL_MS,
  METRICS_AUTH_REVIEW_TIMEOUT_MS,
  MetricsAuthFilter,
  PARKED_RETRY_ACCESS,
} from '../../src/server/metrics-auth.ts'
import type { RequestSpec } from '../../src/transport/request-spec.ts'
import { recordingLogger } from '../support/recording-logger.ts'

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.secret-token-value.sig'

/** A fake apiserver: `users` maps a token to its user, `allowed` lists the users granted GET /metrics. */
function fakeReviewer(users: Record<string, string>, allowed: string[]) {
  const calls: RequestSpec[] = []
  let fail: Error | undefined
  let hold: Promise<void> | undefined
  return {
    calls,
    failWith: (e: Error | undefined) => {
      fail = e
    },
    holdWith: (p: Promise<void> | undefined) => {
      hold = p
    },
    async request<T>(spec: RequestSpec): Promise<T> {
      calls.push(spec)
      if (hold) await hold
      if (fail) throw fail
      const body = spec.body as { spec: { token?: string; user?: string } }
      if (spec.path.endsWith('/tokenreviews')) {
        const user = users[body.spec.token!]
        // The real apiserver echoes spec.token back in its response.
        return {
          spec: { token: body.spec.token },
          status: user
            ? {
                authenticated: true,
                user: { username: user, uid: 'u-1', groups: ['g1', 'system:authenticated'] },
              }
            : { authenticated: false, error: 'invalid bearer token' },
        } as T
      }
      return { status: { allowed: allowed.includes(body.spec.user!) } } as T
    },
  }
}

describe('bearerToken', () => {
  const cases: [string | undefined, string | undefined][] = [
    [`Bearer ${TOKEN}`, TOKEN],
    [`bearer ${TOKEN}`, TOKEN],
    [`BEARER  ${TOKEN} `, TOKEN],
    [undefined, undefined],
    ['', undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    [`Basic ${TOKEN}`, undefined],
    [`Bearer ${TOKEN} extra`, undefined],
    [`Bearer${TOKEN}`, undefined],
    [`Bearer ${'a'.repeat(MAX_AUTHORIZATION_HEADER)}`, undefined],
  ]
  for (const [header, token] of cases) {
    test(`${JSON.stringify(header?.slice(0, 40))} → ${token === undefined ? 'none' : 'the token'}`, () =>
      assert.equal(bearerToken(header), token))
  }
})

describe('MetricsAuthFilter', () => {
  test('no or malformed header: 401 without asking the apiserver', async () => {
    const reviewer = fakeReviewer({}, [])
    const filter = new MetricsAuthFilter(reviewer)
    for (const h of [undefined, 'Basic abc', 'Bearer']) assert.equal((await filter.decide(h)).status, 401)
    assert.equal(reviewer.calls.length, 0)
  })

  test('TokenReview then SubjectAccessReview with the reviewed user on GET /metrics: 200 when allowed', async () => {
    const reviewer = fakeReviewer({ [TOKEN]: 'system:serviceaccount:mon:prometheus' }, [
      'system:serviceaccount:mon:prometheus',
    ])
    const d = await new MetricsAuthFilter(reviewer).decide(`Bearer ${TOKEN}`)
    assert.deepEqual(d, { status: 200, reason: 'allowed', user: 'system:serviceaccount:mon:prometheus' })
    assert.deepEqual(
      reviewer.calls.map((c) => [c.method, c.path]),
      [
        ['POST', '/apis/authentication.k8s.io/v1/tokenreviews'],
        ['POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews'],
      ],
    )
    assert.deepEqual(reviewer.calls[0]!.body, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: TOKEN },
    })
    assert.deepEqual(reviewer.calls[1]!.body, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'system:serviceaccount:mon:prometheus',
        uid: 'u-1',
        groups: ['g1', 'system:authenticated'],
        nonResourceAttributes: { path: '/metrics', verb: 'get' },
      },
    })
  })

  test('an invalid token is 401 and never reaches the SubjectAccessReview; a user without the grant is 403', async () => {
    const reviewer = fakeReviewer({ good: 'alice' }, [])
    const filter = new MetricsAuthFilter(reviewer)
    assert.equal((await filter.decide('Bearer bad')).status, 401)
    assert.equal(reviewer.calls.length, 1)
    const d = await filter.decide('Bearer good')
    assert.deepEqual(d, { status: 403, reason: 'Authorization denied for user "alice"', user: 'alice' })
  })

  test('decisions are cached per token: allowed for the allowed TTL, denied for the denied TTL', async () => {
    const clock = new ManualClock()
    const reviewer = fakeReviewer({ a: 'alice', b: 'bob' }, ['alice'])
    const filter = new MetricsAuthFilter(reviewer, { clock })
    const calls = () => reviewer.calls.length
    assert.equal((await filter.decide('Bearer a')).status, 200)
    assert.equal((await filter.decide('Bearer b')).status, 403)
    assert.equal(calls(), 4)
    await clock.advance(METRICS_AUTH_DENIED_TTL_MS - 1)
    await filter.decide('Bearer a')
    await filter.decide('Bearer b')
    assert.equal(calls(), 4, 'both still cached')
    await clock.advance(1)
    assert.equal((await filter.decide('Bearer b')).status, 403)
    assert.equal(calls(), 6, 'the denial expired and was reviewed again')
    await filter.decide('Bearer a')
    assert.equal(calls(), 6, 'the allowance outlives the denial TTL')
    await clock.advance(METRICS_AUTH_ALLOWED_TTL_MS - METRICS_AUTH_DENIED_TTL_MS)
    await filter.decide('Bearer a')
    assert.equal(calls(), 8, 'the allowance expired and was reviewed again')
  })

  test('a revoked grant is seen once the cached allowance expires', async () => {
    const clock = new ManualClock()
    const allowed = ['alice']
    const filter = new MetricsAuthFilter(fakeReviewer({ a: 'alice' }, allowed), { clock })
    assert.equal((await filter.decide('Bearer a')).status, 200)
    allowed.pop()
    assert.equal((await filter.decide('Bearer a')).status, 200)
    await clock.advance(METRICS_AUTH_ALLOWED_TTL_MS)
    assert.equal((await filter.decide('Bearer a')).status, 403)
  })

  test('the cache is bounded: the oldest entry is evicted', async () => {
    const reviewer = fakeReviewer({ a: 'alice', b: 'bob', c: 'carol' }, ['alice', 'bob', 'carol'])
    const filter = new MetricsAuthFilter(reviewer, { cacheSize: 2, clock: new ManualClock() })
    for (const t of ['a', 'b', 'c']) await filter.decide(`Bearer ${t}`)
    assert.equal(filter.cached, 2)
    const before = reviewer.calls.length
    await filter.decide('Bearer c')
    assert.equal(reviewer.calls.length, before, 'c is cached')
    await filter.decide('Bearer a')
    assert.equal(reviewer.calls.length, before + 2, 'a was evicted')
  })

  test('a review failure is 500, not cached, and logged without the token', async () => {
    const log = recordingLogger()
    const reviewer = fakeReviewer({ [TOKEN]: 'alice' }, ['alice'])
    const filter = new MetricsAuthFilter(reviewer, { logger: log, clock: new ManualClock() })
    reviewer.failWith(
      new EdgeopError('EDGEOP_ERR_API', `POST tokenreviews {"spec":{"token":"${TOKEN}"}}: forbidden`, {
        step: 'request',
      }),
    )
    const d = await filter.decide(`Bearer ${TOKEN}`)
    assert.equal(d.status, 500)
    assert.equal(filter.cached, 0)
    assert.equal(log.lines.length, 1)
    assert.match(String(log.lines[0]!.fields?.error), /forbidden/)
    reviewer.failWith(undefined)
    assert.equal((await filter.decide(`Bearer ${TOKEN}`)).status, 200, 'the next scrape asks again')
    const everything = JSON.stringify([log.lines, d])
    assert.ok(!everything.includes(TOKEN), 'the token appears in no log line and no decision')
  })

  test('no token in any log line or decision, across every outcome', async () => {
    const log = recordingLogger()
    const filter = new MetricsAuthFilter(fakeReviewer({ [TOKEN]: 'alice', other: 'bob' }, ['alice']), {
      logger: log,
    })
    const decisions = [
      await filter.decide(`Bearer ${TOKEN}`),
      await filter.decide('Bearer other'),
      await filter.decide(`Bearer ${TOKEN}x`),
    ]
    assert.deepEqual(
      decisions.map((d) => d.status),
      [200, 403, 401],
    )
    assert.ok(log.lines.length > 0)
    const everything = JSON.stringify([log.lines, decisions])
    for (const secret of [TOKEN, 'other'].map((t) => `Bearer ${t}`).concat(TOKEN))
      assert.ok(!everything.includes(secret), secret)
  })

  test('at most maxInFlight reviews at once: the excess is 429 without a review', async () => {
    const reviewer = fakeReviewer({ a: 'alice', b: 'bob' }, ['alice', 'bob'])
    let release!: () => void
    reviewer.holdWith(new Promise<void>((r) => (release = r)))
    const filter = new MetricsAuthFilter(reviewer, { maxInFlight: 1 })
    const first = filter.decide('Bearer a')
    assert.equal((await filter.decide('Bearer b')).status, 429)
    release()
    assert.equal((await first).status, 200)
    assert.equal(reviewer.calls.length, 2, 'only a was reviewed')
  })
})

describe('D20: bogus tokens cannot starve real scrapers', () => {
  /** An apiserver that knows `good` (granted) and hangs forever on every other token's TokenReview. */
  function hangingReviewer() {
    const tokens: string[] = []
    return {
      tokens,
      async request<T>(spec: RequestSpec): Promise<T> {
        const body = spec.body as { spec: { token?: string } }
        if (spec.path.endsWith('/tokenreviews')) {
          tokens.push(body.spec.token!)
          if (body.spec.token !== 'good') return new Promise<T>(() => {})
          return { status: { authenticated: true, user: { username: 'prometheus' } } } as T
        }
        return { status: { allowed: true } } as T
      },
    }
  }

  test('D20: distinct bogus tokens whose reviews hang do not keep a known scraper at 429', async () => {
    const clock = new ManualClock()
    const reviewer = hangingReviewer()
    const filter = new MetricsAuthFilter(reviewer, { clock, maxInFlight: 2 })
    assert.equal((await filter.decide('Bearer good')).status, 200)
    await clock.advance(METRICS_AUTH_ALLOWED_TTL_MS + 1)
    const bogus = [filter.decide('Bearer bogus-1'), filter.decide('Bearer bogus-2')]
    assert.equal((await filter.decide('Bearer bogus-3')).status, 429, 'the unknown lane is full')
    assert.equal(
      (await filter.decide('Bearer good')).status,
      200,
      'the known scraper is reviewed in its own lane',
    )
    await clock.advance(METRICS_AUTH_REVIEW_TIMEOUT_MS)
    assert.deepEqual(
      (await Promise.all(bogus)).map((d) => d.status),
      [500, 500],
    )
  })

  test('D20: a review that hangs answers 500 once reviewTimeoutMs passes, is not cached, and frees its slot', async () => {
    const clock = new ManualClock()
    const log = recordingLogger()
    const filter = new MetricsAuthFilter(hangingReviewer(), {
      clock,
      maxInFlight: 1,
      reviewTimeoutMs: 1000,
      logger: log,
    })
    const hung = filter.decide('Bearer slow')
    assert.equal((await filter.decide('Bearer other')).status, 429)
    await clock.advance(1000)
    const d = await hung
    assert.equal(d.status, 500)
    assert.equal(filter.cached, 0)
    assert.deepEqual(
      log.lines.map((l) => l.fields?.error),
      ['review timed out'],
    )
    const next = filter.decide('Bearer other')
    await clock.advance(1000)
    assert.equal((await next).status, 500, 'the slot was free again: reviewed, not 429')
  })

  test('D20: refusals of many distinct bogus tokens never evict a cached allowance', async () => {
    const reviewer = fakeReviewer({ good: 'prometheus' }, ['prometheus'])
    const filter = new MetricsAuthFilter(reviewer, { cacheSize: 2 })
    assert.equal((await filter.decide('Bearer good')).status, 200)
    for (let i = 0; i < 10; i++) assert.equal((await filter.decide(`Bearer bogus-${i}`)).status, 401)
    const calls = reviewer.calls.length
    assert.equal((await filter.decide('Bearer good')).status, 200)
    assert.equal(reviewer.calls.length, calls, 'still cached: no new review')
  })

  test('concurrent requests with one token share one review', async () => {
    const reviewer = fakeReviewer({ a: 'alice' }, ['alice'])
    let release!: () => void
    reviewer.holdWith(new Promise<void>((r) => (release = r)))
    const filter = new MetricsAuthFilter(reviewer, { maxInFlight: 1 })
    const both = [filter.decide('Bearer a'), filter.decide('Bearer a')]
    release()
    assert.deepEqual(
      (await Promise.all(both)).map((d) => d.status),
      [200, 200],
    )
    assert.equal(reviewer.calls.length, 2, 'one TokenReview and one SubjectAccessReview')
  })

  test('D18: a retry needs its own grant: the SubjectAccessReview asks create on /debug/parked, cached apart from get /metrics', async () => {
    const reviewer = fakeReviewer({ a: 'alice' }, ['alice'])
    const filter = new MetricsAuthFilter(reviewer)
    await filter.decide('Bearer a')
    await filter.decide('Bearer a', PARKED_RETRY_ACCESS)
    const sars = reviewer.calls
      .filter((c) => c.path.endsWith('/subjectaccessreviews'))
      .map((c) => (c.body as { spec: { nonResourceAttributes: unknown } }).spec.nonResourceAttributes)
    assert.deepEqual(sars, [
      { path: '/metrics', verb: 'get' },
      { path: '/debug/parked', verb: 'create' },
    ])
  })
})
