/**
 * @module node-cluster — the real node's cluster as the scripts run on it (chart-on-node.ts,
 * kustomize-on-node.ts) see it: probe-node.sh runs them with its KUBECONFIG, HELM, the node's
 * address, cgroup root, containerd socket and work directory in the environment. Findings are
 * printed as `e2e: <what> <JSON>` lines, which test/integration/real-node.test.ts reads.
 */
import { execFile } from 'node:child_process'
import { access, readFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { ApiError } from '../../src/transport/api-error.ts'

export const run = promisify(execFile)
/** Pods on one 2-core node shared with other builds: the image's start, probes every 10 s. */
export const WAIT_MS = 180_000
/** The namespace of the AppServices the scripts create. */
export const APP_NAMESPACE = 'e2e-apps'
/** The image the probe builds and imports (the sandbox image); the scripts need nothing else. */
export const APP_IMAGE = 'localhost/pause:3.10'

const t0 = performance.now()
/** ms since the script started. */
export const at = () => Math.round(performance.now() - t0)
/** Prints one finding for the test. */
export const say = (what: string, value: unknown) =>
  process.stdout.write(`e2e: ${what} ${JSON.stringify(value)}\n`)

/** An admin client of the node's apiserver, unthrottled. */
export async function nodeClient(): Promise<KubeClient> {
  return new KubeClient(await loadKubeconfig({ paths: [process.env.KUBECONFIG!] }), { qps: -1 })
}

export const DEPLOYMENTS: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  namespaced: true,
  kind: 'Deployment',
}
export const LEASES: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
  kind: 'Lease',
}

/** The fields of a Pod the scripts read. */
export interface Pod extends KubeObject {
  spec: {
    containers: {
      name: string
      resources?: { requests?: Record<string, string>; limits?: Record<string, string> }
    }[]
  }
  status?: {
    phase?: string
    podIP?: string
    conditions?: { type: string; status: string }[]
    containerStatuses?: { name: string; ready: boolean; restartCount: number; containerID?: string }[]
  }
}

/** The pods of `namespace` matching the label `selector` ('' = all). */
export const pods = async (client: KubeClient, namespace: string, selector: string) =>
  (await client.resource(CORE_TYPES.pods, namespace).list({ labelSelector: selector })).items as Pod[]

/** Whether kubelet reports the pod Ready (its readiness probes passed). */
export const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true

/** The holder of Lease `namespace/name`, '' when none. */
export async function leaseHolder(client: KubeClient, namespace: string, name: string): Promise<string> {
  const lease = (await client.resource(LEASES, namespace).get(name)) as KubeObject & {
    spec: { holderIdentity?: string }
  }
  return lease.spec.holderIdentity ?? ''
}

/** A write's refusal in the words the user reads (kubectl prints the Status message). */
export async function refusal(write: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await write
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, message: err.message }
    throw err
  }
  throw new Error('the write was accepted')
}

/** SIGKILL to the first container of `pod` through containerd, as an OOM kill or a crash ends it. */
export async function killContainer(pod: Pod): Promise<string> {
  const id = pod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '')
  await run('ctr', [
    '-a',
    process.env.EDGEOP_NODE_CONTAINERD!,
    '-n',
    'k8s.io',
    'tasks',
    'kill',
    '-s',
    'SIGKILL',
    id,
  ])
  return id
}

/** The memory cgroup (v1) of `pod`: usage, working set (usage − inactive file) and limit, in bytes. */
export async function podMemory(pod: Pod) {
  // kubelet's QoS tiers: Guaranteed pods directly under kubepods, the others in burstable/ or besteffort/.
  const base = `/sys/fs/cgroup/memory${process.env.EDGEOP_NODE_CGROUP_ROOT}/kubepods`
  const candidates = ['', 'burstable/', 'besteffort/'].map((tier) => `${base}/${tier}pod${pod.metadata.uid}`)
  const found = await Promise.all(
    candidates.map((d) =>
      access(d).then(
        () => d,
        () => undefined,
      ),
    ),
  )
  const dir = found.find((d) => d !== undefined)
  if (dir === undefined) throw new Error(`no memory cgroup for pod ${pod.metadata.name} under ${base}`)
  const read = async (f: string) => (await readFile(`${dir}/${f}`, 'utf8')).trim()
  const usage = Number(await read('memory.usage_in_bytes'))
  const inactive = Number(/^total_inactive_file (\d+)$/m.exec(await read('memory.stat'))?.[1] ?? 0)
  return {
    pod: pod.metadata.name,
    usage,
    workingSet: usage - inactive,
    limit: Number(await read('memory.limit_in_bytes')),
    requests: pod.spec.containers[0]?.resources?.requests?.memory,
    limits: pod.spec.containers[0]?.resources?.limits?.memory,
  }
}

/**
 * Runs an on-node script's `main` with an admin client and a `defer` for what it starts (run last
 * first, also when `main` fails, so that nothing keeps the script alive): prints `done` or `failed`
 * with the error's message, and sets the exit code.
 */
export async function runOnNode(
  main: (client: KubeClient, defer: (cleanup: () => Promise<void>) => void) => Promise<void>,
): Promise<void> {
  const client = await nodeClient()
  const cleanups: (() => Promise<void>)[] = []
  try {
    await main(client, (cleanup) => cleanups.push(cleanup))
    say('done', { at: at() })
  } catch (err) {
    say('failed', { at: at(), message: err instanceof Error ? err.message : String(err) })
    process.exitCode = 1
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {})
    client.close()
  }
}
