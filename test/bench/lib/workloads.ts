/**
 * @module workloads — the six workloads. Each runs the peers interleaved round by
 * round (the order rotates every round) and returns a {@link WorkloadReport}.
 */
import { execFile, spawn } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { parse as parseYaml } from 'yaml'
import type { CustomResourceDefinition } from '../../../src/api/index.ts'
import type { KubeClient } from '../../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../../src/client/resource.ts'
import { freePort } from '../../support/ports.ts'
import { STAMP_ANNOTATION } from '../peers/protocol.ts'
import type { Capabilities } from './capabilities.ts'
import { type Mode, type Peer, type PeerId, PeerProcess, ROOT } from './peers.ts'
import { sampleProc } from './proc.ts'
import type { WorkloadReport } from './report.ts'
import { median, percentile, type Sample } from './stats.ts'
import { baseVariant, edgeopRow, IMAGE_FLAGS, informerRuns, peerRuns, type Run } from './variants.ts'
import { type ApiTarget, apiGetBody, protobufListItems, protobufManagedFieldsBytes } from './wire.ts'

/** What every workload gets from the driver. */
export interface Ctx {
  client: KubeClient
  kubeconfig: string
  peers: Peer[]
  log(line: string): void
  /** Namespace holding `n` generated Pods. */
  podsNamespace(n: number): Promise<string>
  rounds: number
  /** Which wire-format and store options this build honours. */
  caps: Capabilities
  /** The apiserver, for the driver's own raw requests. */
  target: ApiTarget
  /** The kube-apiserver's pid when this driver can see it (its CPU time is read from /proc). */
  apiserverPid: number | undefined
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** The peers in round `r`'s order (rotated, so no peer always runs first or last). */
export function rotated<T>(xs: readonly T[], r: number): T[] {
  const k = r % Math.max(1, xs.length)
  return [...xs.slice(k), ...xs.slice(0, k)]
}

const count = (n: number): string => `${n.toLocaleString('en')} Pods`

/** The edgeop row ratios are taken against in informer workloads. */
export const baseRow = (ctx: Ctx): string => edgeopRow(baseVariant(ctx.caps))

/** Runs `fn` and turns a failure into a note instead of ending the suite. */
export async function attempt(notes: string[], what: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn()
  } catch (err) {
    notes.push(`**failed**: ${what}: ${(err as Error).message.replace(/\n/g, ' ')}`)
  }
}

// ---------------------------------------------------------------- (1) cold start

export async function coldStart(ctx: Ctx, sizes: number[], idleSeconds: number): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const namespaces = new Map<number, string>()
  for (const n of sizes) namespaces.set(n, await ctx.podsNamespace(n))
  // Every row names its wire format: client-go in JSON and in protobuf (its default), edgeop in each
  // wire format and store the build supports.
  const runs = informerRuns(ctx.peers, ctx.caps, false)
  for (let round = 0; round < ctx.rounds; round++) {
    for (const n of sizes) {
      for (const { peer, row, job } of rotated(runs, round)) {
        const c = count(n)
        await attempt(notes, `${row} with ${c}, round ${round + 1}`, async () => {
          const p = PeerProcess.start(peer, {
            workload: 'coldstart',
            kubeconfig: ctx.kubeconfig,
            namespace: namespaces.get(n),
            expect: n,
            ...job,
          })
          try {
            const ready = await p.next('ready', 60_000)
            const synced = await p.next('synced', 300_000)
            const s = p.sample()
            if (synced.count !== n) notes.push(`${row}: cached ${synced.count} of ${n} Pods at sync`)
            const metrics: Record<string, number> = {
              syncMs: synced.syncMs as number,
              spawnToSyncMs: synced.at - p.spawnedAt,
              loadMs: ready.at - p.spawnedAt,
              peakRssMb: s.peakRssMb,
              cpuSeconds: s.cpuSeconds,
            }
            if (n === 0 && idleSeconds > 0) {
              await sleep(idleSeconds * 1000)
              metrics.idleRssMb = p.sample().rssMb
            }
            samples.push({ case: c, peer: peer.id, row, round, metrics })
          } finally {
            await p.stop()
          }
        })
      }
    }
  }
  return {
    id: 'coldstart',
    title: '1. Cold start to a synced Pod cache',
    method: [
      `A fresh process per run builds a client from the kubeconfig file and a Pod informer on one namespace, with each library's defaults (edgeop strips managedFields and freezes objects; the others cache full objects), then waits for it to sync. Each row names its wire format: client-go runs with its content type set to \`application/json\` and to \`application/vnd.kubernetes.protobuf\` (its typed clients' default); edgeop runs with the informer options \`wire\` and \`store\` set explicitly, in every combination this build honours. Ratios are against ${baseRow(ctx)}. ${ctx.rounds} rounds, rows interleaved.`,
      '"informer start → synced" is timed inside the process; "spawn → synced" adds runtime start and module loading (edgeop and client-node run as one minified ESM bundle each, made with esbuild from the peer script and the library: 0.6 MB and 2.0 MB); peak RSS is VmHWM from /proc at sync; CPU is user+system seconds from /proc at sync.',
      idleSeconds > 0
        ? `With 0 Pods the process then idles ${idleSeconds} s and its RSS is read again (used in workload 6).`
        : '',
    ],
    metrics: [
      { key: 'syncMs', label: 'informer start → synced', unit: 'ms', better: 'lower' },
      { key: 'spawnToSyncMs', label: 'spawn → synced', unit: 'ms', better: 'lower' },
      { key: 'peakRssMb', label: 'peak RSS', unit: 'MB', better: 'lower' },
      { key: 'cpuSeconds', label: 'CPU to sync', unit: 's', better: 'lower', digits: 2 },
    ],
    chartMetric: 'syncMs',
    cases: sizes.map(count),
    baseRow: baseRow(ctx),
    peers: ctx.peers.map((p) => p.id),
    samples,
    notes,
  }
}

// ---------------------------------------------------------------- (2) steady-state watch

interface WriteStats {
  writes: number
  errors: number
  /** How late the writer issued writes behind its schedule (p99, ms). */
  scheduleLagMs: number
}

/** Stamps one Pod after another at `rate` writes/s for `seconds` (in flight at most 64). */
async function writeStamps(
  ctx: Ctx,
  namespace: string,
  names: string[],
  rate: number,
  seconds: number,
): Promise<WriteStats> {
  const pods = ctx.client.resource(CORE_TYPES.pods, namespace)
  const total = Math.round(rate * seconds)
  const t0 = performance.now() + 50
  let inFlight = 0
  let errors = 0
  const lags: number[] = []
  const pending: Promise<void>[] = []
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / rate
    const wait = at - performance.now()
    if (wait > 0) await sleep(wait)
    lags.push(performance.now() - at)
    while (inFlight >= 64) await sleep(1)
    inFlight++
    const stamp = String(Math.round((performance.timeOrigin + performance.now()) * 1000))
    pending.push(
      pods
        .patch(
          names[i % names.length] as string,
          { metadata: { annotations: { [STAMP_ANNOTATION]: stamp } } },
          'merge',
        )
        .then(
          () => {},
          () => void errors++,
        )
        .finally(() => void inFlight--),
    )
  }
  await Promise.all(pending)
  return { writes: total - errors, errors, scheduleLagMs: percentile(lags, 99) }
}

export async function steadyWatch(
  ctx: Ctx,
  opts: { pods: number; rate: number; seconds: number; rounds: number },
): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const ns = await ctx.podsNamespace(opts.pods)
  const names = ((await ctx.client.resource(CORE_TYPES.pods, ns).listMetadata()).items ?? []).map(
    (p) => p.metadata.name as string,
  )
  const caseName = `${opts.rate}/s for ${opts.seconds} s`
  let writerLag = 0
  for (let round = 0; round < opts.rounds; round++) {
    for (const peer of rotated(ctx.peers, round)) {
      await attempt(notes, `${peer.id}, round ${round + 1}`, async () => {
        const p = PeerProcess.start(peer, { workload: 'watch', kubeconfig: ctx.kubeconfig, namespace: ns })
        try {
          await p.next('synced', 120_000)
          await sleep(500)
          const before = p.sample()
          const w = await writeStamps(ctx, ns, names, opts.rate, opts.seconds)
          writerLag = Math.max(writerLag, w.scheduleLagMs)
          if (w.errors) notes.push(`round ${round + 1} (${peer.id}): ${w.errors} writes failed`)
          await sleep(2000) // let the last events arrive
          const after = p.sample()
          p.send('stop')
          const result = await p.next('result', 30_000)
          const lat = result.latenciesMs as number[]
          const cpu = after.cpuSeconds - before.cpuSeconds
          samples.push({
            case: caseName,
            peer: peer.id,
            round,
            metrics: {
              cpuSeconds: cpu,
              cpuMsPer1k: lat.length ? (cpu * 1000 * 1000) / lat.length : Number.NaN,
              delivered: (100 * lat.length) / w.writes,
              p50: median(lat),
              p99: percentile(lat, 99),
              max: Math.max(...lat),
              rssMb: after.rssMb,
              writerLagP99: w.scheduleLagMs,
            },
          })
        } finally {
          await p.stop()
        }
      })
    }
  }
  notes.push(
    `The writer (in the driver process) issued its writes up to ${writerLag.toFixed(1)} ms (p99) behind schedule: when that is large the machine was busy, and tail latencies of that round measure the machine more than the library.`,
  )
  return {
    id: 'watch-live',
    title: '2b. Live watch through the apiserver (write → handler latency)',
    method: [
      `One informer on a namespace of ${opts.pods} Pods; once synced, the driver merge-patches one Pod after another at ${opts.rate} writes/s for ${opts.seconds} s, stamping its wall clock (µs) into the annotation \`${STAMP_ANNOTATION}\` just before each request. The handler's update callback computes write → handler latency; CPU is the watcher process's user+system time from /proc over the write window plus 2 s of drain. ${opts.rounds} round(s), peers interleaved.`,
      'CPU time is read in 10 ms ticks; at low rates it is small and coarse.',
    ],
    metrics: [
      { key: 'cpuSeconds', label: 'CPU', unit: 's', better: 'lower', digits: 2 },
      { key: 'cpuMsPer1k', label: 'CPU per 1,000 events', unit: 'ms', better: 'lower' },
      { key: 'delivered', label: 'events delivered', unit: '% of writes', better: 'higher', digits: 1 },
      { key: 'p50', label: 'latency p50', unit: 'ms', better: 'lower' },
      { key: 'p99', label: 'latency p99', unit: 'ms', better: 'lower' },
      { key: 'max', label: 'latency max', unit: 'ms', better: 'lower' },
      { key: 'rssMb', label: 'RSS at end', unit: 'MB', better: 'lower' },
      { key: 'writerLagP99', label: 'writer behind schedule p99', unit: 'ms', better: 'lower' },
    ],
    chartMetric: 'cpuSeconds',
    cases: [caseName],
    peers: ctx.peers.map((p) => p.id),
    samples,
    notes,
  }
}

// ---------------------------------------------------------------- (3) memory per cached object

const MODE_LABEL: Record<Mode, string> = {
  full: 'full objects',
  strip: 'managedFields stripped',
  metadata: 'metadata only',
}

/**
 * The Pods of `namespace` as the apiserver sends them, per Pod: protobuf and JSON bytes, each whole
 * and without `managedFields` (what heap per cached Pod is compared with).
 */
export async function podWireSizes(ctx: Ctx, namespace: string): Promise<Record<string, number>> {
  const path = `/api/v1/namespaces/${namespace}/pods`
  const pb = protobufListItems(await apiGetBody(ctx.target, path, 'application/vnd.kubernetes.protobuf'))
  const json = JSON.parse((await apiGetBody(ctx.target, path, 'application/json')).toString('utf8')) as {
    items: { metadata: { managedFields?: unknown } }[]
  }
  const n = Math.max(1, pb.length)
  const pbBytes = pb.reduce((a, i) => a + i.length, 0)
  const pbManaged = pb.reduce((a, i) => a + protobufManagedFieldsBytes(i), 0)
  const jsonBytes = json.items.reduce((a, i) => a + Buffer.byteLength(JSON.stringify(i)), 0)
  const jsonStripped = json.items.reduce((a, i) => {
    const { managedFields: _, ...metadata } = i.metadata
    return a + Buffer.byteLength(JSON.stringify({ ...i, metadata }))
  }, 0)
  return {
    pods: pb.length,
    protobufPerPod: pbBytes / n,
    protobufStrippedPerPod: (pbBytes - pbManaged) / n,
    jsonPerPod: jsonBytes / Math.max(1, json.items.length),
    jsonStrippedPerPod: jsonStripped / Math.max(1, json.items.length),
  }
}

export async function memory(ctx: Ctx, pods: number): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const ns = await ctx.podsNamespace(pods)
  let facts: Record<string, number> = {}
  await attempt(notes, "measuring the Pods' wire sizes", async () => {
    facts = await podWireSizes(ctx, ns)
  })
  const runs = (['full', 'strip', 'metadata'] as const).flatMap((mode) =>
    informerRuns(ctx.peers, ctx.caps, true)
      .filter((r) => r.peer.modes.includes(mode))
      .map((r) => ({ ...r, mode })),
  )
  for (let round = 0; round < ctx.rounds; round++) {
    for (const { peer, row, job, mode } of rotated(runs, round)) {
      await attempt(notes, `${row} ${mode}, round ${round + 1}`, async () => {
        const p = PeerProcess.start(peer, {
          workload: 'memory',
          kubeconfig: ctx.kubeconfig,
          namespace: ns,
          mode,
          ...job,
        })
        try {
          const ready = await p.next('ready', 60_000)
          const before = p.sample()
          p.send('go')
          const settled = await p.next('settled', 300_000)
          const after = p.sample()
          const n = settled.count as number
          const metrics: Record<string, number> = {
            rssPerObj: ((after.rssMb - before.rssMb) * 1024 * 1024) / n,
            rssMb: after.rssMb,
            peakRssMb: after.peakRssMb,
            peakOverSteady: after.peakRssMb / after.rssMb,
          }
          if (typeof settled.heap === 'number' && typeof ready.heap === 'number') {
            metrics.heapPerObj = (settled.heap - ready.heap) / n
            metrics.heapMb = settled.heap / 1024 / 1024
          }
          samples.push({ case: MODE_LABEL[mode], peer: peer.id, row, round, metrics })
        } finally {
          await p.stop()
        }
      })
    }
  }
  const size = (k: string): string =>
    facts[k] === undefined ? '?' : Math.round(facts[k]).toLocaleString('en')
  return {
    id: 'memory',
    title: `3. Memory per cached Pod (${count(pods)})`,
    method: [
      `A process builds its client and informer, collects garbage and reports its heap (Node: heapUsed after 4 forced GCs; Go: HeapAlloc after runtime.GC and FreeOSMemory) and the driver reads RSS; then the informer syncs ${count(pods)}, the process collects again, waits 1 s, collects again and reports. Per-object figures are the differences divided by the objects cached. "RSS after" is the steady RSS; "peak RSS" is VmHWM, the peak during sync; "peak ÷ steady" their ratio. ${ctx.rounds} rounds, rows interleaved; ratios against ${baseRow(ctx)}.`,
      `Modes: full objects; managedFields stripped before caching (edgeop's default; client-go and kube-rs via a transform); metadata only (PartialObjectMetadata, also stripped). client-node has neither option. kube-rs reports no heap figure (Rust has no GC heap to read without a custom allocator). Each row names its wire format; edgeop runs at Node's default flags and with the flags its images use (\`${IMAGE_FLAGS.join(' ')}\`, build/node-flags.ts).`,
      `The same Pods on the wire, per Pod (one list of the namespace, measured by the driver): protobuf ${size('protobufPerPod')} B (${size('protobufStrippedPerPod')} B without managedFields), JSON ${size('jsonPerPod')} B (${size('jsonStrippedPerPod')} B without managedFields).`,
    ],
    metrics: [
      { key: 'heapPerObj', label: 'heap per Pod', unit: 'B', better: 'lower' },
      { key: 'rssPerObj', label: 'RSS per Pod', unit: 'B', better: 'lower' },
      { key: 'heapMb', label: 'heap after', unit: 'MB', better: 'lower' },
      { key: 'rssMb', label: 'RSS after (steady)', unit: 'MB', better: 'lower' },
      { key: 'peakRssMb', label: 'peak RSS', unit: 'MB', better: 'lower' },
      { key: 'peakOverSteady', label: 'peak ÷ steady', unit: '', better: 'lower', digits: 2 },
    ],
    chartMetric: 'rssPerObj',
    cases: Object.values(MODE_LABEL),
    baseRow: baseRow(ctx),
    peers: ctx.peers.map((p) => p.id),
    samples,
    notes,
    facts,
  }
}

// ---------------------------------------------------------------- (4) list throughput

/** The row of the bare undici + JSON.parse reader in the list workload (the floor under any Node client). */
export const LIST_FLOOR_ROW = 'bare undici + JSON.parse (JSON)'

export async function listThroughput(ctx: Ctx, pods: number, iterations: number): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const ns = await ctx.podsNamespace(pods)
  const listed = await ctx.client.resource(CORE_TYPES.pods, ns).list()
  const bytes = Buffer.byteLength(JSON.stringify(listed))
  const c = count(pods)
  const edgeopWires = ctx.caps.listProtobuf ? (['json', 'protobuf'] as const) : (['json'] as const)
  const base = edgeopRow({ wire: ctx.caps.listProtobuf ? 'protobuf' : 'json', flags: [] })
  const runs: Run[] = ctx.peers.flatMap((peer): Run[] => {
    if (peer.id === 'edgeop')
      return [
        ...edgeopWires.map((wire) => ({ peer, row: edgeopRow({ wire, flags: [] }), job: { wire } })),
        { peer, row: LIST_FLOOR_ROW, job: { raw: true } },
      ]
    return peerRuns(peer)
  })
  for (let round = 0; round < ctx.rounds; round++) {
    for (const { peer, row, job } of rotated(runs, round)) {
      await attempt(notes, `${row}, round ${round + 1}`, async () => {
        const p = PeerProcess.start(peer, {
          workload: 'list',
          kubeconfig: ctx.kubeconfig,
          namespace: ns,
          iterations,
          ...job,
        })
        try {
          const result = await p.next('result', 600_000)
          const s = p.sample()
          const ms = median(result.timesMs as number[])
          const n = result.count as number
          samples.push({
            case: c,
            peer: peer.id,
            row,
            round,
            metrics: {
              ms,
              objPerSec: n / (ms / 1000),
              mbPerSec: bytes / 1e6 / (ms / 1000),
              peakRssMb: s.peakRssMb,
            },
          })
        } finally {
          await p.stop()
        }
      })
    }
  }
  return {
    id: 'list',
    title: `4. List throughput (one unpaginated list of ${count(pods)})`,
    method: [
      `Each process lists the namespace's ${count(pods)} (${(bytes / 1e6).toFixed(1)} MB of JSON) once to warm up, then ${iterations} times, timing each call from request to decoded objects (edgeop: \`ResourceClient.list\`, with \`wire\` set explicitly; client-node: \`CoreV1Api.listNamespacedPod\`, which also converts to its model classes; client-go: \`Pods(ns).List\`; kube-rs: \`Api::list\`); the process's median is one sample. The apiserver's encoding time is in every number (workload 7 measures it per format). ${ctx.rounds} rounds, rows interleaved; ratios against ${base}.`,
      `MB/s counts JSON bytes in every row (for protobuf rows too, so MB/s compares work done, not bytes moved). Each row names its wire format (client-go with its content type set to \`application/json\` or \`application/vnd.kubernetes.protobuf\`, its typed clients' default). The "${LIST_FLOOR_ROW}" row is the edgeop peer process doing a plain undici request, \`body.text()\` and \`JSON.parse\` with no client code around it: the floor any Node client on JSON starts from.`,
    ],
    metrics: [
      { key: 'ms', label: 'list time', unit: 'ms', better: 'lower' },
      { key: 'objPerSec', label: 'objects/s', unit: '', better: 'higher' },
      { key: 'mbPerSec', label: 'JSON MB/s decoded', unit: 'MB/s', better: 'higher', digits: 1 },
      { key: 'peakRssMb', label: 'peak RSS', unit: 'MB', better: 'lower' },
    ],
    chartMetric: 'objPerSec',
    cases: [c],
    baseRow: base,
    peers: ctx.peers.map((p) => p.id),
    samples,
    notes,
  }
}

// ---------------------------------------------------------------- (5) workqueue

/** queue.bench.ts row title → the Go peer's row id, and the short case name. */
const QUEUE_ROWS: [string, string, string][] = [
  ['add → get → done, serial (work queue)', 'serial', 'serial add→get→done'],
  ['add → get → done, batches of 1,000', 'batched', 'batches of 1,000'],
  ['add → hand-off to a waiting worker → done', 'handoff', 'hand-off to a waiting worker'],
  ['add → get → done, serial (rate-limiting queue)', 'rl-serial', 'rate-limiting queue, serial'],
  ['addRateLimited → get → forget → done', 'add-rate-limited', 'addRateLimited → forget → done'],
]

function runQueueBench(cycles: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(ROOT, 'test/bench/queue.bench.ts'), String(cycles)],
      { cwd: ROOT, maxBuffer: 1 << 20, timeout: 15 * 60_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`queue.bench.ts: ${err.message} ${stderr}`)) : resolve(stdout),
    )
  })
}

export async function workqueue(ctx: Ctx, cycles: number): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  let edgeopOutput = ''
  const peers = ctx.peers.filter((p) => p.queue)
  for (let round = 0; round < ctx.rounds; round++) {
    for (const peer of rotated(peers, round)) {
      await attempt(notes, `${peer.id}, round ${round + 1}`, async () => {
        if (peer.id === 'edgeop') {
          const out = await runQueueBench(cycles)
          edgeopOutput ||= out
          for (const [title, , name] of QUEUE_ROWS) {
            const row = out.split('\n').find((l) => l.startsWith(`| ${title} |`))
            const m = row && /\|\s*([\d.]+) M\/s/.exec(row)
            if (m) samples.push({ case: name, peer: 'edgeop', round, metrics: { mops: Number(m[1]) } })
          }
          return
        }
        const p = PeerProcess.start(peer, { workload: 'queue', cycles })
        try {
          const result = await p.next('result', 15 * 60_000)
          for (const row of result.rows as { id: string; opsPerSec: number }[]) {
            const name = QUEUE_ROWS.find((r) => r[1] === row.id)?.[2]
            if (name)
              samples.push({ case: name, peer: peer.id, round, metrics: { mops: row.opsPerSec / 1e6 } })
          }
          if (round === 0) notes.push(`client-go ran with GOMAXPROCS=${result.gomaxprocs}.`)
        } finally {
          await p.stop()
        }
      })
    }
  }
  const memory = edgeopOutput.slice(edgeopOutput.indexOf('Memory after a burst'))
  return {
    id: 'queue',
    title: '5. Workqueue operations per second',
    method: [
      `edgeop: test/bench/queue.bench.ts run as it is (${cycles.toLocaleString('en')} cycles per row, median of 5 runs after a warm-up, in its own process). client-go: the same cycles on \`workqueue.NewTyped\` / \`NewTypedRateLimitingQueue\` in the Go peer, the same keys, the same median of 5. ${ctx.rounds} rounds, interleaved.`,
      "Hand-off: edgeop's worker is an async function on the one JavaScript thread; client-go's is a goroutine that can run on the second core, and keys the worker has not taken yet coalesce (the rate counts adds). addRateLimited: edgeop steps a manual clock by 1 ms; client-go waits 1 ms of real time per batch of 10,000.",
    ],
    metrics: [{ key: 'mops', label: 'throughput', unit: 'M ops/s', better: 'higher', digits: 2 }],
    chartMetric: 'mops',
    cases: QUEUE_ROWS.map((r) => r[2]),
    peers: peers.map((p) => p.id),
    samples,
    notes,
    ...(memory
      ? { extra: `edgeop's queue memory (from queue.bench.ts, first round):\n\n${memory.trim()}` }
      : {}),
  }
}

// ---------------------------------------------------------------- (6) artifact

function httpStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpGet(url, { timeout: 1000 }, (res) => {
      res.resume()
      resolve(res.statusCode ?? 0)
    })
    req.on('error', () => resolve(0))
    req.on('timeout', () => req.destroy())
  })
}

/**
 * Starts the operator, waits until its /readyz answers 200 (when the arguments name a
 * `{probePort}`), lets it idle, and reads its RSS; or says why it could not.
 */
async function operatorIdleRss(
  command: string,
  template: string[],
  kubeconfig: string,
  idleSeconds: number,
): Promise<{ rssMb: number; peakRssMb: number; readyMs: number } | string> {
  const probePort = await freePort()
  const metricsPort = await freePort()
  const args = template.map((a) =>
    a.replace('{probePort}', String(probePort)).replace('{metricsPort}', String(metricsPort)),
  )
  const t0 = performance.now()
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-2000)
  })
  let exited: string | undefined
  child.on('exit', (code, signal) => {
    exited = `exited with ${signal ?? `code ${code}`}`
  })
  const why = (what: string): string => `${what}: ${stderr.trim().split('\n').slice(-3).join(' / ')}`
  try {
    let readyMs = Number.NaN
    if (template.some((a) => a.includes('{probePort}'))) {
      const deadline = t0 + 60_000
      while (exited === undefined && performance.now() < deadline) {
        if ((await httpStatus(`http://127.0.0.1:${probePort}/readyz`)) === 200) {
          readyMs = performance.now() - t0
          break
        }
        await sleep(50)
      }
      if (exited !== undefined) return why(`${exited} before ready`)
      if (Number.isNaN(readyMs)) return why('/readyz not 200 within 60 s')
    }
    await sleep(idleSeconds * 1000)
    const s = sampleProc(child.pid ?? -1)
    if (exited !== undefined || s === undefined) return why(`${exited ?? 'gone'} while idle`)
    return { rssMb: s.rssMb, peakRssMb: s.peakRssMb, readyMs }
  } finally {
    if (exited === undefined) {
      const gone = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await gone
      clearTimeout(t)
    }
  }
}

export async function artifact(
  ctx: Ctx,
  opts: { operatorArgs: string[]; idleSeconds: number; peerIdle?: WorkloadReport },
): Promise<WorkloadReport> {
  const samples: Sample[] = []
  const notes: string[] = []
  const lines: string[] = ['| item | value |', '|---|---:|']
  const cjs = join(ROOT, 'dist/edgeop.cjs')
  const sea = join(ROOT, 'dist/edgeop')
  const mb = (b: number): string => `${(b / 1e6).toFixed(2)} MB`
  if (existsSync(cjs)) {
    const raw = readFileSync(cjs)
    lines.push(`| dist/edgeop.cjs | ${raw.length.toLocaleString('en')} B (${mb(raw.length)}) |`)
    lines.push(`| dist/edgeop.cjs, gzip -9 | ${gzipSync(raw, { level: 9 }).length.toLocaleString('en')} B |`)
  } else lines.push('| dist/edgeop.cjs | not built (`npm run build`) |')
  if (existsSync(sea)) {
    const size = statSync(sea).size
    lines.push(`| dist/edgeop (single executable) | ${size.toLocaleString('en')} B (${mb(size)}) |`)
  } else lines.push('| dist/edgeop (single executable) | not built (`npm run build:sea`) |')
  lines.push(
    '| client-node 2.0.1 bundle, for reference (peers.md, measured there) | 2,022,772 B; 395,891 B gzip -9 |',
  )

  const targets: [string, string, string[]][] = []
  if (existsSync(cjs)) targets.push(['node dist/edgeop.cjs', process.execPath, [cjs, ...opts.operatorArgs]])
  if (existsSync(sea)) targets.push(['dist/edgeop (SEA)', sea, opts.operatorArgs])
  if (targets.length) await installCrds(ctx, notes)
  for (let round = 0; round < ctx.rounds && targets.length; round++) {
    for (const [name, command, args] of targets) {
      const r = await operatorIdleRss(command, args, ctx.kubeconfig, opts.idleSeconds)
      if (typeof r === 'string') {
        notes.push(`${name} ${opts.operatorArgs.join(' ')}: ${r}`)
        break
      }
      samples.push({
        case: name,
        peer: 'edgeop',
        round,
        metrics: { rssMb: r.rssMb, peakRssMb: r.peakRssMb, readyMs: r.readyMs },
      })
    }
  }
  if (!targets.length) notes.push('Idle RSS of the running operator: not built.')
  // The peers' idle informer processes (workload 1, 0 Pods) for comparison.
  const idleCase = 'informer process, 0 Pods, idle'
  for (const s of opts.peerIdle?.samples ?? []) {
    if (s.case === count(0) && s.metrics.idleRssMb !== undefined)
      samples.push({ case: idleCase, peer: s.peer, round: s.round, metrics: { rssMb: s.metrics.idleRssMb } })
  }
  return {
    id: 'artifact',
    title: '6. Artifact size and idle RSS',
    method: [
      `Sizes of the lead's build outputs when present. Idle RSS: the operator (\`${opts.operatorArgs.join(' ')}\`, KUBECONFIG set, the AppService CRD installed, no AppServices) is started, polled until /readyz answers 200, then left idle ${opts.idleSeconds} s, and its RSS is read from /proc; ${ctx.rounds} rounds. For comparison, the idle RSS of each peer's bare informer process with 0 Pods from workload 1 (edgeop there is the bundled peer script, not the operator).`,
    ],
    metrics: [
      { key: 'rssMb', label: 'idle RSS', unit: 'MB', better: 'lower', digits: 1 },
      { key: 'peakRssMb', label: 'peak RSS', unit: 'MB', better: 'lower', digits: 1 },
      { key: 'readyMs', label: 'start → /readyz 200', unit: 'ms', better: 'lower' },
    ],
    chartMetric: 'rssMb',
    cases: [...targets.map((t) => t[0]), idleCase],
    peers: ['edgeop', 'client-node', 'client-go', 'kube-rs'] satisfies PeerId[],
    samples,
    notes,
    extra: lines.join('\n'),
  }
}

async function installCrds(ctx: Ctx, notes: string[]): Promise<void> {
  const file = join(ROOT, 'deploy/crd.yaml')
  if (!existsSync(file)) return
  try {
    const crd = parseYaml(readFileSync(file, 'utf8')) as CustomResourceDefinition
    await ctx.client
      .resource(CORE_TYPES.customResourceDefinitions)
      .apply(crd, { fieldManager: 'edgeop-bench', force: true })
    await sleep(2000)
  } catch (err) {
    notes.push(`installing deploy/crd.yaml failed: ${(err as Error).message}`)
  }
}
