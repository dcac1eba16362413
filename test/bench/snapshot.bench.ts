/**
 * @module snapshot.bench — cache snapshots: restart-to-synced and API bytes, warm vs
 * cold, with 10,000 cached ConfigMaps; snapshot bytes per object; bytes written per hour.
 *
 *   node test/bench/snapshot.bench.ts [objects] [rounds]     (default 10,000 objects, 3 rounds)
 *
 * A script, not a test: nothing here is asserted. Part 1 runs on a private real control plane
 * through a fault proxy, whose request log gives the bytes each start received (response bodies,
 * watch streams included). Cold: empty cache directory, the informer lists (streaming list);
 * warm: the snapshot written at the previous shutdown is loaded and the watch resumes from its RV.
 * "synced" is `whenSynced()`; "watching" is the moment the server accepted the watch (phase
 * `watching`), i.e. the restored state is being caught up. 100 ConfigMaps change between rounds.
 * Part 2 drives one informer holding the same objects on a ManualClock with a steady event rate
 * for one simulated hour and counts the snapshot files actually written (rename = new inode).
 */
import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ConfigMap } from '../../src/api/index.ts'
import { InformerFactory } from '../../src/cache/factory.ts'
import { SharedInformer } from '../../src/cache/informer.ts'
import { SNAPSHOT_MIN_INTERVAL_MS, SNAPSHOT_QUIET_MS } from '../../src/cache/snapshot-schedule.ts'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import { loadClusterConfig } from '../../src/config/load.ts'
import { ManualClock } from '../../src/core/clock.ts'
import { getTestEnv } from '../controlplane/env.ts'
import { FakeStream, list, scripted } from '../support/fake-lister-watcher.ts'
import { adminClient } from '../support/kube.ts'

const N = Number(process.argv[2] ?? 10_000)
const ROUNDS = Number(process.argv[3] ?? 3)
const NS = `edgeop-bench-snapshot-${N}`
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const configMap = (i: number, rev = 0): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `cm-${i}`, namespace: NS, labels: { app: 'bench', shard: String(i % 16) } },
  data: { 'app.properties': `threads=${(i % 8) + 1}\nlevel=info\nrev=${rev}\n`, owner: `team-${i % 5}` },
})

const env = await getTestEnv()
const admin = adminClient(env, env.server)
const proxy = await env.startFaultProxy()
const kubeconfig = await env.writeKubeconfig({ server: proxy.url })
const dir = await mkdtemp(join(tmpdir(), 'edgeop-bench-snapshot-'))

await admin
  .resource(CORE_TYPES.namespaces)
  .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })
  .catch(() => {})
const cms = admin.resource(CORE_TYPES.configMaps, NS)
const existing = (await cms.list({ limit: 1 })).metadata?.remainingItemCount ?? 0
if (existing + 1 < N) {
  process.stderr.write(`creating ${N} ConfigMaps in ${NS}…\n`)
  for (let i = 0; i < N; i += 50)
    await Promise.all(
      Array.from({ length: Math.min(50, N - i) }, (_, j) => cms.create(configMap(i + j)).catch(() => {})),
    )
}

interface Start {
  syncedMs: number
  watchingMs: number
  bytes: number
  requests: number
  snapshotBytes: number
}

async function start(snapshots: boolean): Promise<Start> {
  const client = new KubeClient(await loadClusterConfig({ kubeconfig }), { qps: -1 })
  const factory = new InformerFactory(client)
  if (snapshots) factory.persistTo(dir, { tag: 'bench' })
  const informer = factory.informer({ type: CORE_TYPES.configMaps, namespace: NS })
  const from = proxy.requests().at(-1)?.id ?? 0
  const ac = new AbortController()
  const t0 = performance.now()
  factory.start(ac.signal)
  await informer.whenSynced()
  const syncedMs = performance.now() - t0
  while (informer.health().phase !== 'watching') await new Promise((r) => setTimeout(r, 5))
  const watchingMs = performance.now() - t0
  await new Promise((r) => setTimeout(r, 2000)) // let the catch-up events arrive
  ac.abort()
  await factory.stopped()
  await client.close()
  const reqs = proxy.requests((r) => r.id > from)
  let snapshotBytes = 0
  if (snapshots)
    for (const f of await readdir(dir))
      if (f.endsWith('.snapshot')) snapshotBytes = (await stat(join(dir, f))).size
  return {
    syncedMs,
    watchingMs,
    bytes: reqs.reduce((s, r) => s + r.bytes, 0),
    requests: reqs.length,
    snapshotBytes,
  }
}

const cold: Start[] = []
const warm: Start[] = []
let rev = 1
for (let round = 0; round < ROUNDS; round++) {
  await rm(dir, { recursive: true, force: true })
  await mkdir(dir)
  cold.push(await start(true)) // cold: nothing on disk; writes the snapshot at shutdown
  for (let i = 0; i < 100; i++) await cms.update(configMap((i * 97) % N, rev))
  rev++
  warm.push(await start(true))
}
const snapshotBytes = median(cold.map((c) => c.snapshotBytes))

// Part 2: bytes written per hour at a steady event rate, on a ManualClock (one simulated hour).
async function perHour(eventsPerSecond: number): Promise<{ writes: number; bytes: number }> {
  const objects = Array.from({ length: N }, (_, i) => ({
    ...configMap(i),
    metadata: { ...configMap(i).metadata, resourceVersion: String(i + 1) },
  }))
  const stream = new FakeStream()
  const clock = new ManualClock()
  const path = join(dir, `rate-${eventsPerSecond}.snapshot`)
  const informer = new SharedInformer(scripted([list(String(N), ...objects)], [stream]), {
    streaming: 'off',
    clock,
    snapshot: {
      path,
      identity: {
        resource: '/v1/configmaps',
        namespace: NS,
        labelSelector: '',
        fieldSelector: '',
        metadataOnly: false,
        tag: 'bench',
      },
    },
  })
  const ac = new AbortController()
  const done = informer.run(ac.signal)
  await informer.whenSynced()
  let writes = 0
  let bytes = 0
  let ino = 0
  const step = 1000 / eventsPerSecond
  let rv = N + 1
  for (let t = 0; t < 3_600_000; t += step) {
    const i = rv % N
    stream.push({
      type: 'MODIFIED',
      object: { ...objects[i]!, metadata: { ...objects[i]!.metadata, resourceVersion: String(rv++) } },
    })
    await new Promise((r) => setImmediate(r))
    await clock.advance(step)
    if (clock.pending === 0) await new Promise((r) => setTimeout(r, 20)) // a write in flight
    const s = await stat(path).catch(() => undefined)
    if (s && s.ino !== ino) {
      ino = s.ino
      writes++
      bytes += s.size
    }
  }
  ac.abort()
  await done
  return { writes, bytes }
}
const rates = [1, 10]
const hourly = []
for (const r of rates) hourly.push({ rate: r, ...(await perHour(r)) })

const ms = (x: number): string => `${Math.round(x)} ms`
const kb = (x: number): string => `${(x / 1024).toFixed(0)} KiB`
const row = (name: string, xs: Start[]): string =>
  `| ${name} | ${ms(median(xs.map((x) => x.syncedMs)))} | ${ms(median(xs.map((x) => x.watchingMs)))} | ${kb(median(xs.map((x) => x.bytes)))} | ${median(xs.map((x) => x.requests))} |`
process.stdout.write(
  [
    `\n${N} ConfigMaps, median of ${ROUNDS} rounds (${new Date().toISOString().slice(0, 10)}, ${process.version}); 100 changed between cold and warm\n`,
    '| start | restart → synced | restart → watching | API bytes received | requests |',
    '| --- | --- | --- | --- | --- |',
    row('cold (list)', cold),
    row('warm (snapshot)', warm),
    '',
    `snapshot on disk: ${kb(snapshotBytes)} for ${N} objects = ${(snapshotBytes / N).toFixed(0)} bytes/object`,
    '',
    `| steady events/s | snapshot writes per hour | bytes written per hour | (quiet ${SNAPSHOT_QUIET_MS / 1000} s, min interval ${SNAPSHOT_MIN_INTERVAL_MS / 60000} min) |`,
    '| --- | --- | --- | --- |',
    ...hourly.map((h) => `| ${h.rate} | ${h.writes} | ${(h.bytes / 1024 / 1024).toFixed(1)} MiB | |`),
    '',
  ].join('\n'),
)
await proxy.close()
await admin.close()
await rm(dir, { recursive: true, force: true })
process.exit(0)
