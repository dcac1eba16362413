/**
 * @module fleet-agents — a child process of the fleet benchmark hosting a share of its node agents.
 *
 * Spread over several of these, 5,000 agents no longer share one event loop: each process handles
 * only its own agents' events, as separate nodes would (still on the same two cores). Driven over
 * the IPC channel of `fork()` by test/bench/nodeconfig-fleet.bench.ts:
 *
 * - `{ type: 'start', server, caPem, agents }` starts these agents (each its own KubeClient, so its
 *   own connection and identity, an informer factory and a disk in memory) and answers
 *   `{ type: 'synced', count }` once every agent started so far has synced its caches.
 * - `{ type: 'stop' }` stops every agent, closes its client and answers `{ type: 'stopped' }`.
 *
 * Every {@link PROGRESS_EVERY_MS} it reports `{ type: 'progress', … }`: agents synced, the longest
 * event-loop delay seen, and the handles it holds by kind (a stall shows whether the process was
 * busy, or idle waiting on connections or timers). Credentials arrive over IPC and are never printed.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { InformerFactory } from '../../../src/cache/factory.ts'
import { KubeClient } from '../../../src/client/kube-client.ts'
import type { ClusterConfig } from '../../../src/config/cluster-config.ts'
import { realClock } from '../../../src/core/index.ts'
import { nodeConfigAgent } from '../../../src/operators/nodeconfig/agent.ts'
import { Prng } from '../../../src/testing/index.ts'
import { MemoryNodeFiles } from '../../support/memory-node-files.ts'

/** One agent to start: its node and its identity (a certificate pair, or a bound token). */
export interface FleetAgentSpec {
  node: string
  /** Seed of its disk's generator (the agent's index in the fleet). */
  seed: number
  cert?: { certPem: string; keyPem: string }
  token?: string
}

/** Messages the driver sends. */
export type FleetAgentsCommand =
  | { type: 'start'; server: string; caPem: string; agents: FleetAgentSpec[]; syncTimeoutMs: number }
  | { type: 'stop' }

/** Messages this process answers with. */
export type FleetAgentsReport =
  | { type: 'synced'; count: number }
  | { type: 'failed'; message: string }
  | {
      type: 'progress'
      agents: number
      synced: number
      /** Longest event-loop delay since the last report (ms). */
      maxDelayMs: number
      handles: Record<string, number>
    }
  | { type: 'stopped' }

/** How often the process reports its progress to the driver. */
export const PROGRESS_EVERY_MS = 30_000

/** The client settings of one agent. */
export function identityOf(spec: FleetAgentSpec, caPem: string): Pick<ClusterConfig, 'tls' | 'credentials'> {
  if (spec.cert)
    return { tls: { ca: caPem, cert: spec.cert.certPem, key: spec.cert.keyPem, insecureSkipVerify: false } }
  const token = spec.token ?? ''
  return {
    tls: { ca: caPem, insecureSkipVerify: false },
    credentials: { describe: `ServiceAccount ${spec.node}`, get: async () => ({ token }) },
  }
}

/** Counts the handles and requests keeping this process busy, by kind. */
function handleCounts(): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1
  return counts
}

interface Agent {
  stop: AbortController
  client: KubeClient
  factory: InformerFactory
  synced: boolean
}

/** Runs the process: answers the driver's commands until it is told to stop. */
function main(): void {
  const send = (m: FleetAgentsReport) => process.send?.(m)
  const agents: Agent[] = []
  const delay = monitorEventLoopDelay({ resolution: 20 })
  delay.enable()
  const progress = setInterval(() => {
    send({
      type: 'progress',
      agents: agents.length,
      synced: agents.filter((a) => a.synced).length,
      maxDelayMs: Math.round(delay.max / 1e6),
      handles: handleCounts(),
    })
    delay.reset()
  }, PROGRESS_EVERY_MS)
  progress.unref()

  async function start(c: Extract<FleetAgentsCommand, { type: 'start' }>): Promise<void> {
    const started: Agent[] = []
    for (const spec of c.agents) {
      const stop = new AbortController()
      const client = new KubeClient({
        server: c.server,
        namespace: 'default',
        source: `agent ${spec.node}`,
        ...identityOf(spec, c.caPem),
      })
      const factory = new InformerFactory(client)
      const files = new MemoryNodeFiles().view(stop.signal, realClock, new Prng(spec.seed))
      const agent = nodeConfigAgent({ client, factory, nodeName: spec.node, root: '/fleet', files })
      factory.start(stop.signal)
      void agent.run(stop.signal).catch(() => {})
      const a: Agent = { stop, client, factory, synced: false }
      agents.push(a)
      started.push(a)
    }
    for (const a of started) {
      await a.factory.waitForSync(c.syncTimeoutMs, a.stop.signal)
      a.synced = true
    }
    send({ type: 'synced', count: agents.filter((a) => a.synced).length })
  }

  async function stopAll(): Promise<void> {
    for (const a of agents) a.stop.abort()
    await Promise.allSettled(agents.map((a) => a.client.close()))
    clearInterval(progress)
    send({ type: 'stopped' })
    process.disconnect?.()
  }

  process.on('message', (m: FleetAgentsCommand) => {
    const run = m.type === 'start' ? start(m) : stopAll()
    run.catch((err: unknown) => send({ type: 'failed', message: (err as Error).message }))
  })
  // The driver gone means the run is over: no agent outlives it.
  process.on('disconnect', () => process.exit(0))
}

if (import.meta.main) main()
