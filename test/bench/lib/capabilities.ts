/**
 * @module capabilities — which of the wire-format and store informer options this build of edgeop honours, found out
 * by trying them against the replay server (lib/replay.ts), never assumed: options a build does not
 * know are ignored at runtime, so a row claiming protobuf must see protobuf asked for on the wire.
 *
 * - `format: 'protobuf'` on an informer: its list or watch asked for `application/vnd.kubernetes.protobuf`.
 * - `format: 'protobuf'` on `ResourceClient.list`: the list asked for it.
 * - `store: 'compact'`: the informer's store is of another class than the eager store's.
 */
import type { Pod } from '../../../src/api/index.ts'
import { type InformerOptions, SharedInformer } from '../../../src/cache/informer.ts'
import { KubeClient } from '../../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../../src/client/resource.ts'
import { POD_V1 } from '../../../src/codec/protobuf/kinds.generated.ts'
import { loadClusterConfig } from '../../../src/config/load.ts'
import { listerWatcher } from '../../../src/watch/lister-watcher.ts'
import type { ReplayServer } from './replay.ts'

export interface Capabilities {
  informerProtobuf: boolean
  listProtobuf: boolean
  compact: boolean
  /** What was seen, for the report. */
  evidence: string[]
}

/** How long a probe informer may take to sync from the local server. */
const PROBE_SYNC_MS = 30_000

export async function detectCapabilities(server: ReplayServer, namespace: string): Promise<Capabilities> {
  const config = await loadClusterConfig({ kubeconfig: await server.kubeconfig() })
  const client = new KubeClient(config, { qps: -1 })
  const pods = client.resource(CORE_TYPES.pods, namespace)
  // Protobuf is asked for by resource types that carry their protobuf kind.
  const podsProtobuf = client.resource({ ...CORE_TYPES.pods, protobuf: POD_V1 }, namespace)
  const evidence: string[] = []
  const run = async (options: { format?: string; store?: string }): Promise<SharedInformer<Pod>> => {
    server.reset()
    const inf = new SharedInformer<Pod>(
      listerWatcher(
        options.format === 'protobuf' ? podsProtobuf : pods,
        options as Parameters<typeof listerWatcher>[1],
        options.store === 'compact' ? { keepBytes: true } : {},
      ),
      options as InformerOptions<Pod>,
    )
    const ac = new AbortController()
    void inf.run(ac.signal)
    const timer = setTimeout(() => ac.abort(), PROBE_SYNC_MS)
    try {
      await inf.waitForSync(ac.signal)
    } catch {
      evidence.push(`informer ${JSON.stringify(options)} did not sync from the replay server`)
    } finally {
      clearTimeout(timer)
      ac.abort()
    }
    return inf
  }
  const probe = await run({ format: 'protobuf' })
  const informerProtobuf = server.served.some((s) => s.endsWith('protobuf'))
  evidence.push(`informer with format 'protobuf' asked for: ${server.served.join(', ') || 'nothing'}`)
  server.reset()
  try {
    await podsProtobuf.list({ format: 'protobuf' } as Parameters<typeof pods.list>[0])
  } catch (err) {
    evidence.push(`list with format 'protobuf' failed: ${(err as Error).message}`)
  }
  const listProtobuf = server.served.some((s) => s === 'list protobuf')
  evidence.push(`list with wire 'protobuf' asked for: ${server.served.join(', ') || 'nothing'}`)
  const eager = await run({ store: 'eager' })
  const compactInf = await run({ store: 'compact' })
  const compact = Object.getPrototypeOf(compactInf.store) !== Object.getPrototypeOf(eager.store)
  evidence.push(`store 'compact' ${compact ? 'is' : 'is not'} a store of its own class`)
  void probe
  server.reset()
  await client.close()
  return { informerProtobuf, listProtobuf, compact, evidence }
}
