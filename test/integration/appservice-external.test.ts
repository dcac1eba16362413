/**
 * The AppService operator's external half on the real control plane, with the database stand-in
 * injecting outages, slow answers, timeouts after the commit and slow provisioning: the circuit
 * breaker opens and closes, each database entry exists exactly once, deletions wait with their
 * finalizer, and a partitioned old leader's write is refused by the fence.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { Lease } from '../../src/core/types.ts'
import { LeaderElector } from '../../src/leader/elector.ts'
import { type LeaseApi, LeaseLock } from '../../src/leader/lease-lock.ts'
import { MetricsRegistry } from '../../src/metrics/metrics-registry.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { databaseApi } from '../../src/operators/appservice/database-api.ts'
import { CircuitBreaker } from '../../src/resilience/circuit-breaker.ts'
import { eventually } from '../../src/testing/eventually.ts'
import type { DatabaseStandin } from '../standin/database-api.ts'
import {
  appServiceGone,
  appServiceSetup,
  appServiceWhere,
  condition,
  runAppServiceController,
} from '../support/appservice.ts'
import { useTestEnv } from '../support/test-env.ts'

/** Small limits so a test sees every phase: 3 failures open it for 1.5 s (doubling, +20 %). */
const LIMITS = { failureThreshold: 3, openMs: 1500, maxOpenMs: 3000 }
/** The client's per-call deadline: short, so a hung answer becomes a timeout quickly. */
const CALL_TIMEOUT_MS = 1000

const { env, setup, defer } = useTestEnv()
let client: KubeClient
let db: DatabaseStandin
let ns: string
let breaker: CircuitBreaker
const registry = new MetricsRegistry()

setup(async () => {
  ;({ client, db, ns } = await appServiceSetup({ env, defer }, 'appsrv-ext'))
  breaker = new CircuitBreaker({ dependency: 'database-api', registry, limits: LIMITS })
  const { stop } = await runAppServiceController(client, {
    namespaces: [ns],
    database: databaseApi(db.url, CALL_TIMEOUT_MS),
    breaker,
  })
  defer(stop)
})

const apps = () => client.resource(APPSERVICES, ns)
const appWhere = (name: string, pred: (a: AppService) => boolean, what: string) =>
  appServiceWhere(apps(), name, pred, what, 90_000)
const withDb = (name: string) =>
  apps().create({
    metadata: { name },
    spec: { image: 'nginx:1.27', database: { enabled: true, class: 'small' } },
  } as AppService)
const keyOf = (a: AppService) => `appsrv-${a.metadata.uid}`
const transitions = (from: string, to: string) =>
  registry
    .counter({
      name: 'edgeop_circuit_breaker_transitions_total',
      help: '',
      labelNames: ['dependency', 'from', 'to'],
    })
    .get({ dependency: 'database-api', from, to })

test('an outage opens the breaker: calls stop, the AppService says so; recovery closes it; one entry', async () => {
  db.down = true
  const created = await withDb('outage')
  const stuck = await appWhere(
    'outage',
    (a) =>
      condition(a, 'Degraded')?.reason === 'ExternalAPIUnavailable' &&
      /circuit breaker (open|half-open)/.test(condition(a, 'Degraded')?.message ?? ''),
    'ExternalAPIUnavailable with the breaker open',
  )
  assert.equal(condition(stuck, 'Degraded')?.status, 'True')
  assert.notEqual(breaker.phase, 'closed')
  // While open only probes go out: one per open period (≥ 1.5 s). Without the breaker the
  // per-item backoff (5 ms doubling) would send about ten in the same 3 s.
  const before = db.requests.length
  await sleep(3000)
  assert.ok(db.requests.length - before <= 3, `requests while open: ${db.requests.length - before}`)
  db.down = false
  await appWhere(
    'outage',
    (a) => condition(a, 'Degraded')?.status === 'False' && condition(a, 'DatabaseReady')?.status === 'True',
    'recovered',
  )
  assert.equal(breaker.phase, 'closed')
  assert.deepEqual(
    db.created.filter((k) => k === keyOf(created)),
    [keyOf(created)],
    'created exactly once',
  )
  assert.ok(transitions('closed', 'open') >= 1)
  assert.ok(transitions('open', 'half-open') >= 1)
  assert.ok(transitions('half-open', 'closed') >= 1)
  assert.match(registry.render(), /^edgeop_circuit_breaker_state\{dependency="database-api"\} 0$/m)
})

test('a create whose answer is lost after the commit (and slow answers) is read back, not repeated', async () => {
  db.slowMs = 200
  db.commitThenHang(1)
  const created = await withDb('hung')
  const key = keyOf(created)
  await appWhere('hung', (a) => condition(a, 'DatabaseReady')?.status === 'True', 'database ready')
  db.slowMs = 0
  assert.deepEqual(
    db.created.filter((k) => k === key),
    [key],
    'created exactly once',
  )
  const calls = db.requests.filter((r) => r.key === key || (r.method === 'POST' && r.status === 201))
  assert.ok(
    db.requests.some((r) => r.method === 'GET' && r.key === key && r.status === 200),
    `read back by key: ${JSON.stringify(calls)}`,
  )
})

test('slow provisioning: the task is recorded, polled, its progress shown, then Ready', async () => {
  db.provisionMs = 4000
  defer(() => {
    db.provisionMs = 0
  })
  await withDb('slowdb')
  const provisioning = await appWhere(
    'slowdb',
    (a) =>
      condition(a, 'DatabaseReady')?.reason === 'DatabaseProvisioning' &&
      a.status?.database?.task !== undefined,
    'provisioning with a task',
  )
  assert.equal(provisioning.status?.database?.phase, 'Provisioning')
  assert.match(condition(provisioning, 'DatabaseReady')?.message ?? '', /^task task-\d+/)
  const ready = await appWhere(
    'slowdb',
    (a) => condition(a, 'DatabaseReady')?.status === 'True',
    'provisioned',
  )
  assert.deepEqual(ready.status?.database, { phase: 'Ready', task: provisioning.status?.database?.task })
})

test('a deletion during an outage keeps its finalizer and waits for the breaker; then cleans up', async () => {
  const created = await withDb('leaving')
  const key = keyOf(created)
  await appWhere('leaving', (a) => condition(a, 'DatabaseReady')?.status === 'True', 'database ready')
  db.down = true
  await apps().delete('leaving')
  const waiting = await appWhere(
    'leaving',
    (a) =>
      condition(a, 'Degraded')?.reason === 'ExternalAPIUnavailable' &&
      /circuit breaker/.test(condition(a, 'Degraded')?.message ?? ''),
    'deletion waiting on the breaker',
  )
  assert.ok(waiting.metadata.finalizers?.includes('platform.example.com/database-cleanup'), 'finalizer stays')
  assert.ok(db.entries.has(key))
  db.down = false
  await appServiceGone(apps(), 'leaving')
  assert.equal(db.entries.has(key), false, 'entry removed')
})

test('a partitioned old leader: its late write carries the older leaseTransitions and the fence refuses it', async () => {
  const leases = client.resource<Lease>(CORE_TYPES.leases, ns)
  let partitioned = false
  const cut = <T>(fn: () => Promise<T>) => (partitioned ? Promise.reject(new Error('partitioned')) : fn())
  const partitionable: LeaseApi = {
    get: (n, o) => cut(() => leases.get(n, o)),
    create: (l, o) => cut(() => leases.create(l, o)),
    update: (l, o) => cut(() => leases.update(l, o)),
  }
  const timing = { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300 }
  const elector = (api: LeaseApi, identity: string) =>
    new LeaderElector({ lock: new LeaseLock(api, { namespace: ns, name: 'fence', identity }), ...timing })
  const run = (e: LeaderElector, signal: AbortSignal) =>
    e
      .run(
        {
          onStartedLeading: (s) => new Promise<void>((r) => s.addEventListener('abort', () => r())),
          onStoppedLeading() {},
        },
        signal,
      )
      .catch(() => undefined)
  const stopA = new AbortController()
  const stopB = new AbortController()
  const a = elector(partitionable, 'old')
  const b = elector(leases, 'new')
  const runs = [run(a, stopA.signal)]
  defer(async () => {
    stopA.abort()
    stopB.abort()
    await Promise.all(runs)
  })
  await eventually(() => a.isLeader(), { timeoutMs: 20_000, what: 'the old leader leads' })
  const oldToken = a.fencingToken()!
  const api = databaseApi(db.url)
  await api.create('fenced', { name: 'f', namespace: ns, class: 'small' }, { fencingToken: oldToken })

  partitioned = true
  runs.push(run(b, stopB.signal))
  await eventually(() => b.isLeader(), { timeoutMs: 20_000, what: 'the new leader takes over' })
  const newToken = b.fencingToken()!
  assert.ok(newToken > oldToken, `tokens ${oldToken} → ${newToken}`)
  assert.equal((await leases.get('fence')).spec?.leaseTransitions, newToken)
  await api.create('fenced-2', { name: 'f2', namespace: ns, class: 'small' }, { fencingToken: newToken })

  // The old leader's write, started before it noticed the partition, arrives late (the fence is per entry).
  await assert.rejects(api.remove('fenced-2', { fencingToken: oldToken }), { code: 'EDGEOP_ERR_LEADER' })
  assert.ok(db.entries.has('fenced-2'), 'the refused write changed nothing')
  await api.remove('fenced-2', { fencingToken: newToken })
  await api.remove('fenced', { fencingToken: newToken })
  assert.equal(db.entries.has('fenced'), false)
})
