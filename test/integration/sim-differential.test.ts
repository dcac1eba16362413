/**
 * Keeps edgeop/testing's API server model honest: the same seeded sequences of ConfigMap operations
 * against the model and against the real kube-apiserver, compared by status code, by whether each
 * write moved the resourceVersion, by the objects returned, by the watch events and by the final
 * state. Divergences the model accepts are listed in docs/simulation.md and left out here.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CORE_TYPES, type KubeClient, type ResourceClient } from '../../src/client/index.ts'
import { realClock } from '../../src/core/clock.ts'
import type { KubeObject, WatchEvent } from '../../src/core/types.ts'
import { ApiServerModel, Prng } from '../../src/testing/index.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const { env, setup, defer } = useTestEnv()
let real: KubeClient
let ns: string

setup(async () => {
  real = adminClient(env(), env().server)
  defer(() => real.close())
  ns = await env().createNamespace('simdiff')
})

type ConfigMap = KubeObject & { data?: Record<string, string> }
const SEQUENCES = 12
const OPS_PER_SEQUENCE = 40
const NAMES = ['a', 'b', 'c']

/** What an operation's outcome is compared by. */
function outcome(r: ConfigMap | undefined, err: unknown, rvBefore: string | undefined) {
  if (err !== undefined) return { status: (err as { status?: number }).status ?? 'error' }
  return {
    status: 'ok',
    name: r?.metadata?.name,
    data: r?.data,
    finalizers: r?.metadata?.finalizers,
    deleting: r?.metadata?.deletionTimestamp !== undefined,
    moved: rvBefore === undefined ? undefined : r?.metadata?.resourceVersion !== rvBefore,
  }
}

/** One seeded sequence on `cms`; returns the outcomes. Both sides draw the same operations. */
async function run(cms: ResourceClient<ConfigMap>, seed: number, prefix: string): Promise<unknown[]> {
  const random = new Prng(seed)
  const seen = new Map<string, string>() // name → last resourceVersion read
  const out: unknown[] = []
  for (let i = 0; i < OPS_PER_SEQUENCE; i++) {
    const base = random.pick(NAMES)
    const name = `${prefix}-${base}`
    const value = String(random.int(3))
    const op = random.int(9)
    const stale = random.chance(0.3)
    const rv = seen.get(name)
    let r: ConfigMap | undefined
    let err: unknown
    let rvBefore: string | undefined
    try {
      switch (op) {
        case 0:
          r = await cms.create({
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name },
            data: { v: value },
          })
          break
        case 1: {
          const live = await cms.get(name)
          rvBefore = live.metadata.resourceVersion
          const at = stale && rv ? rv : live.metadata.resourceVersion
          r = await cms.update({
            ...live,
            metadata: { ...live.metadata, resourceVersion: at },
            data: { v: value },
          })
          break
        }
        case 2:
          rvBefore = (await cms.get(name)).metadata.resourceVersion
          r = await cms.patch(name, { data: { w: value } })
          break
        case 3:
          rvBefore = (await cms.get(name)).metadata.resourceVersion
          r = await cms.patch(
            name,
            [
              { op: 'test', path: '/metadata/resourceVersion', value: stale && rv ? rv : rvBefore },
              { op: 'add', path: '/data/x', value },
            ],
            'json',
          )
          break
        case 4:
          r = await cms.apply(
            { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { [`m${value}`]: value } },
            { fieldManager: `manager-${random.int(2)}`, force: random.chance(0.5) },
          )
          break
        case 5:
          r = (await cms.delete(name)) as ConfigMap
          break
        case 6:
          rvBefore = (await cms.get(name)).metadata.resourceVersion
          r = await cms.patch(name, {
            metadata: { finalizers: random.chance(0.5) ? ['example.com/hold'] : null },
          })
          break
        case 7:
          r = await cms.get(name)
          break
        default: {
          const page = await cms.list({ limit: 2 })
          out.push({
            op,
            names: page.items.map((o) => o.metadata.name),
            more: page.metadata?.continue !== undefined,
          })
          continue
        }
      }
    } catch (e) {
      err = e
    }
    if (r?.metadata?.resourceVersion) seen.set(name, r.metadata.resourceVersion)
    out.push({ op, name: base, ...outcome(r, err, rvBefore) })
  }
  return out
}

/** How long a watch must stay quiet before its events are taken as complete (wall time: the real server's side). */
const QUIET_MS = 1_500

/** Every event of `cms` from `from` until `count` events arrived or the stream stays quiet for {@link QUIET_MS}. */
async function events(cms: ResourceClient<ConfigMap>, from: string, count: number): Promise<unknown[]> {
  const got: unknown[] = []
  const abort = new AbortController()
  let quiet = setTimeout(() => abort.abort(), QUIET_MS)
  try {
    for await (const e of cms.watch({ resourceVersion: from, signal: abort.signal }) as AsyncIterable<
      WatchEvent<ConfigMap>
    >) {
      clearTimeout(quiet)
      quiet = setTimeout(() => abort.abort(), QUIET_MS)
      if (e.type === 'BOOKMARK') continue
      got.push({ type: e.type, name: e.object.metadata.name?.replace(/^[^-]+-/, ''), data: e.object.data })
      if (got.length >= count) break
    }
  } catch {
    // aborted: the stream stayed quiet
  } finally {
    clearTimeout(quiet)
  }
  return got
}

test('random ConfigMap operations: the model answers as kube-apiserver does', async () => {
  const model = new ApiServerModel(realClock)
  const sim = adminClient(env(), 'https://simulated.invalid', { exchange: model.exchange('diff') })
  defer(() => sim.close())
  const realCms = real.resource<ConfigMap>(CORE_TYPES.configMaps, ns)
  const simCms = sim.resource<ConfigMap>(CORE_TYPES.configMaps, ns)
  for (let seed = 1; seed <= SEQUENCES; seed++) {
    const prefix = `s${seed}`
    const realFrom = (await realCms.list()).metadata?.resourceVersion ?? ''
    const simFrom = (await simCms.list()).metadata?.resourceVersion ?? ''
    const realOut = await run(realCms, seed, prefix)
    const simOut = await run(simCms, seed, prefix)
    assert.deepEqual(simOut, realOut, `seed ${seed}: outcomes differ`)
    const realEvents = await events(realCms, realFrom, Number.POSITIVE_INFINITY)
    const simEvents = await events(simCms, simFrom, realEvents.length)
    assert.deepEqual(simEvents, realEvents, `seed ${seed}: watch events differ`)
  }
  const state = async (c: ResourceClient<ConfigMap>) =>
    (await c.list()).items.map((o) => ({
      name: o.metadata.name,
      data: o.data,
      finalizers: o.metadata.finalizers,
    }))
  assert.deepEqual(await state(simCms), await state(realCms), 'final state differs')
})
