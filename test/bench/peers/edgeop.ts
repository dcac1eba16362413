/**
 * @module edgeop peer — edgeop's informer and client doing the benchmark jobs (see protocol.ts).
 */
import { Agent, request } from 'undici'
import type { Pod } from '../../../src/api/index.ts'
import { type InformerOptions, SharedInformer } from '../../../src/cache/informer.ts'
import { KubeClient } from '../../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../../src/client/resource.ts'
import { POD_V1 } from '../../../src/codec/protobuf/kinds.generated.ts'
import { loadClusterConfig } from '../../../src/config/load.ts'
import { listerWatcher } from '../../../src/watch/lister-watcher.ts'
import {
  EventCounter,
  emit,
  exit,
  type Job,
  LatencyRecorder,
  readJob,
  settledHeap,
  sleep,
  waitFor,
} from './protocol.ts'

const job: Job = readJob()
// As a user would: the kubeconfig file, client-side throttling off (like the other peers).
const config = await loadClusterConfig({ kubeconfig: job.kubeconfig })
const client = new KubeClient(config, { qps: -1 })
// Protobuf is asked for by resource types that carry their protobuf kind (src/codec/content-negotiation.ts).
const pods = client.resource(
  job.wire === 'protobuf' ? { ...CORE_TYPES.pods, protobuf: POD_V1 } : CORE_TYPES.pods,
  job.namespace,
)

/**
 * The job's wire format and store, passed as informer options when the job sets them.
 * A build without those options ignores them; the driver finds out which it honours (lib/capabilities.ts)
 * and runs such rows only then.
 */
const wireOptions = {
  ...(job.wire ? { format: job.wire } : {}),
  ...(job.store ? { store: job.store } : {}),
}

/** The informer for the job's mode; defaults everywhere else (streaming list, freeze on). */
function informer(): SharedInformer<Pod> {
  const mode = job.mode ?? 'strip'
  // As InformerFactory builds it: managedFields skipped by the decoder when stripped, bytes kept for a compact store.
  const strip = mode !== 'full'
  return new SharedInformer(
    listerWatcher(
      pods,
      {
        ...(mode === 'metadata' ? { metadataOnly: true } : {}),
        ...(strip ? { dropManagedFields: true } : {}),
        ...wireOptions,
      } as Parameters<typeof listerWatcher>[1],
      job.store === 'compact' && strip ? { keepBytes: true } : {},
    ),
    { stripManagedFields: strip, ...wireOptions } as InformerOptions<Pod>,
  )
}

async function sync(inf: SharedInformer<Pod>, ac: AbortController): Promise<number> {
  const t0 = performance.now()
  void inf.run(ac.signal)
  await inf.waitForSync(ac.signal)
  return performance.now() - t0
}

const ac = new AbortController()
switch (job.workload) {
  case 'coldstart': {
    const inf = informer()
    emit('ready')
    const syncMs = await sync(inf, ac)
    emit('synced', { syncMs, count: inf.store.size })
    await waitFor('stop')
    break
  }
  case 'memory': {
    const inf = informer()
    emit('ready', { heap: await settledHeap() })
    if (!(await waitFor('go'))) break
    const syncMs = await sync(inf, ac)
    await settledHeap()
    await sleep(1000)
    emit('settled', { syncMs, count: inf.store.size, heap: await settledHeap() })
    await waitFor('stop')
    break
  }
  case 'watch': {
    const inf = informer()
    const rec = new LatencyRecorder()
    let synced = false
    inf.addEventHandler({ onUpdate: (_old, obj) => synced && rec.record(obj) })
    const syncMs = await sync(inf, ac)
    synced = true
    emit('synced', { syncMs, count: inf.store.size })
    await waitFor('stop')
    emit('result', { latenciesMs: rec.samples })
    break
  }
  case 'replay': {
    // Events from the replay server (lib/replay.ts): counted and timed from the driver's `go`.
    const inf = informer()
    const counter = new EventCounter(job.expect ?? 0)
    inf.addEventHandler({
      onUpdate: () => counter.hit(),
      ...(job.handlerReads === 'new' ? { readsOld: 'metadata' as const } : {}),
      ...(job.handlerReads === 'metadata' ? { reads: 'metadata' as const } : {}),
    })
    const syncMs = await sync(inf, ac)
    emit('synced', { syncMs, count: inf.store.size })
    if (!(await waitFor('go'))) break
    counter.arm()
    emit('armed')
    emit('result', await counter.result)
    await waitFor('stop')
    break
  }
  case 'rawread': {
    // The wire floor: a bare undici request whose body is only counted (no decoding).
    const agent = new Agent({ connect: { ca: config.tls.ca, cert: config.tls.cert, key: config.tls.key } })
    const format = job.rawFormat ?? 'json'
    const accept = format === 'protobuf' ? 'application/vnd.kubernetes.protobuf' : 'application/json'
    const query = job.rawStream
      ? '?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true'
      : ''
    const url = `${config.server}/api/v1/namespaces/${job.namespace}/pods${query}`
    const END = Buffer.from('k8s.io/initial-events-end')
    emit('ready')
    const timesMs: number[] = []
    let bytes = 0
    for (let i = 0; i <= (job.iterations ?? 3); i++) {
      const t0 = performance.now()
      const ac2 = new AbortController()
      const res = await request(url, {
        dispatcher: agent,
        signal: ac2.signal,
        headers: { accept: job.rawStream ? `${accept};stream=watch` : accept },
      })
      bytes = 0
      let tail: Buffer = Buffer.alloc(0)
      try {
        for await (const chunk of res.body) {
          const c = chunk as Buffer
          bytes += c.length
          if (job.rawStream) {
            // The bookmark ending the initial events may straddle two chunks.
            if (Buffer.concat([tail, c]).includes(END)) {
              ac2.abort()
              break
            }
            tail = c.subarray(Math.max(0, c.length - END.length))
          }
        }
      } catch (err) {
        if (!ac2.signal.aborted) throw err
      }
      if (i > 0) timesMs.push(performance.now() - t0)
    }
    emit('result', { timesMs, bytes })
    await agent.close()
    await waitFor('stop')
    break
  }
  case 'list': {
    emit('ready')
    const timesMs: number[] = []
    let count = 0
    // `raw`: the floor under any Node client, a bare undici request, body.text() and JSON.parse.
    const agent = job.raw
      ? new Agent({ connect: { ca: config.tls.ca, cert: config.tls.cert, key: config.tls.key } })
      : undefined
    const url = `${config.server}/api/v1/namespaces/${job.namespace}/pods`
    const listOnce = async (): Promise<{ items: unknown[] }> => {
      if (agent === undefined) return pods.list(wireOptions as Parameters<typeof pods.list>[0])
      const res = await request(url, { dispatcher: agent, headers: { accept: 'application/json' } })
      return JSON.parse(await res.body.text()) as { items: unknown[] }
    }
    for (let i = 0; i <= (job.iterations ?? 3); i++) {
      const t0 = performance.now()
      const result = await listOnce()
      if (i > 0) timesMs.push(performance.now() - t0)
      count = result.items.length
    }
    emit('result', { timesMs, count })
    await agent?.close()
    await waitFor('stop')
    break
  }
  default:
    throw new Error(`unknown workload ${job.workload}`)
}
ac.abort()
exit()
