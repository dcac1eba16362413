/**
 * The configmap-mirror controller under `edgeop/testing`'s simulator: no etcd, no kube-apiserver, no
 * Go. Each seed runs 10 virtual minutes, with crashes, partitions, lagging and coalesced watches,
 * throttling and conflicts for the first 8; the copies must be right at every step and complete at
 * the end. A failure prints the one command that replays its seed.
 *
 *     npm run build && node --test examples/simulation/mirror-simulation.test.ts
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { CORE_TYPES, Manager } from 'edgeop'
import { noopLogger, sleep } from 'edgeop/core'
import { expectSimulation, type Invariant, simulationSeeds } from 'edgeop/testing'
import { addMirror, type ConfigMap, MIRROR_LABEL, MIRROR_OF_LABEL } from '../configmap-mirror/mirror.ts'

const NAMES = ['a', 'b', 'c']

/** Safety, after every step: a copy's owner, while it exists, is the original the copy is named after. */
const copiesFollowOriginals: Invariant = {
  name: 'a copy is owned by its original',
  check(cluster) {
    const byUid = new Map(cluster.list<ConfigMap>(CORE_TYPES.configMaps).map((c) => [c.metadata.uid, c]))
    for (const copy of byUid.values()) {
      const of = copy.metadata.labels?.[MIRROR_OF_LABEL]
      const owner = byUid.get(copy.metadata.ownerReferences?.[0]?.uid)
      // An owner already gone: the garbage collector removes the copy a moment later.
      if (of !== undefined && owner && owner.metadata.name !== of)
        return `${copy.metadata.name} is owned by ${owner.metadata.name}`
    }
    return undefined
  },
}

/** Liveness, at the end: every labelled original has an up-to-date copy, and no copy is left without one. */
const converged: Invariant = {
  name: 'every original has its copy with the same data',
  check(cluster) {
    const all = new Map(cluster.list<ConfigMap>(CORE_TYPES.configMaps).map((c) => [c.metadata.name, c]))
    for (const c of all.values()) {
      if (c.metadata.labels?.[MIRROR_LABEL] === 'true') {
        const copy = all.get(`${c.metadata.name}-copy`)
        if (JSON.stringify(copy?.data ?? null) !== JSON.stringify(c.data ?? {}))
          return `${c.metadata.name}-copy is stale`
      }
      const of = c.metadata.labels?.[MIRROR_OF_LABEL]
      if (of !== undefined && all.get(of)?.metadata.labels?.[MIRROR_LABEL] !== 'true')
        return `${c.metadata.name} outlived its original`
    }
    return undefined
  },
}

for (const seed of simulationSeeds(1, 5)) {
  test(`configmap-mirror, seed ${seed}: copies stay right through faults and converge`, async () => {
    const result = await expectSimulation({
      seed,
      durationMs: 10 * 60_000,
      processes: [
        {
          name: 'mirror',
          async run({ client, clock, signal }) {
            const manager = new Manager({
              client,
              clock,
              metricsBindAddress: '0',
              healthProbeBindAddress: '0',
              logger: noopLogger,
            })
            addMirror(manager)
            await manager.run(signal)
          },
        },
      ],
      // The user: labels, edits and deletes a few ConfigMaps for 8 virtual minutes.
      async workload({ client, clock, random }) {
        const configMaps = client.resource<ConfigMap>(CORE_TYPES.configMaps, 'default')
        const end = clock.now() + 8 * 60_000
        while (clock.now() < end) {
          await sleep(1_000 + random.int(10_000), clock)
          const name = random.pick(NAMES)
          const data = { value: String(random.int(100)) }
          await (random.chance(0.2)
            ? configMaps.delete(name)
            : configMaps.apply(
                {
                  apiVersion: 'v1',
                  kind: 'ConfigMap',
                  metadata: { name, labels: { [MIRROR_LABEL]: 'true' } },
                  data,
                },
                { fieldManager: 'user', force: true },
              )
          ).catch(() => {}) // a delete of a ConfigMap that is not there: the next step
        }
      },
      safety: [copiesFollowOriginals],
      liveness: [converged],
    })
    assert.ok(result.requests > 0)
  })
}
