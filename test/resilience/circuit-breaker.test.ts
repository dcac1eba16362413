/**
 * The breaker's driver: it runs or refuses calls, classifies their outcomes and reports phases as
 * metrics. Virtual time only.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError, isEdgeopError } from '../../src/core/errors.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { CircuitBreaker, CircuitOpenError } from '../../src/resilience/circuit-breaker.ts'

const down = () => Promise.reject(new EdgeopError('EDGEOP_ERR_NETWORK', 'unreachable', { retryable: true }))
const up = () => Promise.resolve('ok')

function setup() {
  const clock = new ManualClock(0)
  const registry = new MetricsRegistry()
  const breaker = new CircuitBreaker({
    dependency: 'db',
    registry,
    clock,
    random: () => 0,
    limits: { failureThreshold: 2, openMs: 1000 },
  })
  return { clock, registry, breaker }
}

test('failures open it; while open the call is refused without running, with the time to the probe', async () => {
  const { clock, breaker } = setup()
  for (let i = 0; i < 2; i++) await assert.rejects(breaker.call(down), { code: 'EDGEOP_ERR_NETWORK' })
  assert.equal(breaker.phase, 'open')
  await clock.advance(400)
  let ran = false
  const err = await breaker
    .call(async () => {
      ran = true
    })
    .catch((e: unknown) => e)
  assert.ok(err instanceof CircuitOpenError)
  assert.ok(isEdgeopError(err, 'EDGEOP_ERR_CIRCUIT_OPEN') && err.retryable)
  assert.equal(err.retryAfterMs, 600)
  assert.equal(breaker.retryAfterMs(), 600)
  assert.equal(ran, false)
})

test('the probe after the open period closes it; metrics show every transition once', async () => {
  const { clock, registry, breaker } = setup()
  await breaker.call(down).catch(() => undefined)
  await breaker.call(down).catch(() => undefined)
  await clock.advance(1000)
  assert.equal(breaker.retryAfterMs(), 0)
  assert.equal(await breaker.call(up), 'ok')
  assert.equal(breaker.phase, 'closed')
  const text = registry.render()
  assert.match(text, /^edgeop_circuit_breaker_state\{dependency="db"\} 0$/m)
  for (const [from, to] of [
    ['closed', 'open'],
    ['open', 'half-open'],
    ['half-open', 'closed'],
  ])
    assert.match(
      text,
      new RegExp(
        `^edgeop_circuit_breaker_transitions_total\\{dependency="db",from="${from}",to="${to}"\\} 1$`,
        'm',
      ),
    )
})

test('the gauge says open (1) and half-open (2) while it is', async () => {
  const { clock, registry, breaker } = setup()
  const gauge = () =>
    registry.gauge({ name: 'edgeop_circuit_breaker_state', help: '', labelNames: ['dependency'] })
  assert.equal(gauge().get({ dependency: 'db' }), 0)
  await breaker.call(down).catch(() => undefined)
  await breaker.call(down).catch(() => undefined)
  assert.equal(gauge().get({ dependency: 'db' }), 1)
  await clock.advance(1000)
  let release!: () => void
  const probe = breaker.call(() => new Promise<void>((r) => (release = r)))
  assert.equal(gauge().get({ dependency: 'db' }), 2)
  await assert.rejects(breaker.call(up), CircuitOpenError, 'one probe at a time')
  release()
  await probe
  assert.equal(gauge().get({ dependency: 'db' }), 0)
})

test('a refusal from the dependency (non-retryable) counts as an answer, not a failure', async () => {
  const { breaker } = setup()
  const refused = () => Promise.reject(new EdgeopError('EDGEOP_ERR_LEADER', 'fenced', { retryable: false }))
  for (let i = 0; i < 3; i++) await breaker.call(refused).catch(() => undefined)
  assert.equal(breaker.phase, 'closed')
})

test('a call that fails because its caller aborted is not held against the dependency', async () => {
  const { breaker } = setup()
  const ac = new AbortController()
  ac.abort()
  for (let i = 0; i < 3; i++) await breaker.call(down, ac.signal).catch(() => undefined)
  assert.equal(breaker.phase, 'closed')
})

test('every call is timed by outcome: success, the error code, and EDGEOP_ERR_CIRCUIT_OPEN at 0 s when refused', async () => {
  const { clock, registry, breaker } = setup()
  await breaker.call(async () => {
    await clock.advance(300)
    return 'ok'
  })
  await assert.rejects(breaker.call(() => Promise.reject(new Error('boom'))))
  await assert.rejects(breaker.call(down), { code: 'EDGEOP_ERR_NETWORK' })
  await assert.rejects(breaker.call(up), CircuitOpenError)
  const h = (outcome: string) =>
    registry
      .render()
      .includes(`edgeop_dependency_call_duration_seconds_count{dependency="db",outcome="${outcome}"} 1`)
  for (const o of ['success', 'error', 'EDGEOP_ERR_NETWORK', 'EDGEOP_ERR_CIRCUIT_OPEN']) assert.ok(h(o), o)
  assert.ok(
    registry
      .render()
      .includes(
        'edgeop_dependency_call_duration_seconds_bucket{dependency="db",outcome="success",le="0.5"} 1',
      ),
  )
  assert.ok(
    registry
      .render()
      .includes(
        'edgeop_dependency_call_duration_seconds_bucket{dependency="db",outcome="success",le="0.25"} 0',
      ),
  )
})
