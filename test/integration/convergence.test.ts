/**
 * Randomized convergence: a writer makes thousands of random create/update/delete
 * operations while the fault proxy injects random faults into the informer's
 * connection. At the end the informer's cache and the state rebuilt from its
 * handler's notifications both equal a fresh list. Seeded: failures reproduce.
 */
import assert from 'node:assert/strict'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { isAlreadyExists, isNotFound } from '../../src/transport/api-error.ts'
import type { FaultAction } from '../controlplane/fault-proxy.ts'
import { serverState, watchInformer } from '../support/informers.ts'
import { adminClient } from '../support/kube.ts'
import { seededRandom } from '../support/random.ts'
import { configMaps, eachStore } from '../support/stores.ts'
import { useTestEnv } from '../support/test-env.ts'

const SEED = Number(process.env.EDGEOP_CONVERGENCE_SEED ?? 20261129)
const OPERATIONS = Number(process.env.EDGEOP_CONVERGENCE_OPS ?? 2000)
const NAMES = 60
const WRITERS = 8

const { env, defer } = useTestEnv()

// Once with the eager store over JSON, once with the compact store over protobuf (the two new paths at once).
eachStore(`the cache converges after ${OPERATIONS} random writes under random faults (seed ${SEED})`, async () => {
  const random = seededRandom(SEED)
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
  const proxy = await env().startFaultProxy()
  const client = adminClient(env(), proxy.url)
  const direct = adminClient(env(), env().server)
  defer(
    () => proxy.close(),
    () => client.close(),
    () => direct.close(),
  )
  const ns = await env().createNamespace('converge')
  const api = direct.resource(CORE_TYPES.configMaps, ns)
  const w = watchInformer(client, configMaps(), ns, {
    minWatchTimeoutSeconds: 5,
    maxWatchTimeoutSeconds: 10,
    idleMarginMs: 2000,
  })
  defer(() => w.stop())
  await w.informer.waitForSync()

  const faults: FaultAction[] = [
    { type: 'status', status: 429, retryAfterSeconds: 0 },
    { type: 'status', status: 503, retryAfterSeconds: 1 },
    { type: 'status', status: 500 },
    { type: 'cut', afterBytes: 300 },
    { type: 'latency', ms: 300 },
    { type: 'drop' },
  ]
  const injected: Record<string, number> = {}
  let writing = true
  let rounds = 0
  const chaos = (async () => {
    // Every fault kind once in order, then random ones: coverage must not depend on how
    // fast the writers happen to finish on a loaded machine.
    while (writing || rounds < faults.length) {
      await new Promise((r) => setTimeout(r, 100 + random() * 400))
      rounds++
      if (rounds > faults.length && random() < 0.3) {
        proxy.dropAll()
        injected.dropAll = (injected.dropAll ?? 0) + 1
      } else {
        const action = rounds <= faults.length ? faults[rounds - 1]! : pick(faults)
        proxy.addFault({
          watch: random() < 0.7 ? true : undefined,
          times: 1 + Math.floor(random() * 3),
          action,
        })
        injected[action.type] = (injected[action.type] ?? 0) + 1
      }
    }
  })()

  let remaining = OPERATIONS
  const counts = { create: 0, update: 0, delete: 0 }
  const writer = async (): Promise<void> => {
    while (remaining-- > 0) {
      const name = `o-${Math.floor(random() * NAMES)}`
      const r = random()
      try {
        if (r < 0.4) {
          await api.create({ metadata: { name }, data: { v: String(remaining) } })
          counts.create++
        } else if (r < 0.75) {
          await api.patch(name, { data: { v: String(remaining) } })
          counts.update++
        } else {
          await api.delete(name)
          counts.delete++
        }
      } catch (err) {
        if (!isNotFound(err) && !isAlreadyExists(err)) throw err
      }
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, writer))
  writing = false
  await chaos
  proxy.clearFaults()

  const expected = await serverState(direct, CORE_TYPES.configMaps, ns)
  const cacheState = () =>
    new Map(
      w.informer.store.list().map((o) => [`${ns}/${o.metadata.name}`, o.metadata.resourceVersion ?? '']),
    )
  const same = (a: Map<string, string>) =>
    JSON.stringify([...a].sort()) === JSON.stringify([...expected].sort())
  await eventually(() => same(cacheState()) && same(w.seen), {
    timeoutMs: 60_000,
    what: 'cache and handler view equal the server',
  })
  assert.ok(counts.create > 100 && counts.delete > 100, JSON.stringify(counts))
  assert.ok(
    faults.every((f) => (injected[f.type] ?? 0) > 0),
    `faults injected: ${JSON.stringify(injected)}`,
  )
  // Every object gone at the end had its deletion delivered: the handler's view (built only
  // from notifications) holds exactly the live keys.
  assert.deepEqual([...w.seen.keys()].sort(), [...expected.keys()].sort())
}, ['eager', 'compact, protobuf'])
