import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import {
  type DelayHistogram,
  eventLoopCheck,
  HealthChecks,
  informersCheck,
  leaderCheck,
  monitorEventLoopLag,
  ping,
} from '../../src/health/health-checks.ts'

const q = (s = '') => new URLSearchParams(s)

function checks(): HealthChecks {
  const h = new HealthChecks('readyz')
  h.add('ping', ping)
  h.add('informers', () => {
    throw new Error('configmaps: not synced\n(second line)')
  })
  h.add('async-ok', async () => {})
  return h
}

describe('health check registry', () => {
  test('all passing: 200 "ok"; verbose lists every check and "check passed"', async () => {
    const h = new HealthChecks('healthz')
    h.add('ping', ping)
    h.add('b', async () => {})
    assert.deepEqual(await h.respond('', q()), { status: 200, body: 'ok' })
    assert.deepEqual(await h.respond('', q('verbose')), {
      status: 200,
      body: '[+]ping ok\n[+]b ok\nhealthz check passed\n',
    })
  })

  test('a failure answers 500 listing every check; the reason only with ?verbose, on one line', async () => {
    const h = checks()
    assert.deepEqual(await h.respond('', q()), {
      status: 500,
      body: '[+]ping ok\n[-]informers failed: reason withheld\n[+]async-ok ok\nreadyz check failed\n',
    })
    assert.deepEqual(await h.respond('', q('verbose=1')), {
      status: 500,
      body: '[+]ping ok\n[-]informers failed: configmaps: not synced (second line)\n[+]async-ok ok\nreadyz check failed\n',
    })
  })

  test('?exclude skips checks (repeatable); /<name> runs one; unknown names are 404', async () => {
    const h = checks()
    assert.deepEqual(await h.respond('', q('exclude=informers')), { status: 200, body: 'ok' })
    assert.deepEqual(await h.respond('', q('exclude=informers&exclude=ping&verbose')), {
      status: 200,
      body: '[+]async-ok ok\nreadyz check passed\n',
    })
    assert.deepEqual(await h.respond('/ping', q()), { status: 200, body: 'ok' })
    assert.deepEqual(await h.respond('/informers', q()), {
      status: 500,
      body: 'internal server error: configmaps: not synced (second line)\n',
    })
    assert.equal((await h.respond('/nope', q())).status, 404)
  })

  test('no checks means healthy; names are unique; removal works; thrown non-errors fail', async () => {
    const h = new HealthChecks('healthz')
    assert.deepEqual(await h.respond('', q()), { status: 200, body: 'ok' })
    const remove = h.add('x', () => {
      throw 'plain string'
    })
    assert.throws(
      () => h.add('x', ping),
      (e: { code?: string }) => e.code === 'EDGEOP_ERR_INVALID',
    )
    assert.throws(() => h.add('bad name', ping), /invalid/)
    assert.deepEqual(await h.run(), [{ name: 'x', ok: false, reason: 'plain string' }])
    remove()
    assert.deepEqual(h.names(), [])
  })
})

describe('built-in checks', () => {
  test('event loop: fails only above the threshold', () => {
    let s = 0.2
    const check = eventLoopCheck({ seconds: () => s }, 1000)
    check()
    s = 1.5
    assert.throws(check, /event loop lagged 1\.500s \(limit 1s\)/)
  })

  test('informers: not synced, or watch failing N times in a row, fails with each informer named', () => {
    const health = {
      cms: { synced: true, consecutiveFailures: 0, lastError: undefined as string | undefined },
      secrets: {
        synced: true,
        consecutiveFailures: 2,
        lastError: 'GET /api/v1/secrets: 503' as string | undefined,
      },
    }
    const informers = () => [
      { describe: 'configmaps', health: () => health.cms },
      { describe: 'secrets', health: () => health.secrets },
    ]
    const check = informersCheck(informers, 3)
    check() // two failures in a row are tolerated
    health.secrets.consecutiveFailures = 3
    health.cms.synced = false
    assert.throws(
      check,
      new Error(
        'configmaps: not synced; secrets: 3 watch failures in a row (last error: GET /api/v1/secrets: 503)',
      ),
    )
    health.cms.synced = true
    health.secrets = { synced: true, consecutiveFailures: 0, lastError: undefined }
    check()
  })

  test('informers serving a restored cache snapshot pass, and say so (since when, how old) with ?verbose', async () => {
    const since = Date.UTC(2026, 11, 1, 12, 0, 0)
    let restored: number | undefined = since
    const informers = () => [
      {
        describe: 'nodeconfigs',
        health: () => ({
          synced: restored === undefined,
          syncState: restored === undefined ? 'synced' : 'restored',
          consecutiveFailures: 0,
          lastError: undefined,
          servingFromSnapshotSince: restored,
          snapshotTakenAt: restored && since - 3_600_000,
        }),
      },
    ]
    const readyz = new HealthChecks('/readyz')
    readyz.add('informers', informersCheck(informers, undefined, { now: () => since + 60_000 }))
    assert.deepEqual(await readyz.respond('', new URLSearchParams()), { status: 200, body: 'ok' })
    assert.deepEqual(await readyz.respond('', new URLSearchParams('verbose')), {
      status: 200,
      body: '[+]informers ok: serving from cache snapshot: nodeconfigs restored since 2026-12-01T12:00:00.000Z, snapshot 3660 s old\n/readyz check passed\n',
    })
    restored = undefined // the server confirmed the snapshot
    assert.deepEqual(await readyz.respond('', new URLSearchParams('verbose')), {
      status: 200,
      body: '[+]informers ok\n/readyz check passed\n',
    })
  })

  test('leadership: passes while the elector reports no problem, fails with its error otherwise', () => {
    let problem: Error | undefined
    const check = leaderCheck({ check: () => problem })
    check()
    problem = new Error('leader election: last renewal started 31000 ms ago')
    assert.throws(check, /last renewal started 31000 ms ago/)
  })
})

describe('event-loop lag monitor', () => {
  test('event-loop lag is the worst delay of the current and previous window, minus the resolution', async () => {
    const clock = new ManualClock()
    const h = { max: 0, enabled: false, resets: 0 }
    const histogram: DelayHistogram = {
      get max() {
        return h.max
      },
      enable: () => (h.enabled = true),
      disable: () => (h.enabled = false),
      reset() {
        h.max = 0
        h.resets++
      },
    }
    const lag = monitorEventLoopLag({ clock, histogram, resolutionMs: 20, windowMs: 10_000 })
    assert.equal(h.enabled, true)
    h.max = 520e6 // one 500 ms stall
    assert.equal(lag.seconds(), 0.5)
    await clock.advance(10_000)
    assert.equal(lag.seconds(), 0.5, 'the stall is still reported from the previous window')
    assert.equal(h.resets, 1)
    h.max = 25e6
    assert.equal(lag.seconds(), 0.5)
    await clock.advance(10_000)
    assert.ok(Math.abs(lag.seconds() - 0.005) < 1e-9, 'two windows later only recent lag remains')
    h.max = 0
    await clock.advance(10_000)
    assert.equal(lag.seconds(), 0, 'never negative')
    lag.stop()
    assert.equal(h.enabled, false)
  })

  test('the real monitor sees a blocked event loop', async () => {
    const lag = monitorEventLoopLag({ resolutionMs: 10 })
    await new Promise((r) => setTimeout(r, 30))
    const until = performance.now() + 120
    while (performance.now() < until) {
      // block the loop
    }
    await new Promise((r) => setTimeout(r, 30))
    const s = lag.seconds()
    lag.stop()
    assert.ok(s >= 0.08 && s < 5, `lag ${s}`)
  })
})
