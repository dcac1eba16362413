/**
 * @module chart-on-node — the chart installed exactly as shipped, on the real node: run by
 * probe-node.sh (EDGEOP_NODE_THEN) once the node is Ready (see node-cluster.ts for its
 * environment). Prints one `e2e: <what> <JSON>` line per finding, which
 * test/integration/real-node.test.ts checks; exits 1 on the first step that fails.
 *
 * Steps: `helm install` with the chart's defaults (CRDs, webhooks with failurePolicy Fail, the
 * conversion webhook, secure metrics), then what every install shows (install-checks.ts: pods Ready
 * by kubelet's probes, one leader, an AppService's pods running, a webhook denial through the
 * Service); each pod's memory from its cgroup; the operator wired to the database stand-in
 * (`helm upgrade --set extraArgs`) and `kubectl rollout restart` with AppServices written meanwhile
 * (rollout-restart.ts); the leader's container killed and the standby's takeover; the operator
 * scaled to 0 and what an AppService write then gets; the agent DaemonSet without its apiserver.
 */
import { readdir, readFile, rm } from 'node:fs/promises'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES } from '../../src/operators/appservice/api.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { startDatabaseStandin } from '../standin/database-api.ts'
import { appServiceRuns, CHART_DEFAULTS, operatorRunning, webhookDenial } from './install-checks.ts'
import {
  APP_IMAGE,
  APP_NAMESPACE,
  at,
  DEPLOYMENTS,
  killContainer,
  leaseHolder,
  type Pod,
  podMemory,
  pods,
  ready,
  refusal,
  run,
  runOnNode,
  say,
  WAIT_MS,
} from './node-cluster.ts'
import { databaseFindings, rolledOut, rolloutRestart } from './rollout-restart.ts'

const NAMESPACE = CHART_DEFAULTS.namespace
const RELEASE = 'edgeop'
/**
 * The documented takeover bound with client-go's defaults, which the chart keeps (docs/operations.md):
 * the Lease's 15 s counted from when a standby last saw it renewed, plus up to two 2 s retry periods.
 */
const TAKEOVER_BOUND_MS = 19_000

const helm = (...args: string[]) =>
  run(process.env.HELM!, args, {
    env: { ...process.env, HOME: process.env.EDGEOP_NODE_WORK },
    maxBuffer: 16 << 20,
  })
/** `helm upgrade` of the release keeping the values set so far, plus `args`. */
const upgrade = (...args: string[]) =>
  helm('upgrade', RELEASE, 'charts/edgeop', '--namespace', NAMESPACE, '--reuse-values', ...args)

async function main(client: KubeClient, defer: (cleanup: () => Promise<void>) => void): Promise<void> {
  // 1. helm install with the chart's defaults: nothing set.
  await helm('install', RELEASE, 'charts/edgeop', '--namespace', NAMESPACE, '--create-namespace')
  say('installed', { at: at() })
  await operatorRunning(client, CHART_DEFAULTS)
  // 2. An AppService reconciled into a Deployment whose pods run on the node.
  const appPods = await appServiceRuns(client)
  // 3. A webhook denial through the Service (aggregator routing: the apiserver calls an endpoint).
  await webhookDenial(client)
  // 4. Memory of every pod as the kernel counts it, against the chart's requests and limits.
  for (const p of [...(await pods(client, NAMESPACE, CHART_DEFAULTS.selector)), ...appPods])
    say('memory', await podMemory(p))

  // 5. The database stand-in on the node's address, given to the operator as an administrator
  // would (`extraArgs`; no database service ships with edgeop), then `kubectl rollout restart`.
  const db = await startDatabaseStandin(0, process.env.EDGEOP_NODE_IP)
  defer(() => db.close())
  const wired = new Set((await pods(client, NAMESPACE, CHART_DEFAULTS.selector)).map((p) => p.metadata.name!))
  await upgrade('--set', `extraArgs[0]=--database-api=${db.url}`)
  await rolledOut(client, CHART_DEFAULTS, wired)
  say('database wired', { at: at(), url: db.url })
  await rolloutRestart(client, CHART_DEFAULTS, db)
  const apps = client.resource(APPSERVICES, APP_NAMESPACE)
  const holder = () => leaseHolder(client, NAMESPACE, CHART_DEFAULTS.deployment)

  // 6. The leader's container killed (SIGKILL through containerd): the standby takes over.
  // After the rollout the Lease may still be free or being taken: wait for a leader among the pods.
  let leader = ''
  const leaderPod = await eventually(
    async () => {
      leader = await holder()
      return (await pods(client, NAMESPACE, CHART_DEFAULTS.selector)).find((p) =>
        leader.startsWith(`${p.metadata.name}_`),
      )
    },
    { timeoutMs: WAIT_MS, what: 'a leader among the new pods' },
  )
  const killedAt = performance.now()
  await killContainer(leaderPod)
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
  // The new leader resynced every AppService: still one database entry each.
  say('database after takeover', await databaseFindings(client, db))

  // 7. The operator scaled to 0: what an AppService write gets.
  await client
    .resource(DEPLOYMENTS, NAMESPACE)
    .patch(CHART_DEFAULTS.deployment, { spec: { replicas: 0 } }, 'merge')
  await eventually(async () => (await pods(client, NAMESPACE, CHART_DEFAULTS.selector)).length === 0, {
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
  await upgrade(
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
  const agentPod = (await pods(client, NAMESPACE, 'app.kubernetes.io/name=edgeop-agent'))[0]!
  say('agent', { at: at(), pod: agentPod.metadata.name, file: await onHost() })
  // The apiserver out of reach for pods (the kubernetes Service's route stopped); kubelet keeps its own.
  process.kill(Number(process.env.EDGEOP_NODE_SERVICE_PROXY_PID), 'SIGTERM')
  const agentContainer = await killContainer(agentPod)
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

await runOnNode(main)
