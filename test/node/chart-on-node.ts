/**
 * @module chart-on-node — the chart installed exactly as shipped, on the real node: run by
 * probe-node.sh (EDGEOP_NODE_THEN) once the node is Ready, with its KUBECONFIG, HELM and the
 * node's cgroup root in the environment. Prints one `e2e: <what> <JSON>` line per finding, which
 * test/integration/real-node.test.ts checks; exits 1 on the first step that fails.
 *
 * Steps: `helm install` with the chart's defaults (CRDs, webhooks with failurePolicy Fail, the
 * conversion webhook, secure metrics), the operator's two pods Running and Ready by kubelet's
 * probes, one leader; an AppService reconciled into a Deployment whose pods run the pause image
 * built by the probe; a webhook denial through the Service; each pod's memory from its cgroup; the
 * leader's container killed and the standby's takeover; the operator scaled to 0 and what an
 * AppService write then gets.
 */
import { execFile } from 'node:child_process'
import { access, open, readdir, readFile, rm } from 'node:fs/promises'
import { promisify } from 'node:util'
import { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import { loadKubeconfig } from '../../src/config/kubeconfig.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { ApiError } from '../../src/transport/api-error.ts'

const run = promisify(execFile)
const NAMESPACE = 'edgeop-system'
const RELEASE = 'edgeop'
/** Pods on one 2-core node shared with other builds: the image's start, probes every 10 s. */
const WAIT_MS = 180_000
const APP_NAMESPACE = 'e2e-apps'
/** The image the probe builds and imports (the sandbox image); the suite needs nothing else. */
const APP_IMAGE = 'localhost/pause:3.10'

const say = (what: string, value: unknown) => process.stdout.write(`e2e: ${what} ${JSON.stringify(value)}\n`)
const t0 = performance.now()
const at = () => Math.round(performance.now() - t0)

const client = new KubeClient(await loadKubeconfig({ paths: [process.env.KUBECONFIG!] }), { qps: -1 })
const helm = (...args: string[]) =>
  run(process.env.HELM!, args, {
    env: { ...process.env, HOME: process.env.EDGEOP_NODE_WORK },
    maxBuffer: 16 << 20,
  })
const deployments: ResourceType = {
  group: 'apps',
  version: 'v1',
  resource: 'deployments',
  namespaced: true,
  kind: 'Deployment',
}
const leases: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  resource: 'leases',
  namespaced: true,
  kind: 'Lease',
}
interface Pod extends KubeObject {
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
const pods = async (namespace: string, selector: string) =>
  (await client.resource(CORE_TYPES.pods, namespace).list({ labelSelector: selector })).items as Pod[]
const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
const OPERATOR = 'app.kubernetes.io/name=edgeop-appservice,app.kubernetes.io/instance=edgeop'
const OPERATOR_DEPLOYMENT = 'edgeop-appservice'
/**
 * The documented takeover bound with client-go's defaults, which the chart keeps (docs/operations.md):
 * the Lease's 15 s counted from when a standby last saw it renewed, plus up to two 2 s retry periods.
 */
const TAKEOVER_BOUND_MS = 19_000

/** A write's refusal in the words the user reads (kubectl prints the Status message). */
async function refusal(write: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await write
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, message: err.message }
    throw err
  }
  throw new Error('the write was accepted')
}

/** The memory cgroup (v1) of `pod`: usage, working set (usage − inactive file) and limit, in bytes. */
async function podMemory(pod: Pod) {
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

async function main(): Promise<void> {
  // 1. helm install with the chart's defaults: nothing set.
  await helm('install', RELEASE, 'charts/edgeop', '--namespace', NAMESPACE, '--create-namespace')
  say('installed', { at: at() })
  let last: Pod[] = []
  await eventually(
    async () => {
      last = await pods(NAMESPACE, OPERATOR)
      return last.length === 2 && last.every((p) => p.status?.phase === 'Running' && ready(p))
    },
    {
      timeoutMs: WAIT_MS,
      what: () => `two operator pods Running and Ready (${JSON.stringify(last.map((p) => p.status))})`,
    },
  )
  say('operator pods', {
    at: at(),
    pods: last.map((p) => ({
      name: p.metadata.name,
      phase: p.status?.phase,
      ready: ready(p),
      ip: p.status?.podIP,
    })),
  })
  const lease = await eventually(
    async () => {
      const l = (await client.resource(leases, NAMESPACE).list()).items as (KubeObject & {
        spec?: { holderIdentity?: string }
      })[]
      return l.find((x) => x.spec?.holderIdentity)
    },
    { timeoutMs: WAIT_MS, what: 'a leader' },
  )
  say('leader', {
    lease: lease.metadata.name,
    holder: lease.spec?.holderIdentity,
    pods: last.map((p) => p.metadata.name),
  })

  // 2. An AppService reconciled into a Deployment whose pods run on the node.
  await client
    .resource(CORE_TYPES.namespaces)
    .create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP_NAMESPACE } })
  const apps = client.resource(APPSERVICES, APP_NAMESPACE)
  await apps.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'hello' },
    spec: { image: APP_IMAGE, replicas: 2, port: 8080 },
  } as never)
  let appPods: Pod[] = []
  await eventually(
    async () => {
      appPods = await pods(APP_NAMESPACE, '')
      return appPods.length === 2 && appPods.every((p) => p.status?.phase === 'Running')
    },
    {
      timeoutMs: WAIT_MS,
      what: () =>
        `the AppService's two pods Running (${JSON.stringify(appPods.map((p) => p.status?.phase))})`,
    },
  )
  const deployment = (await client.resource(deployments, APP_NAMESPACE).get('hello')) as KubeObject & {
    status?: { readyReplicas?: number }
  }
  say('appservice pods', {
    at: at(),
    deployment: deployment.metadata.name,
    pods: appPods.map((p) => ({ name: p.metadata.name, phase: p.status?.phase, ip: p.status?.podIP })),
  })

  // 3. A webhook denial through the Service (aggregator routing: the apiserver calls an endpoint).
  const denied = await refusal(
    apps.create({
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'AppService',
      metadata: { name: 'bad' },
      spec: { image: 'Not An/Image!' },
    } as never),
  )
  say('webhook denial', denied)

  // 4. Memory of every pod as the kernel counts it, against the chart's requests and limits.
  for (const p of [...(await pods(NAMESPACE, OPERATOR)), ...appPods]) say('memory', await podMemory(p))

  const holder = async () =>
    (
      (await client.resource(leases, NAMESPACE).get(OPERATOR_DEPLOYMENT)) as KubeObject & {
        spec: { holderIdentity?: string }
      }
    ).spec.holderIdentity ?? ''

  // 5. `kubectl rollout restart`: kubelet sends SIGTERM; each old pod logs its graceful stop.
  const before = await pods(NAMESPACE, OPERATOR)
  const oldLeader = await holder()
  // kubelet deletes a pod's log files with the pod: hold them open to read them afterwards.
  const logOf = (p: Pod) =>
    `${process.env.EDGEOP_NODE_WORK}/pod-logs/${NAMESPACE}_${p.metadata.name}_${p.metadata.uid}/operator/0.log`
  const logs = await Promise.all(before.map((p) => open(logOf(p), 'r')))
  await client.resource(deployments, NAMESPACE).patch(
    OPERATOR_DEPLOYMENT,
    {
      spec: {
        template: {
          metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } },
        },
      },
    },
    'merge',
  )
  // Created while the replicas hand over: reconciled by one of them, nothing lost.
  await apps.create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'AppService',
    metadata: { name: 'during-restart' },
    spec: { image: APP_IMAGE },
  } as never)
  const oldNames = new Set(before.map((p) => p.metadata.name))
  let after: Pod[] = []
  await eventually(
    async () => {
      after = await pods(NAMESPACE, OPERATOR)
      return after.length === 2 && after.every((p) => !oldNames.has(p.metadata.name) && ready(p))
    },
    { timeoutMs: WAIT_MS, what: () => `two new operator pods Ready (${after.map((p) => p.metadata.name)})` },
  )
  const stops = []
  for (const [i, p] of before.entries()) {
    const text = await logs[i]!.readFile('utf8')
    await logs[i]!.close()
    const msgs = text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l.slice(l.indexOf('{'))) as { msg: string }).msg)
    stops.push({
      pod: p.metadata.name,
      wasLeader: oldLeader.startsWith(`${p.metadata.name}_`),
      releasedLease: msgs.includes('released the lease'),
      last: msgs.at(-1),
    })
  }
  const hello = await apps.get('hello')
  const during = await eventually(
    () =>
      client
        .resource(deployments, APP_NAMESPACE)
        .get('during-restart')
        .catch(() => undefined),
    { timeoutMs: WAIT_MS, what: 'the AppService created during the restart reconciled' },
  )
  say('rollout restart', {
    duringRestartDeployment: during.metadata.name,
    at: at(),
    stops,
    newPods: after.map((p) => p.metadata.name),
    helloConditions: hello.status?.conditions,
  })

  // 6. The leader's container killed (SIGKILL through containerd): the standby takes over.
  // After the rollout the Lease may still be free or being taken: wait for a leader among the pods.
  let leader = ''
  const leaderPod = await eventually(
    async () => {
      leader = await holder()
      return (await pods(NAMESPACE, OPERATOR)).find((p) => leader.startsWith(`${p.metadata.name}_`))
    },
    { timeoutMs: WAIT_MS, what: 'a leader among the new pods' },
  )
  const container = leaderPod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '')
  const killedAt = performance.now()
  await run('ctr', [
    '-a',
    process.env.EDGEOP_NODE_CONTAINERD!,
    '-n',
    'k8s.io',
    'tasks',
    'kill',
    '-s',
    'SIGKILL',
    container,
  ])
  let next = ''
  await eventually(
    async () => {
      next = await holder()
      return next !== '' && next !== leader
    },
    // The standby, or the killed pod's container that kubelet restarted: whichever retries first
    // once the Lease has expired.
    { timeoutMs: WAIT_MS, intervalMs: 100, what: 'a new leader' },
  )
  say('takeover', {
    samePod: next.startsWith(`${leaderPod.metadata.name}_`),
    killed: leader,
    leader: next,
    afterMs: Math.round(performance.now() - killedAt),
    boundMs: TAKEOVER_BOUND_MS,
  })
  const killedPod = leaderPod.metadata.name!
  let restarted: Pod | undefined
  await eventually(
    async () => {
      restarted = (await client.resource(CORE_TYPES.pods, NAMESPACE).get(killedPod)) as Pod
      return (restarted.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && ready(restarted)
    },
    { timeoutMs: WAIT_MS, what: 'the killed container restarted by kubelet and Ready' },
  )
  say('restarted', {
    pod: killedPod,
    restartCount: restarted?.status?.containerStatuses?.[0]?.restartCount,
    at: at(),
  })

  // 7. The operator scaled to 0: what an AppService write gets.
  await client.resource(deployments, NAMESPACE).patch(OPERATOR_DEPLOYMENT, { spec: { replicas: 0 } }, 'merge')
  await eventually(async () => (await pods(NAMESPACE, OPERATOR)).length === 0, {
    timeoutMs: WAIT_MS,
    what: 'the operator pods gone',
  })
  const t = performance.now()
  const down = await refusal(
    apps.create({
      apiVersion: 'platform.example.com/v1alpha1',
      kind: 'AppService',
      metadata: { name: 'while-down' },
      spec: { image: APP_IMAGE },
    } as never),
  )
  say('write with the operator at 0', { ...down, afterMs: Math.round(performance.now() - t) })
  // The chart's CRD stores v1beta1 (chart 0.2.0): a read as v1alpha1, the operator's own version, needs the webhook.
  say('v1alpha1 read with the operator at 0', await refusal(apps.get('hello')))

  // The other choice: validation failing open, as `--set webhooks.validatingFailurePolicy=Ignore` renders it.
  const validating: ResourceType = {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    resource: 'validatingwebhookconfigurations',
    namespaced: false,
    kind: 'ValidatingWebhookConfiguration',
  }
  const vwc = (await client.resource(validating).list()).items[0] as KubeObject & {
    webhooks: { failurePolicy: string }[]
  }
  await client
    .resource(validating)
    .patch(
      vwc.metadata.name!,
      [{ op: 'replace', path: '/webhooks/0/failurePolicy', value: 'Ignore' }],
      'json',
    )
  const t2 = performance.now()
  // As v1beta1, the storage version: a v1alpha1 write would need the conversion webhook, which has no failure policy.
  const v1beta1 = client.resource<KubeObject>(
    { ...APPSERVICES, version: 'v1beta1' } as ResourceType,
    APP_NAMESPACE,
  )
  await v1beta1.create({
    apiVersion: 'platform.example.com/v1beta1',
    kind: 'AppService',
    metadata: { name: 'unvalidated' },
    spec: { image: 'Not An/Image!' },
  } as never)
  say('write with Ignore and the operator at 0', {
    stored: ((await v1beta1.get('unvalidated')).spec as { image: string }).image,
    afterMs: Math.round(performance.now() - t2),
  })

  // 8. The node agent (agent.enabled=true, edge autonomy on by default): its files on the host
  // path, then the apiserver out of the pods' reach and the agent's container killed: restarted by
  // kubelet, it serves its last known files from the cache hostPath.
  await helm(
    'upgrade',
    RELEASE,
    'charts/edgeop',
    '--namespace',
    NAMESPACE,
    '--reuse-values',
    // The scale to 0 and the Ignore patch above own fields now: Helm 4's server-side apply refuses
    // them as conflicts without this (what an administrator meets after a `kubectl scale`).
    '--force-conflicts',
    '--set',
    'agent.enabled=true',
  )
  await client.resource(NODECONFIGS).create({
    apiVersion: 'platform.example.com/v1alpha1',
    kind: 'NodeConfig',
    metadata: { name: 'e2e' },
    spec: { files: [{ path: 'etc/e2e.conf', content: 'from the cluster\n', mode: '0644' }] },
  } as never)
  const hostFile = '/var/lib/edgeop/files/etc/e2e.conf'
  const onHost = () => readFile(hostFile, 'utf8').catch(() => undefined)
  await eventually(async () => (await onHost()) === 'from the cluster\n', {
    timeoutMs: WAIT_MS,
    what: `${hostFile} written by the agent pod`,
  })
  await eventually(
    async () => {
      const snapshots = await readdir('/var/lib/edgeop/cache').catch(() => [] as string[])
      const texts = await Promise.all(
        snapshots
          // The NodeConfigs' own snapshot: the reports' names the NodeConfig too (its owner).
          .filter((f) => /^nodeconfigs-.*\.snapshot$/.test(f))
          .map((f) => readFile(`/var/lib/edgeop/cache/${f}`, 'utf8')),
      )
      return texts.some((t) => t.includes('"name":"e2e"'))
    },
    {
      timeoutMs: WAIT_MS,
      what: "the agent's NodeConfigs snapshot on the cache hostPath holds the NodeConfig",
    },
  )
  const agentPod = (await pods(NAMESPACE, 'app.kubernetes.io/name=edgeop-agent'))[0]!
  say('agent', { at: at(), pod: agentPod.metadata.name, file: await onHost() })
  // The apiserver out of reach for pods (the kubernetes Service's route stopped); kubelet keeps its own.
  process.kill(Number(process.env.EDGEOP_NODE_SERVICE_PROXY_PID), 'SIGTERM')
  const agentContainer = agentPod.status!.containerStatuses![0]!.containerID!.replace(/^containerd:\/\//, '')
  await run('ctr', [
    '-a',
    process.env.EDGEOP_NODE_CONTAINERD!,
    '-n',
    'k8s.io',
    'tasks',
    'kill',
    '-s',
    'SIGKILL',
    agentContainer,
  ])
  let agentRestarts = 0
  await eventually(
    async () => {
      const p = (await client.resource(CORE_TYPES.pods, NAMESPACE).get(agentPod.metadata.name!)) as Pod
      agentRestarts = p.status?.containerStatuses?.[0]?.restartCount ?? 0
      return (
        agentRestarts >= 1 &&
        p.status?.containerStatuses?.[0]?.containerID?.endsWith(agentContainer) === false
      )
    },
    { timeoutMs: WAIT_MS, what: 'the agent container restarted by kubelet' },
  )
  await rm(hostFile)
  await eventually(async () => (await onHost()) === 'from the cluster\n', {
    timeoutMs: WAIT_MS,
    what: `${hostFile} restored by the restarted agent without the apiserver`,
  })
  const restartedLog = await readFile(
    `${process.env.EDGEOP_NODE_WORK}/pod-logs/${NAMESPACE}_${agentPod.metadata.name}_${agentPod.metadata.uid}/agent/${agentRestarts}.log`,
    'utf8',
  )
  say('agent offline', {
    at: at(),
    restarts: agentRestarts,
    file: await onHost(),
    servedFromSnapshot: restartedLog.includes(
      'serving from cache snapshot until the watch catches up with the server',
    ),
    apiserverRefused: restartedLog.includes('ECONNREFUSED'),
    driftCorrected: restartedLog.includes('drift corrected'),
  })
}

try {
  await main()
  say('done', { at: at() })
} catch (err) {
  say('failed', { at: at(), message: err instanceof Error ? err.message : String(err) })
  process.exitCode = 1
} finally {
  client.close()
}
