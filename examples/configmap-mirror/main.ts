/**
 * @module configmap-mirror/main — runs the mirror against the cluster of your kubeconfig
 * (`KUBECONFIG`, `~/.kube/config`, or in-cluster):
 *
 *     npm run build && node examples/configmap-mirror/main.ts
 *
 * Metrics on :8080, probes on :8081; Ctrl-C (SIGINT) or SIGTERM stops it gracefully.
 */
import { KubeClient, loadClusterConfig, Manager, onShutdownSignals } from 'edgeop'
import { addMirror } from './mirror.ts'

const client = new KubeClient(await loadClusterConfig())
const manager = new Manager({ client })
addMirror(manager)
await manager.run(onShutdownSignals())
await client.close()
