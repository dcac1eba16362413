/**
 * @module node-labels-agent/main — runs the agent for one node against the cluster of your kubeconfig:
 *
 *     npm run build
 *     NODE_NAME=<node> node examples/node-labels-agent/main.ts [directory]
 *
 * The directory defaults to `./node-labels`. Probes on :8081 for a DaemonSet's liveness and
 * readiness; no metrics server and no leader election (each node is its own shard).
 */
import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { KubeClient, loadClusterConfig, Manager, onShutdownSignals } from 'edgeop'
import { addNodeLabelsAgent } from './agent.ts'

const nodeName = process.env.NODE_NAME
if (!nodeName) {
  process.stderr.write('NODE_NAME must name the node this agent runs on\n')
  process.exit(2)
}
const dir = resolve(process.argv[2] ?? 'node-labels')
await mkdir(dir, { recursive: true })

const client = new KubeClient(await loadClusterConfig())
const manager = new Manager({ client, metricsBindAddress: '0' })
addNodeLabelsAgent(manager, { nodeName, dir })
await manager.run(onShutdownSignals())
await client.close()
