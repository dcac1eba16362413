/**
 * The Manager with a fake client, an in-memory Lease lock, fake process monitors and a manual clock:
 * what the constructor starts (nothing), the stop order, a lost lease, a stop before sync, and the
 * metrics wiring of `add`. The same paths against a real control plane: test/integration/startup,
 * leader and readme-example.
 */
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { EventHandler } from '../../src/cache/listener.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { Controller } from '../../src/controller/controller.ts'
import type { ControllerOptions } from '../../src/controller/controller-options.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { EdgeopError } from '../../src/core/errors.ts'
import { type LogFields, type Logger, noopLogger } from '../../src/core/log.ts'
import type { KubeList, KubeObject } from '../../src/core/types.ts'
import { Manager } from '../../src/manager/manager.ts'
import type { ManagerOptions } from '../../src/manager/manager-options.ts'
import { FAST, FakeLeaseStore, FakeLock, runFor } from '../leader/support.ts'
import { FakeStream, list } from '../support/fake-lister-watcher.ts'
import { until } from '../support/http-stub.ts'

const cm = (name: string): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion: '1', uid: `uid-${name}` },
})

/** A client whose collections list `items` (or hang until aborted) and watch forever; records what happens. */
function fakeClient(events: string[], options: { items?: KubeObject[]; listHangs?: boolean } = {}) {
  const requests: string[] = []
  const client = {
    resource(type: { resource: string }, namespace?: string) {
      requests.push(`resource ${type.resource}`)
      return {
        type,
        namespace,
        list: ({ signal }: { signal: AbortSignal }): Promise<KubeList> => {
          requests.push('list')
          if (!options.listHangs) return Promise.resolve(list('10', ...(options.items ?? [])))
          return new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              events.push('informers stopped')
              reject(new EdgeopError('EDGEOP_ERR_ABORTED', 'aborted'))
            }),
          )
        },
        openWatch: async ({ signal }: { signal: AbortSignal }) => {
          requests.push('watch')
          const stream = new FakeStream()
          signal.addEventListener('abort', () => {
            events.push('informers stopped')
            stream.close()
          })
          return stream
        },
      }
    },
    mapper: { mapping: async () => ({}) },
  } as unknown as KubeClient
  return { client, requests }
}

/** Fake monitors that record when they start and stop. */
function fakeMonitors(events: string[]) {
  return {
    eventLoopLag: () => {
      events.push('event-loop monitor started')
      return { seconds: () => 0, stop: () => void events.push('event-loop monitor stopped') }
    },
    heapAfterGc: () => {
      events.push('heap monitor started')
      return { bytes: () => undefined, count: 0, stop: () => void events.push('heap monitor stopped') }
    },
  }
}

/** A logger that keeps the fields of every info line by message. */
function infoLogger(): Logger & { info: Logger['info']; lines: Map<string, LogFields | undefined> } {
  const lines = new Map<string, LogFields | undefined>()
  const make = (): Logger => ({ ...noopLogger, info: (m, f) => void lines.set(m, f), child: () => make() })
  return Object.assign(make(), { lines })
}

function setup(
  events: string[],
  extra: Partial<ManagerOptions> & { items?: KubeObject[]; listHangs?: boolean; leader?: boolean } = {},
) {
  const clock = new ManualClock()
  const fake = fakeClient(events, extra)
  const store = new FakeLeaseStore()
  const lock = new FakeLock(store, 'me', clock)
  const logger = infoLogger()
  const manager = new Manager({
    client: fake.client,
    clock,
    logger,
    metricsBindAddress: '0',
    healthProbeBindAddress: '127.0.0.1:0',
    monitors: fakeMonitors(events),
    ...(extra.leader === false ? {} : { leaderElection: { name: 'lease', namespace: 'ns', lock, ...FAST } }),
    ...extra,
  })
  return { clock, manager, lock, store, logger, requests: fake.requests }
}

/** A controller on the manager's informer for ConfigMaps. */
function configMapController(
  manager: Manager,
  reconcile: ControllerOptions['reconcile'],
  name = 'mirror',
): ControllerOptions {
  const source = manager.factory.informer({ type: CORE_TYPES.configMaps }, { streaming: 'off' })
  return { name, for: { source, kind: 'ConfigMap', group: '', namespaced: true }, reconcile }
}

describe('Manager', () => {
  test('constructing one starts nothing: no monitor, timer, request, check or metric until run', async () => {
    const events: string[] = []
    const t = setup(events)
    t.manager.add(configMapController(t.manager, async () => undefined))
    assert.deepEqual(events, [])
    assert.equal(t.clock.pending, 0, 'no timer on the clock')
    assert.deepEqual(t.lock.calls, [], 'no Lease request')
    assert.deepEqual(t.requests, ['resource configmaps'], 'a resource client built, nothing sent')
    assert.deepEqual([t.manager.healthz.names(), t.manager.readyz.names()], [[], []])
    const rendered = t.manager.registry.render()
    for (const family of [
      'nodejs_eventloop_lag_seconds',
      'process_resident_memory_bytes',
      'leader_election_',
    ])
      assert.ok(!rendered.includes(family), `${family} registered by the constructor`)
    const ac = new AbortController()
    ac.abort()
    await t.manager.run(ac.signal)
    assert.deepEqual(events.slice(0, 2), ['event-loop monitor started', 'heap monitor started'])
    assert.deepEqual(t.manager.healthz.names(), ['ping', 'event-loop'])
    assert.deepEqual(t.manager.readyz.names(), ['informers', 'leader-election'])
    assert.deepEqual(events.slice(-2), ['event-loop monitor stopped', 'heap monitor stopped'])
    await assert.rejects(t.manager.run(ac.signal), { code: 'EDGEOP_ERR_INVALID' })
  })

  test('stop order: controllers drain, then the Lease is released, informers stop, hooks run, servers close', async () => {
    const events: string[] = []
    const t = setup(events, { items: [cm('a')] })
    let release!: () => void
    t.manager.add(
      configMapController(t.manager, async (r) => {
        events.push(`reconcile ${r.name}`)
        await new Promise<void>((resolve) => (release = resolve))
        events.push('controllers drained')
      }),
    )
    t.lock.intercept = (call) =>
      call.op === 'update' && call.record?.holderIdentity === ''
        ? { type: 'after', effect: () => void events.push('lease released') }
        : undefined
    const probes = () => {
      const address = t.logger.lines.get('serving')?.probes as string
      return fetch(`http://${address}/healthz`).then((r) => r.status)
    }
    t.manager.onStop(async () => {
      events.push(`stop hook (probes answer ${await probes()})`)
    })
    const ac = new AbortController()
    const done = t.manager.run(ac.signal)
    await until(() => events.includes('reconcile a'))
    assert.equal(t.store.record?.holderIdentity, 'me')
    ac.abort()
    release()
    await done
    await assert.rejects(probes(), 'the probe server is closed once run resolves')
    const from = events.indexOf('reconcile a')
    assert.deepEqual(events.slice(from), [
      'reconcile a',
      'controllers drained',
      'lease released',
      'informers stopped',
      'stop hook (probes answer 200)',
      'event-loop monitor stopped',
      'heap monitor stopped',
    ])
  })

  test('a lost lease rejects run with EDGEOP_ERR_LEADER and stops the controllers', async () => {
    const events: string[] = []
    const t = setup(events, { items: [cm('a')] })
    let stopReason: unknown
    t.manager.add(
      configMapController(t.manager, async (_r, ctx) => {
        events.push('reconcile a')
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()))
        stopReason = ctx.signal.reason
      }),
    )
    const ac = new AbortController()
    let error: unknown
    const done = t.manager.run(ac.signal).catch((err: unknown) => {
      error = err
    })
    await until(() => events.includes('reconcile a'))
    t.lock.intercept = (call) =>
      call.op === 'update' ? { type: 'error', error: new Error('apiserver unreachable') } : undefined
    await runFor(t.clock, FAST.renewDeadlineMs + FAST.retryPeriodMs * 2)
    await done
    assert.equal((error as { code?: string }).code, 'EDGEOP_ERR_LEADER')
    assert.equal((stopReason as { code?: string }).code, 'EDGEOP_ERR_LEADER')
    assert.ok(events.includes('informers stopped'))
  })

  test('a signal before the caches sync stops cleanly: no leader election, no reconcile, everything stopped', async () => {
    const events: string[] = []
    const t = setup(events, { listHangs: true })
    const calls: string[] = []
    t.manager.add(configMapController(t.manager, async (r) => void calls.push(r.name)))
    let hooks = 0
    t.manager.onStop(() => void hooks++)
    const ac = new AbortController()
    const done = t.manager.run(ac.signal)
    await until(() => t.requests.includes('list'))
    ac.abort('SIGTERM')
    await done
    assert.deepEqual(calls, [])
    assert.deepEqual(t.lock.calls, [], 'never tried to lead')
    assert.equal(hooks, 1)
    assert.deepEqual(events, [
      'event-loop monitor started',
      'heap monitor started',
      'informers stopped',
      'event-loop monitor stopped',
      'heap monitor stopped',
    ])
  })

  test('add wires reconcile and workqueue metrics into controllers that have none; given hooks win', async () => {
    const events: string[] = []
    const t = setup(events, { leader: false })
    const built = t.manager.add(configMapController(t.manager, async () => undefined, 'built'))
    assert.ok(built instanceof Controller)
    const given = new Controller({
      ...configMapController(t.manager, async () => undefined, 'given'),
      clock: t.clock,
      logger: noopLogger,
      ...t.manager.controllerHooks('given-by-hand'),
    })
    t.manager.add(given)
    const rendered = t.manager.registry.render()
    for (const series of [
      'controller_runtime_reconcile_total{controller="built",result="success"} 0',
      'workqueue_depth{name="built",controller="built"} 0',
      'controller_runtime_reconcile_total{controller="given-by-hand",result="success"} 0',
    ])
      assert.ok(rendered.includes(series), `missing ${series}`)
    assert.ok(!rendered.includes('controller="given"'), 'hooks given by hand are not replaced')
  })
  test('F1: a controller added twice, or a second one of its name, is refused at add with one EDGEOP_ERR_INVALID naming it', async () => {
    const events: string[] = []
    const t = setup(events, { leader: false, items: [cm('a')] })
    const c = t.manager.add(
      configMapController(t.manager, async (r) => void events.push(`reconciled ${r.name}`), 'secretsync'),
    )
    const refused = (again: () => unknown) =>
      assert.throws(again, (err: EdgeopError) => {
        assert.equal(err.code, 'EDGEOP_ERR_INVALID')
        assert.equal(
          err.message,
          `controller "secretsync" is added twice: add it once, by manager.add or in runOperator's controllers`,
        )
        return true
      })
    refused(() => t.manager.add(c))
    refused(() => t.manager.add(configMapController(t.manager, async () => undefined, 'secretsync')))
    assert.ok(t.manager.has(c))
    // Registered once, it runs once: no second run rejecting with "already running".
    const ac = new AbortController()
    const done = t.manager.run(ac.signal)
    await until(() => events.includes('reconciled a'))
    ac.abort()
    await done
    assert.deepEqual(
      events.filter((e) => e.startsWith('reconciled')),
      ['reconciled a'],
    )
  })

  test('a controller that left with its signal frees its name: a member engaged again adds it anew', () => {
    const t = setup([], { leader: false })
    const member = new AbortController()
    const first = t.manager.add(
      configMapController(t.manager, async () => undefined, 'mirror/east'),
      member.signal,
    )
    member.abort()
    assert.ok(!t.manager.has(first))
    const second = t.manager.add(configMapController(t.manager, async () => undefined, 'mirror/east'))
    assert.ok(t.manager.has(second))
  })

  test('a controller added while running starts at once when leading, and stops and leaves when its signal aborts', async () => {
    const events: string[] = []
    const t = setup(events, { items: [cm('a')] })
    const ac = new AbortController()
    const done = t.manager.run(ac.signal)
    t.manager.add(configMapController(t.manager, async () => void events.push('home reconciled')))
    await until(() => t.store.record?.holderIdentity === 'me')
    // A member cluster's controller: its own source, delivering one object as soon as a handler is added.
    const source = {
      describe: 'member configmaps',
      addEventHandler: (h: EventHandler) => {
        h.onAdd?.(cm('b'), true)
        return { hasSynced: () => true, whenSynced: async () => {}, pending: 0, remove() {} }
      },
    }
    const member = new AbortController()
    const c = t.manager.add(
      {
        name: 'mirror/east',
        cluster: 'east',
        for: { source, kind: 'ConfigMap', group: '', namespaced: true },
        reconcile: async (r) => void events.push(`reconciled ${r.cluster}/${r.namespace}/${r.name}`),
      },
      member.signal,
    )
    await until(() => events.includes('reconciled east/ns/b'))
    member.abort()
    await until(() => c.queue.shuttingDown())
    ac.abort()
    await done
    assert.ok(
      t.manager.registry
        .render()
        .includes('controller_runtime_reconcile_total{controller="mirror/east",result="success"} 1'),
    )
  })
})
