/**
 * The reconcile loop with a fake event source and a manual clock.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { EventHandler, HandlerRegistration } from '../../src/cache/listener.ts'
import { Controller, type ReconcileOutcome } from '../../src/controller/controller.ts'
import type { ControllerOptions } from '../../src/controller/controller-options.ts'
import {
  anyOf,
  generationChanged,
  labelsChanged,
  resourceVersionChanged,
} from '../../src/controller/predicates.ts'
import { type ReconcileRequest, TerminalError } from '../../src/controller/reconciler.ts'
import { clientGoRetryPolicy } from '../../src/controller/retry-policy.ts'
import type { EventSource } from '../../src/controller/watches.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { type LogFields, type Logger, noopLogger } from '../../src/core/log.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { resultLabel } from '../../src/metrics/controller-observer.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { reconcileMetrics } from '../../src/metrics/reconcile-metrics.ts'
import { InMemoryQueueMetrics } from '../../src/queue/memory-metrics.ts'
import { activeSpan, type SpanData } from '../../src/tracing/span.ts'
import { formatTraceparent, TRACEPARENT_ANNOTATION } from '../../src/tracing/trace-context.ts'
import { Tracer } from '../../src/tracing/tracer.ts'
import { until } from '../support/http-stub.ts'

/** Lets the workers take whatever is queued: virtual time moves, and pending callbacks run; nothing sleeps. */
async function idle(clock: ManualClock, ms = 20): Promise<void> {
  await clock.advance(ms)
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
}

class FakeSource implements EventSource {
  readonly describe = 'fake'
  handlers: EventHandler[] = []
  #synced = true
  #waiters: (() => void)[] = []
  get synced(): boolean {
    return this.#synced
  }
  set synced(value: boolean) {
    this.#synced = value
    if (value) for (const wake of this.#waiters.splice(0)) wake()
  }
  addEventHandler(h: EventHandler): HandlerRegistration {
    this.handlers.push(h)
    return {
      hasSynced: () => this.#synced,
      whenSynced: (signal) =>
        this.#synced
          ? Promise.resolve()
          : new Promise<void>((resolve, reject) => {
              this.#waiters.push(resolve)
              signal?.addEventListener('abort', () =>
                reject(new EdgeopError('EDGEOP_ERR_ABORTED', 'aborted', { cause: signal.reason })),
              )
            }),
      pending: 0,
      remove() {},
    }
  }
  add(o: KubeObject) {
    for (const h of this.handlers) h.onAdd?.(o, false)
  }
  update(a: KubeObject, b: KubeObject) {
    for (const h of this.handlers) h.onUpdate?.(a, b)
  }
  delete(o: KubeObject) {
    for (const h of this.handlers) h.onDelete?.(o, { finalStateUnknown: false })
  }
}
const app = (name: string, generation = 1, rv = '1'): KubeObject => ({
  metadata: { namespace: 'ns', name, generation, resourceVersion: rv, uid: `uid-${name}` },
})

function setup(reconcile: ControllerOptions['reconcile'], extra: Partial<ControllerOptions> = {}) {
  const clock = new ManualClock()
  const primary = new FakeSource()
  const outcomes: ReconcileOutcome[] = []
  const ctl = new Controller({
    name: 'test',
    for: { source: primary, kind: 'App', group: 'example.com', namespaced: true, ...(extra.for ?? {}) },
    reconcile,
    clock,
    observer: { onReconcile: (o) => void outcomes.push(resultLabel(o)) },
    logger: noopLogger, // tests that check logging pass their own
    // Exact delays (5, 10, 20 ms…) unless a test picks the classified, jittered default.
    retryPolicy: clientGoRetryPolicy(),
    ...extra,
  })
  const ac = new AbortController()
  const done = ctl.run(ac.signal)
  return { clock, primary, ctl, outcomes, ac, done }
}

test('an error retries with per-item exponential backoff; success forgets the failures', async () => {
  const calls: string[] = []
  let failures = 3
  const t = setup(async (r) => {
    calls.push(r.name)
    if (failures-- > 0) throw new Error('not yet')
  })
  t.primary.add(app('a'))
  await until(() => calls.length === 1)
  for (const [i, delay] of [5, 10, 20].entries()) {
    await until(() => t.clock.pending > 0)
    await t.clock.advance(delay - 1)
    assert.equal(calls.length, i + 1, `not before ${delay} ms`)
    await t.clock.advance(1)
    await until(() => calls.length === i + 2)
  }
  assert.deepEqual(t.outcomes, ['error', 'error', 'error', 'success'])
  assert.equal(t.ctl.queue.numRequeues('ns/a'), 0)
  t.ac.abort()
  await t.done
})

test('requeueAfterMs polls after that long and resets the failure count', async () => {
  const calls: number[] = []
  let n = 0
  const t = setup(async () => {
    calls.push(t.clock.now())
    n++
    if (n === 1) throw new Error('boom')
    if (n === 2) return { requeueAfterMs: 30_000 }
  })
  t.primary.add(app('a'))
  await until(() => calls.length === 1 && t.clock.pending > 0)
  await t.clock.advance(5)
  await until(() => calls.length === 2 && t.clock.pending > 0)
  assert.equal(t.ctl.queue.numRequeues('ns/a'), 0, 'requeueAfter forgets the failure')
  await t.clock.advance(29_999)
  assert.equal(calls.length, 2)
  await t.clock.advance(1)
  await until(() => calls.length === 3)
  assert.deepEqual(t.outcomes, ['error', 'requeue_after', 'success'])
  t.ac.abort()
  await t.done
})

test('a terminal error is not retried until the object changes', async () => {
  const calls: string[] = []
  const t = setup(async (r) => {
    calls.push(r.name)
    if (calls.length === 1) throw new TerminalError('spec.replicas must be >= 0')
  })
  t.primary.add(app('a'))
  await until(() => calls.length === 1)
  await t.clock.advance(3_600_000)
  assert.equal(calls.length, 1, 'no retry storm')
  t.primary.update(app('a', 1), app('a', 2, '2'))
  await until(() => calls.length === 2)
  assert.deepEqual(t.outcomes, ['error', 'success'])
  t.ac.abort()
  await t.done
})

test('a thrown non-Error is contained, counted as a panic, and the worker goes on', async () => {
  const panics: boolean[] = []
  const calls: string[] = []
  const t = setup(
    async (r) => {
      calls.push(r.name)
      if (r.name === 'bad') throw 'a string, not an Error'
    },
    { observer: { onReconcile: (o) => void panics.push(o === 'panic') } },
  )
  t.primary.add(app('bad'))
  t.primary.add(app('good'))
  await until(() => calls.includes('good'))
  assert.deepEqual(panics.slice(0, 2), [true, false])
  t.ac.abort()
  await t.done
})

test('generationChanged drops status-only updates (no hot loop on our own status writes)', async () => {
  const calls: string[] = []
  const t = setup(async (r) => void calls.push(r.name), {
    for: {
      source: new FakeSource(),
      kind: 'App',
      group: 'example.com',
      namespaced: true,
      predicates: [generationChanged],
    },
  })
  const src = (t.ctl as unknown as { _: never }) && (t as { primary: FakeSource }).primary
  void src
  t.ac.abort()
  await t.done
  const clock = new ManualClock()
  const source = new FakeSource()
  const ctl = new Controller({
    name: 'g',
    for: { source, kind: 'App', group: 'example.com', namespaced: true, predicates: [generationChanged] },
    reconcile: async (r) => void calls.push(r.name),
    clock,
  })
  const ac = new AbortController()
  const done = ctl.run(ac.signal)
  source.add(app('a', 1, '1'))
  await until(() => calls.length === 1)
  source.update(app('a', 1, '1'), app('a', 1, '2')) // status write: same generation
  source.update(app('a', 1, '2'), app('a', 1, '3'))
  await idle(clock)
  assert.equal(calls.length, 1)
  source.update(app('a', 1, '3'), app('a', 2, '4')) // spec change
  await until(() => calls.length === 2)
  ac.abort()
  await done
})

test('owned objects enqueue their controlling owner of the primary kind only; an owner change wakes both', async () => {
  const calls: string[] = []
  const clock = new ManualClock()
  const primary = new FakeSource()
  const owned = new FakeSource()
  const ctl = new Controller({
    name: 'o',
    for: { source: primary, kind: 'App', group: 'example.com', namespaced: true },
    owns: [{ source: owned }],
    reconcile: async (r: ReconcileRequest) => void calls.push(r.name),
    clock,
  })
  const ac = new AbortController()
  const done = ctl.run(ac.signal)
  const child = (
    owner: string,
    kind = 'App',
    apiVersion = 'example.com/v1',
    controller = true,
  ): KubeObject => ({
    metadata: {
      namespace: 'ns',
      name: `child-of-${owner}`,
      ownerReferences: [{ apiVersion, kind, name: owner, uid: 'u', controller }],
    },
  })
  owned.add(child('web'))
  owned.add(child('other-kind', 'Deployment', 'apps/v1'))
  owned.add(child('other-group', 'App', 'elsewhere.io/v1'))
  owned.add(child('not-controller', 'App', 'example.com/v1', false))
  owned.update(child('old-owner'), child('new-owner'))
  await until(() => calls.length === 3)
  await idle(clock)
  assert.deepEqual(calls.sort(), ['new-owner', 'old-owner', 'web'])
  ac.abort()
  await done
})

test('one key is never reconciled twice at once; an event during a reconcile runs it again afterwards', async () => {
  let inside = 0
  let maxInside = 0
  const runs = new Map<string, number>()
  const gates: (() => void)[] = []
  const t = setup(
    async (r) => {
      inside++
      maxInside = Math.max(maxInside, inside)
      runs.set(r.name, (runs.get(r.name) ?? 0) + 1)
      if (r.name === 'a') await new Promise<void>((res) => gates.push(res))
      inside--
    },
    { maxConcurrentReconciles: 4 },
  )
  t.primary.add(app('a'))
  await until(() => gates.length === 1)
  t.primary.update(app('a'), app('a', 2, '2')) // while 'a' is being reconciled
  t.primary.update(app('a', 2, '2'), app('a', 3, '3'))
  for (const n of ['b', 'c', 'd']) t.primary.add(app(n))
  await until(() => ['b', 'c', 'd'].every((n) => runs.get(n) === 1))
  assert.equal(runs.get('a'), 1, 'not handed to a second worker')
  gates.shift()!()
  await until(() => runs.get('a') === 2 && gates.length === 1)
  gates.shift()!()
  await until(() => inside === 0)
  assert.equal(runs.get('a'), 2, 'both events collapsed into one more reconcile')
  assert.ok(maxInside >= 2, 'other keys ran in parallel')
  t.ac.abort()
  await t.done
})

test('workers start only after the handlers synced; shutdown drains in-flight reconciles and takes no new work', async () => {
  const calls: string[] = []
  let release!: () => void
  const clock = new ManualClock()
  const source = new FakeSource()
  source.synced = false
  const ctl = new Controller({
    name: 's',
    for: { source, kind: 'App', group: 'example.com', namespaced: true },
    reconcile: async (r, ctx) => {
      calls.push(r.name)
      if (r.name === 'slow') await new Promise<void>((res) => (release = res))
      assert.equal(typeof ctx.reconcileId, 'string')
    },
    clock,
  })
  const ac = new AbortController()
  let finished = false
  const done = ctl.run(ac.signal).then(() => {
    finished = true
  })
  source.add(app('slow'))
  await idle(clock, 150)
  assert.equal(calls.length, 0, 'not before sync')
  source.synced = true
  await until(() => calls.length === 1, 100_000)
  ac.abort()
  source.add(app('late'))
  await idle(clock)
  assert.equal(finished, false, 'waits for the in-flight reconcile')
  release()
  await done
  assert.deepEqual(calls, ['slow'], 'no new work after shutdown began')
})

/** A logger that keeps every error line with its bound fields. */
function recordingLogger(): Logger & { errors: LogFields[] } {
  const errors: LogFields[] = []
  const make = (bound: LogFields): Logger => ({
    debug() {},
    info() {},
    warn() {},
    error: (msg, fields) => void errors.push({ msg, ...bound, ...fields }),
    child: (fields) => make({ ...bound, ...fields }),
  })
  return Object.assign(make({}), { errors })
}

/** Throws from one of two sites, so a test can choose which "distinct error" it raises. */
function failAtSiteA(message: string): never {
  throw new Error(message)
}
function failAtSiteB(message: string): never {
  throw new Error(message)
}

test("a reconciler's exception is logged with its stack once per distinct error per object", async () => {
  const logger = recordingLogger()
  // Per reconcile of object a: the throw site and message, or undefined for success.
  const plan: ([site: 'A' | 'B', message: string] | undefined)[] = [
    ['A', 'first token=abc123'], // stack
    ['A', 'second'], // same site and path, another message: no stack
    ['B', 'third'], // another site: stack
    undefined, // success forgets
    ['B', 'fourth'], // after the success: stack again
  ]
  const t = setup(
    async (r) => {
      if (r.name === 'b') failAtSiteA('other object')
      const step = plan.shift()
      if (step?.[0] === 'A') failAtSiteA(step[1])
      if (step?.[0] === 'B') failAtSiteB(step[1])
    },
    { logger },
  )
  t.primary.add(app('a'))
  await until(() => logger.errors.length === 1)
  for (const [i, delay] of [5, 10, 20].entries()) {
    await until(() => t.clock.pending > 0)
    await t.clock.advance(delay)
    await until(() => t.outcomes.length === i + 2)
  }
  assert.deepEqual(t.outcomes, ['error', 'error', 'error', 'success'])
  t.primary.add(app('a', 2, '2')) // an event: reconcile again
  await until(() => logger.errors.length === 4)
  t.primary.add(app('b'))
  await until(() => logger.errors.length === 5)
  const lines = logger.errors.map((l) => ({
    object: l.object,
    error: l.error,
    site: typeof l.stack === 'string' ? /failAtSite[AB]/.exec(l.stack)?.[0] : undefined,
  }))
  assert.deepEqual(lines, [
    { object: 'ns/a', error: 'first token=abc123', site: 'failAtSiteA' },
    { object: 'ns/a', error: 'second', site: undefined },
    { object: 'ns/a', error: 'third', site: 'failAtSiteB' },
    { object: 'ns/a', error: 'fourth', site: 'failAtSiteB' },
    { object: 'ns/b', error: 'other object', site: 'failAtSiteA' },
  ])
  for (const l of logger.errors) {
    assert.equal(l.msg, 'reconcile failed; will retry')
    if (l.stack === undefined) continue
    // Frames only: the message (which may hold anything the reconciler put in it) is not repeated.
    assert.match(String(l.stack), /^at failAtSite[AB] \(/)
    assert.ok(!String(l.stack).includes(String(l.error)), String(l.stack))
  }
  t.ac.abort()
  await t.done
})

test('a reconcile still failing after reconcileTimeoutMs counts in controller_runtime_reconcile_timeouts_total', async () => {
  const registry = new MetricsRegistry()
  const timeouts = () =>
    registry
      .render()
      .split('\n')
      .filter((l) => l.startsWith('controller_runtime_reconcile_timeouts_total'))
  const reasons: unknown[] = []
  const t = setup(
    (_r, ctx) =>
      new Promise((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => {
          reasons.push(ctx.signal.reason)
          reject(ctx.signal.reason)
        }),
      ),
    { reconcileTimeoutMs: 1000, observer: reconcileMetrics(registry, 'test', 1) },
  )
  t.primary.add(app('a'))
  await until(() => t.ctl.activeWorkers === 1)
  await t.clock.advance(999)
  assert.deepEqual(timeouts(), ['controller_runtime_reconcile_timeouts_total{controller="test"} 0'])
  await t.clock.advance(1)
  await until(() => reasons.length === 1)
  await until(() => t.ctl.activeWorkers === 0)
  assert.deepEqual(timeouts(), ['controller_runtime_reconcile_timeouts_total{controller="test"} 1'])
  assert.equal((reasons[0] as { code?: string }).code, 'EDGEOP_ERR_TIMEOUT')
  t.ac.abort()
  await t.done
})

test('a signal before the handlers synced ends run without reconciling anything', async () => {
  const calls: string[] = []
  const source = new FakeSource()
  source.synced = false
  const ctl = new Controller({
    name: 'early',
    for: { source, kind: 'App', group: 'example.com', namespaced: true },
    reconcile: async (r) => void calls.push(r.name),
    clock: new ManualClock(),
    logger: noopLogger,
  })
  source.add(app('a'))
  const ac = new AbortController()
  const done = ctl.run(ac.signal)
  ac.abort()
  await done
  source.synced = true
  assert.deepEqual(calls, [])
})

test('instrument supplies the hooks the options lack, once, and only before run', async () => {
  const outcomes: string[] = []
  const made: string[] = []
  const given = { onReconcile: (o: string) => void outcomes.push(`given:${o}`) }
  const source = new FakeSource()
  const ctl = new Controller({
    name: 'i',
    for: { source, kind: 'App', group: 'example.com', namespaced: true },
    reconcile: async () => undefined,
    clock: new ManualClock(),
    logger: noopLogger,
    observer: given,
  })
  source.add(app('queued-before-instrument'))
  const sink = new InMemoryQueueMetrics()
  const hooks = {
    observer: () => {
      made.push('observer')
      return { onReconcile: (o: string) => void outcomes.push(`made:${o}`) }
    },
    queueMetrics: () => {
      made.push('queueMetrics')
      return sink
    },
  }
  ctl.instrument(hooks)
  ctl.instrument(hooks)
  assert.deepEqual(made, ['queueMetrics'], 'the given observer wins; each factory runs once')
  assert.equal(sink.depth, 1, 'work queued before instrument is counted')
  const ac = new AbortController()
  const done = ctl.run(ac.signal)
  await until(() => outcomes.length === 1)
  assert.deepEqual(outcomes, ['given:success'])
  assert.throws(() => ctl.instrument(hooks), { code: 'EDGEOP_ERR_INVALID' })
  ac.abort()
  await done
})

test('a member cluster controller puts its cluster into every request and log line; a home one into none', async () => {
  const requests: ReconcileRequest[] = []
  const fields: LogFields[] = []
  const logger = (bound: LogFields): Logger => ({
    ...noopLogger,
    info: () => void fields.push(bound),
    child: (f) => logger({ ...bound, ...f }),
  })
  for (const cluster of ['east', undefined]) {
    const t = setup(async (r) => void requests.push(r), { cluster, logger: logger({}) })
    t.primary.add(app('a'))
    await until(() => requests.length === (cluster ? 1 : 2))
    t.ac.abort()
    await t.done
  }
  assert.deepEqual(requests, [
    { cluster: 'east', namespace: 'ns', name: 'a' },
    { namespace: 'ns', name: 'a' },
  ])
  assert.equal(fields[0]?.cluster, 'east', 'starting workers names the cluster')
  assert.ok(!('cluster' in fields.at(-1)!))
})

/** A logger keeping the fields (bound ones included) of every info line. */
function fieldLogger(lines: LogFields[], bound: LogFields = {}): Logger {
  return {
    ...noopLogger,
    info: (_m, f) => void lines.push({ ...bound, ...f }),
    child: (more) => fieldLogger(lines, { ...bound, ...more }),
  }
}

test('with a tracer: each reconcile is a span with its attributes and result, its log lines carry its IDs, and an annotated write is linked', async () => {
  const exported: SpanData[] = []
  const tracer = new Tracer(async (spans) => void exported.push(...spans))
  const lines: LogFields[] = []
  const seen: (string | undefined)[] = []
  let fail = true
  const t = setup(
    async (_r, ctx) => {
      seen.push(activeSpan()?.context.spanId)
      ctx.log.info('working')
      if (fail) {
        fail = false
        throw new Error('first time')
      }
    },
    { tracer, logger: fieldLogger(lines) },
  )
  const writer = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled: true }
  const annotated = (rv: string, generation = 1): KubeObject => {
    const o = app('a', generation, rv)
    return {
      ...o,
      metadata: { ...o.metadata, annotations: { [TRACEPARENT_ANNOTATION]: formatTraceparent(writer) } },
    }
  }
  t.primary.add(annotated('1'))
  await until(() => t.outcomes.length === 1 && t.clock.pending > 0)
  await t.clock.advance(5)
  await until(() => t.outcomes.length === 2)
  // An event that leaves the annotation as it was is not the writer's: no link.
  t.primary.update(annotated('1'), annotated('2', 2))
  await until(() => t.outcomes.length === 3)
  t.ac.abort()
  await t.done
  await tracer.flush()
  assert.deepEqual(
    exported.map((s) => [s.name, s.attributes['edgeop.object'], s.attributes['edgeop.result'], s.error]),
    [
      ['reconcile test', 'ns/a', 'error', 'first time'],
      ['reconcile test', 'ns/a', 'success', undefined],
      ['reconcile test', 'ns/a', 'success', undefined],
    ],
  )
  assert.deepEqual(
    exported.map((s) => s.links),
    [[writer], [], []],
    'the first reconcile after the write links to it',
  )
  assert.deepEqual(
    seen,
    exported.map((s) => s.context.spanId),
    'the span is active while the reconciler runs',
  )
  const working = lines.filter((l) => l.reconcileID !== undefined)
  assert.equal(working.length, 3)
  for (const [i, s] of exported.entries()) {
    assert.equal(s.attributes['edgeop.controller'], 'test')
    assert.equal(working[i]?.trace_id, s.context.traceId)
    assert.equal(working[i]?.span_id, s.context.spanId)
    assert.equal(working[i]?.reconcileID, s.attributes['edgeop.reconcile_id'])
  }
})

test('without a tracer nothing is active and log lines have no trace fields', async () => {
  const lines: LogFields[] = []
  let active: unknown = 'unset'
  const t = setup(
    async (_r, ctx) => {
      active = activeSpan()
      ctx.log.info('working')
    },
    { logger: fieldLogger(lines) },
  )
  t.primary.add(app('a'))
  await until(() => t.outcomes.length === 1)
  t.ac.abort()
  await t.done
  assert.equal(active, undefined)
  const working = lines.find((l) => l.reconcileID !== undefined)
  assert.ok(working)
  assert.equal('trace_id' in working, false)
})

test('instrument gives its tracer to a controller without one, and not to one with its own', async () => {
  const mine: string[] = []
  const theirs: string[] = []
  const tracer = (into: string[]) => new Tracer(async (s) => void into.push(...s.map((x) => x.name)))
  const own = tracer(mine)
  for (const [name, options] of [
    ['bare', {}],
    ['owned', { tracer: own }],
  ] as const) {
    const source = new FakeSource()
    let ran = false
    const ctl = new Controller({
      name,
      for: { source, kind: 'App', group: 'example.com', namespaced: true },
      reconcile: async () => {
        ran = true
      },
      logger: noopLogger,
      ...options,
    })
    const given = tracer(theirs)
    ctl.instrument({ tracer: given })
    const ac = new AbortController()
    const done = ctl.run(ac.signal)
    source.add(app('a'))
    await until(() => ran)
    ac.abort()
    await done
    await given.flush()
    await own.flush()
  }
  assert.deepEqual(theirs, ['reconcile bare'])
  assert.deepEqual(mine, ['reconcile owned'])
})

test('the controller’s handlers read only metadata while its predicates and key functions do, so a compact store decodes nothing for them', async () => {
  const owned = new FakeSource()
  const mapped = new FakeSource()
  const mappedMeta = new FakeSource()
  const custom = new FakeSource()
  const forSource = new FakeSource()
  const t = setup(async () => {}, {
    for: {
      source: forSource,
      kind: 'App',
      group: 'example.com',
      namespaced: true,
      predicates: [anyOf(generationChanged, labelsChanged)],
    },
    owns: [
      { source: owned, predicates: [resourceVersionChanged] },
      { source: custom, predicates: [{ update: () => true }] },
    ],
    watches: [
      { source: mapped, map: () => [] },
      { source: mappedMeta, map: () => [], reads: 'metadata' },
    ],
  })
  assert.equal(forSource.handlers[0]?.reads, 'metadata', 'the primary key, parking and metadata predicates')
  assert.equal(owned.handlers[0]?.reads, 'metadata', 'owner references are metadata')
  assert.equal(mappedMeta.handlers[0]?.reads, 'metadata', 'a map function that says so')
  assert.equal(custom.handlers[0]?.reads, undefined, 'a predicate that does not say it reads only metadata')
  assert.equal(mapped.handlers[0]?.reads, undefined, 'a map function that does not say so')
  t.ac.abort()
  await t.done
})

test('a controller that reads its parks back from the object (parkedFrom) gets the primary object decoded, since the park is in its status', async () => {
  const forSource = new FakeSource()
  const t = setup(async () => {}, {
    for: { source: forSource, kind: 'App', group: 'example.com', namespaced: true },
    parkedFrom: () => undefined,
  })
  assert.equal(forSource.handlers[0]?.reads, undefined)
  t.ac.abort()
  await t.done
})
