/**
 * @module client-node peer — `@kubernetes/client-node`'s informer (makeInformer → ListWatch)
 * and CoreV1Api doing the benchmark jobs (see protocol.ts). It has no managedFields stripping
 * and no metadata-only informer, so only `full` mode exists.
 */
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node'
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
if ((job.mode ?? 'full') !== 'full') throw new Error('client-node has only full-object informers')
const kc = new KubeConfig()
kc.loadFromFile(job.kubeconfig)
const api = kc.makeApiClient(CoreV1Api)
const namespace = job.namespace

function informer() {
  return makeInformer<V1Pod>(kc, `/api/v1/namespaces/${namespace}/pods`, () =>
    api.listNamespacedPod({ namespace }),
  )
}

/** `start()` resolves after the list is cached and the watch is open: the informer is synced. */
async function sync(inf: ReturnType<typeof informer>): Promise<number> {
  const t0 = performance.now()
  await inf.start()
  return performance.now() - t0
}

let running: ReturnType<typeof informer> | undefined
switch (job.workload) {
  case 'coldstart': {
    const inf = informer()
    running = inf
    emit('ready')
    const syncMs = await sync(inf)
    emit('synced', { syncMs, count: inf.list().length })
    await waitFor('stop')
    break
  }
  case 'memory': {
    const inf = informer()
    running = inf
    emit('ready', { heap: await settledHeap() })
    if (!(await waitFor('go'))) break
    const syncMs = await sync(inf)
    await settledHeap()
    await sleep(1000)
    emit('settled', { syncMs, count: inf.list().length, heap: await settledHeap() })
    await waitFor('stop')
    break
  }
  case 'watch': {
    const inf = informer()
    running = inf
    const rec = new LatencyRecorder()
    let synced = false
    inf.on('update', (obj) => synced && rec.record(obj))
    const syncMs = await sync(inf)
    synced = true
    emit('synced', { syncMs, count: inf.list().length })
    await waitFor('stop')
    emit('result', { latenciesMs: rec.samples })
    break
  }
  case 'replay': {
    const inf = informer()
    running = inf
    const counter = new EventCounter(job.expect ?? 0)
    inf.on('update', () => counter.hit())
    const syncMs = await sync(inf)
    emit('synced', { syncMs, count: inf.list().length })
    if (!(await waitFor('go'))) break
    counter.arm()
    emit('armed')
    emit('result', await counter.result)
    await waitFor('stop')
    break
  }
  case 'list': {
    emit('ready')
    const timesMs: number[] = []
    let count = 0
    for (let i = 0; i <= (job.iterations ?? 3); i++) {
      const t0 = performance.now()
      const list = await api.listNamespacedPod({ namespace })
      if (i > 0) timesMs.push(performance.now() - t0)
      count = list.items.length
    }
    emit('result', { timesMs, count })
    await waitFor('stop')
    break
  }
  default:
    throw new Error(`unknown workload ${job.workload}`)
}
await running?.stop()
exit()
