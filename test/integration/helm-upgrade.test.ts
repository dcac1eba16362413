/**
 * `helm upgrade` from the previous chart version (0.1.0, whose CRD stores v1alpha1) to this one
 * (0.2.0, which stores v1beta1), with live AppServices and NodeConfigs, then the storage move through
 * deploy/migrate/job.yaml's `edgeop migrate`, as docs/operations.md (Upgrading) tells a user to do it.
 *
 * The previous chart is `git archive` of {@link PREVIOUS_CHART_COMMIT}: the last commit where
 * charts/edgeop shipped as 0.1.0, i.e. what a user who installed 0.1.0 has.
 *
 * No kubelet runs here (test/node/ has the real node, too slow for this): each chart's Deployment is
 * run as a host process with its installed args, as the chart's ServiceAccount (helm-chart.test.ts
 * does the same), and the Job's `migrate` likewise as the Job's ServiceAccount. The apiserver reaches
 * the webhooks as it does in a cluster, through the chart's Service: a private control plane with
 * `--enable-aggregator-routing=true` calls an endpoint of `edgeop-appservice-webhook`, and the test
 * plays the endpoints controller, moving the endpoints from the old operator to the new one as a
 * rolling update would (both, then the new one alone, then the old one stops).
 *
 * Checked: every AppService and NodeConfig is there after, with its uid and spec; no Deployment the
 * operator owns was rewritten; the new operator's reconciles stay within one per AppService, its start
 * (no storm: the migration's rewrites change no generation); a conversion read and an admission
 * denial, repeated throughout, never fail; afterwards `status.storedVersions` is `['v1beta1']` and,
 * with the webhook unreachable, every AppService still reads as v1beta1 (so each is stored as v1beta1)
 * while a v1alpha1 read fails. Then a lone operator cold-starts with its endpoint following its
 * readiness, and leads and reconciles though its v1alpha1 reads need its own webhook.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { NODE_FLAGS } from '../../build/node-flags.ts'
import { isNotFound } from '../../src/client/index.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES, type ResourceType } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { APPSERVICES, type AppService, VERSION_V1BETA1 } from '../../src/operators/appservice/api.ts'
import { OPERATOR_NAMESPACE, WEBHOOK_SERVICE } from '../../src/operators/appservice/deployment-names.ts'
import { APPSERVICES_CRD } from '../../src/operators/appservice/manifests.ts'
import { MIGRATION_JOB_NAME } from '../../src/operators/appservice/migration-job.ts'
import { NODECONFIGS } from '../../src/operators/nodeconfig/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { freePort } from '../../src/testing/ports.ts'
import { applyObjects, deployObjects, serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { ARTIFACT, type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { CHART, helm, one, parseObjects } from '../support/rendered-manifests.ts'
import { scrape } from '../support/scrape.ts'
import { useTestEnv } from '../support/test-env.ts'

/**
 * The last commit with charts/edgeop at version 0.1.0 (the base the bump to 0.2.0 was made on): the
 * chart a user of 0.1.0 installed. Its CRD stores v1alpha1.
 */
const PREVIOUS_CHART_COMMIT = '0ef25fc24ac386474e13ba34fe3c4115324809a5'
/** AppServices and NodeConfigs live through the upgrade: enough to see a storm, few enough to create quickly. */
const APPS = 20
const NODE_CONFIGS = 3

const { env, setup, defer } = useTestEnv({
  private: true,
  apiserverArgs: ['--enable-aggregator-routing=true'],
})
const run = promisify(execFile)
let admin: KubeClient
let previousChart: string

const ENDPOINTS: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'endpoints',
  namespaced: true,
  kind: 'Endpoints',
}
const SLICES: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  resource: 'endpointslices',
  namespaced: true,
  kind: 'EndpointSlice',
}
const v1beta1 = (ns: string) => admin.resource<KubeObject>({ ...APPSERVICES, version: VERSION_V1BETA1 }, ns)

/** An address of this machine the apiserver may be pointed at: an endpoint may not be a loopback address. */
function hostAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address
  throw new Error('no non-loopback IPv4 address on this machine for the webhook endpoint')
}

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  const dir = await mkdtemp(join(tmpdir(), 'edgeop-prev-chart-'))
  defer(() => rm(dir, { recursive: true, force: true }))
  const tar = join(dir, 'chart.tar')
  await run('git', ['archive', '--output', tar, PREVIOUS_CHART_COMMIT, 'charts/edgeop'], {
    cwd: join(CHART, '../..'),
  })
  await run('tar', ['-xf', tar, '-C', dir])
  previousChart = join(dir, 'charts/edgeop')
})

/** The chart's operator, started from `release`'s installed Deployment as its ServiceAccount, its webhook on `address:port`. */
async function operatorOf(
  name: string,
  release: string,
  address: string,
  port: number,
): Promise<OperatorProcess> {
  const kubeEnv = { KUBECONFIG: env().kubeconfig }
  const installed = parseObjects(
    await helm(['get', 'manifest', release, '--namespace', OPERATOR_NAMESPACE], kubeEnv),
  )
  const pod = (
    one(installed, 'Deployment').spec as {
      template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } }
    }
  ).template.spec
  const args = pod.containers[0]!.args.filter(
    (a) => !/^--(metrics|health-probe|webhook)-bind-address=/.test(a),
  )
  const token = await serviceAccountToken(
    env().server,
    { caPem: env().caPem, ...env().admin },
    OPERATOR_NAMESPACE,
    pod.serviceAccountName,
  )
  const kubeconfig = await env().writeKubeconfig({
    server: env().server,
    credentials: { token },
    namespace: OPERATOR_NAMESPACE,
  })
  const op = await startOperator(name, [
    ...args,
    `--webhook-bind-address=${address}:${port}`,
    `--kubeconfig=${kubeconfig}`,
  ])
  defer(() => op.kill('SIGKILL'))
  return op
}

/** What the endpoints controller would write for the webhook Service: these host ports, or none. */
async function routeWebhook(address: string, ports: number[]): Promise<void> {
  await applyObjects(admin, [
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: WEBHOOK_SERVICE, namespace: OPERATOR_NAMESPACE },
      subsets: ports.map((port) => ({
        addresses: [{ ip: address }],
        ports: [{ name: 'webhook', port, protocol: 'TCP' }],
      })),
    },
    ...ports.map((port) => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: `${WEBHOOK_SERVICE}-${port}`,
        namespace: OPERATOR_NAMESPACE,
        labels: { 'kubernetes.io/service-name': WEBHOOK_SERVICE },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [address], conditions: { ready: true } }],
      ports: [{ name: 'webhook', port, protocol: 'TCP' }],
    })),
  ])
  for (const slice of (await admin.resource(SLICES, OPERATOR_NAMESPACE).list()).items)
    if (
      slice.metadata.labels?.['kubernetes.io/service-name'] === WEBHOOK_SERVICE &&
      !ports.some((p) => slice.metadata.name === `${WEBHOOK_SERVICE}-${p}`)
    )
      await admin.resource(SLICES, OPERATOR_NAMESPACE).delete(slice.metadata.name!)
  if (ports.length === 0)
    await admin
      .resource(ENDPOINTS, OPERATOR_NAMESPACE)
      .delete(WEBHOOK_SERVICE)
      .catch((e: unknown) => {
        if (!isNotFound(e)) throw e
      })
}

/** The sum of a counter's samples whose labels include `labels`. */
async function total(
  op: OperatorProcess,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const r = await scrape(op.metricsUrl)
  let sum = 0
  for (const line of r.body.split('\n'))
    if (
      (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) &&
      Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))
    )
      sum += Number(line.slice(line.lastIndexOf(' ') + 1))
  return sum
}

const webhookCalls = (op: OperatorProcess) => total(op, 'edgeop_webhook_requests_total')
const invalid = (name: string): AppService =>
  ({ metadata: { name }, spec: { image: 'Not An/Image!', replicas: 1 } }) as AppService

test('helm upgrade 0.1.0 -> 0.2.0 with live AppServices and NodeConfigs, then the migration Job: nothing lost, no reconcile storm, webhooks and conversion served throughout, every AppService stored as v1beta1', async () => {
  const kubeEnv = { KUBECONFIG: env().kubeconfig }
  const previousVersion = /^version: (\S+)$/m.exec(
    await readFile(join(previousChart, 'Chart.yaml'), 'utf8'),
  )![1]
  const version = /^version: (\S+)$/m.exec(await readFile(join(CHART, 'Chart.yaml'), 'utf8'))![1]
  assert.deepEqual([previousVersion, version], ['0.1.0', '0.2.0'])
  const address = hostAddress()

  // 0.1.0 installed with its defaults: CRDs from its crds/, webhooks on with failurePolicy Fail.
  const installed = await helm(
    ['install', 'edgeop', previousChart, '--namespace', OPERATOR_NAMESPACE, '--create-namespace'],
    kubeEnv,
  )
  assert.match(installed, /STATUS: deployed/)
  const crds = admin.resource(CORE_TYPES.customResourceDefinitions)
  type Crd = KubeObject & {
    spec: { versions: { name: string; storage: boolean }[] }
    status?: { storedVersions?: string[] }
  }
  const storage = async () =>
    ((await crds.get(APPSERVICES_CRD)) as Crd).spec.versions.find((v) => v.storage)!.name
  assert.equal(await storage(), 'v1alpha1')
  const [portOld, portNew] = [await freePort(), await freePort()]
  const old = await operatorOf('upgrade-old', 'edgeop', address, portOld)
  await routeWebhook(address, [portOld])

  const ns = await env().createNamespace('upgrade')
  const apps = admin.resource(APPSERVICES, ns)
  // The conversion webhook answers (the operator patched its caBundle) before the AppServices are made.
  await eventually(
    () =>
      v1beta1(ns)
        .list()
        .then(() => true),
    { timeoutMs: 60_000, what: 'v1beta1 read converted' },
  )
  for (let i = 0; i < APPS; i++)
    await apps.create({
      metadata: { name: `app-${i}` },
      spec: { image: 'nginx:1.27', replicas: 1 },
    } as AppService)
  const nodeConfigs = admin.resource(NODECONFIGS)
  for (let i = 0; i < NODE_CONFIGS; i++)
    await nodeConfigs.create({
      metadata: { name: `upgrade-${i}` },
      spec: { files: [{ path: `etc/upgrade-${i}.conf`, content: `n=${i}\n` }] },
    } as never)
  const deployments = admin.resource(CORE_TYPES.deployments, ns)
  const settled = await eventually(
    async () => {
      const list = (await apps.list()).items
      const done = list.filter((a) => a.status?.observedGeneration === a.metadata.generation)
      return done.length === APPS && list
    },
    { timeoutMs: 120_000, what: `${APPS} AppServices reconciled by 0.1.0's operator` },
  )
  const deploymentVersions = new Map(
    (await deployments.list()).items.map((d) => [d.metadata.name!, d.metadata.resourceVersion!]),
  )
  assert.equal(deploymentVersions.size, APPS)
  const beforeBeta = new Map((await v1beta1(ns).list()).items.map((a) => [a.metadata.name!, a]))
  const beforeNodeConfigs = (await nodeConfigs.list()).items

  // Throughout: a read as v1beta1 (the conversion webhook) and a refused write (the validating webhook).
  const failures: string[] = []
  let probes = 0
  let probing = true
  defer(() => {
    probing = false
  })
  const prober = (async () => {
    while (probing) {
      try {
        assert.equal((await v1beta1(ns).list()).items.length, APPS)
        await apps.create(invalid('refused'), { dryRun: true }).then(
          () => failures.push('an invalid AppService was admitted'),
          (e: Error) => {
            if (!/denied the request: spec\.image/.test(e.message)) failures.push(e.message)
          },
        )
        probes++
      } catch (e) {
        failures.push((e as Error).message)
      }
      await new Promise((r) => setTimeout(r, 100))
    }
  })()

  // The upgrade, as docs/operations.md gives it: the CRDs first (Helm never upgrades crds/), then the release.
  const newCrds = await Promise.all(
    (await readdir(join(CHART, 'crds'))).map(async (f) =>
      parseAllDocuments(await readFile(join(CHART, 'crds', f), 'utf8')).map((d) => d.toJS() as KubeObject),
    ),
  )
  await applyObjects(admin, newCrds.flat())
  assert.equal(await storage(), 'v1beta1')
  const upgraded = await helm(['upgrade', 'edgeop', CHART, '--namespace', OPERATOR_NAMESPACE], kubeEnv)
  assert.match(upgraded, /STATUS: deployed/)
  // The rolling update: the new pod starts, is an endpoint beside the old one, then alone; the old one stops.
  const next = await operatorOf('upgrade-new', 'edgeop', address, portNew)
  await routeWebhook(address, [portOld, portNew])
  await routeWebhook(address, [portNew])
  await eventually(
    async () => {
      const [a, b] = [await webhookCalls(old), await webhookCalls(next)]
      await v1beta1(ns).list()
      await apps.create(invalid('refused'), { dryRun: true }).catch(() => undefined)
      return (await webhookCalls(old)) === a && (await webhookCalls(next)) > b
    },
    { timeoutMs: 30_000, what: 'the apiserver calling the new operator alone' },
  )
  const reconcilesBefore = await total(next, 'controller_runtime_reconcile_total')
  old.kill('SIGTERM')
  assert.equal(await old.exited, 0)
  await eventually(async () => (await next.metric('leader_election_master_status')) === 1, {
    timeoutMs: 60_000,
    what: 'the new operator leading',
  })

  // The migration Job's objects less the Job (no kubelet): its `migrate` run as its ServiceAccount.
  const job = await deployObjects('migrate/job.yaml')
  await applyObjects(
    admin,
    job.filter((o) => o.kind !== 'Job'),
  )
  const jobPod = (one(job, 'Job').spec as { template: { spec: { containers: { args: string[] }[] } } })
    .template.spec
  const token = await serviceAccountToken(
    env().server,
    { caPem: env().caPem, ...env().admin },
    OPERATOR_NAMESPACE,
    MIGRATION_JOB_NAME,
  )
  const kubeconfig = await env().writeKubeconfig({ server: env().server, credentials: { token } })
  const migrated = await run(process.execPath, [
    ...NODE_FLAGS,
    ARTIFACT,
    ...jobPod.containers[0]!.args,
    `--kubeconfig=${kubeconfig}`,
  ])
  // Each object rewritten, or found already stored as v1beta1 (written by the operator since the switch).
  const page = /: (\d+) rewritten, (\d+) unchanged/.exec(migrated.stdout)
  assert.equal(Number(page?.[1]) + Number(page?.[2]), APPS, migrated.stdout)
  assert.match(migrated.stdout, /stored as v1beta1 only \(was v1alpha1, v1beta1\)/)

  // The new operator settles: every AppService reconciled, the queue quiet.
  await eventually(
    async () => {
      const list = (await apps.list()).items
      return list.every((a) => a.status?.observedGeneration === a.metadata.generation) && list.length === APPS
    },
    { timeoutMs: 60_000, what: 'AppServices reconciled after the upgrade' },
  )
  probing = false
  await prober
  assert.deepEqual(failures, [], `of ${probes} probes`)
  assert.ok(probes > 0)

  const reconciles = (await total(next, 'controller_runtime_reconcile_total')) - reconcilesBefore
  const writes = await Promise.all(
    ['POST', 'PUT', 'PATCH', 'DELETE'].map((m) => total(next, 'rest_client_requests_total', { method: m })),
  )
  console.log(
    `upgrade: ${probes} probes, 0 failed; new operator: ${reconciles} reconciles after the old one stopped, requests ${await total(next, 'rest_client_requests_total')} (writes POST/PUT/PATCH/DELETE ${writes.join('/')})`,
  )
  // One reconcile per AppService for the new leader's initial list; the migration's rewrites change
  // no generation, which the AppService predicate (generationChanged) passes over.
  assert.ok(reconciles <= APPS, `${reconciles} reconciles for ${APPS} AppServices`)

  // Nothing lost, nothing rewritten that did not need it.
  const afterDeployments = (await deployments.list()).items
  assert.deepEqual(
    new Map(afterDeployments.map((d) => [d.metadata.name!, d.metadata.resourceVersion!])),
    deploymentVersions,
    'no Deployment rewritten by the upgrade',
  )
  const afterBeta = (await v1beta1(ns).list()).items
  assert.equal(afterBeta.length, APPS)
  for (const a of afterBeta) {
    const before = beforeBeta.get(a.metadata.name!)!
    assert.equal(a.metadata.uid, before.metadata.uid)
    assert.deepEqual(a.spec, before.spec, a.metadata.name)
  }
  assert.equal(settled.length, APPS)
  const afterNodeConfigs = (await nodeConfigs.list()).items
  assert.deepEqual(
    afterNodeConfigs.map((n) => [n.metadata.uid, n.spec]),
    beforeNodeConfigs.map((n) => [n.metadata.uid, n.spec]),
  )

  // Stored as v1beta1: storedVersions says so, and with no webhook to convert, v1beta1 reads still
  // work (the apiserver reads them as stored) while v1alpha1 reads need the webhook and fail.
  assert.deepEqual(((await crds.get(APPSERVICES_CRD)) as Crd).status?.storedVersions, ['v1beta1'])
  next.kill('SIGTERM')
  await next.exited
  await routeWebhook(address, [])
  assert.equal((await v1beta1(ns).list()).items.length, APPS)
  for (const a of afterBeta) assert.deepEqual((await v1beta1(ns).get(a.metadata.name!)).spec, a.spec)
  await assert.rejects(apps.get('app-0'), /conversion webhook/)
  storedAsBeta = ns
})

/** The namespace of the first test's AppServices, once they are stored as v1beta1. */
let storedAsBeta: string | undefined

test('cold start after the storage move: a lone operator, its endpoint following its readiness as the endpoints controller does, becomes Ready, leads and reconciles, though its v1alpha1 reads go through its own webhook', async () => {
  assert.ok(storedAsBeta, 'the upgrade test stored AppServices as v1beta1')
  const ns = storedAsBeta
  const kubeEnv = { KUBECONFIG: env().kubeconfig }
  const installed = parseObjects(
    await helm(['get', 'manifest', 'edgeop', '--namespace', OPERATOR_NAMESPACE], kubeEnv),
  )
  const service = installed.find((o) => o.kind === 'Service' && o.metadata.name === WEBHOOK_SERVICE)!
  const publishNotReady =
    (service.spec as { publishNotReadyAddresses?: boolean }).publishNotReadyAddresses === true
  const address = hostAddress()
  const port = await freePort()
  // Every replica down (a node restart, a scale from 0): one pod starts, alone. The endpoints
  // controller's rule for the chart's Service, applied at every step: the pod is an endpoint while
  // its /readyz answers 200 (kubelet's readiness probe), or always if the Service publishes not-ready addresses.
  const op = await operatorOf('cold-start', 'edgeop', address, port)
  const apps = admin.resource(APPSERVICES, ns)
  let patched = false
  let notReady = 0
  await eventually(
    async () => {
      const ready = (await op.ready()) === 200
      if (!ready) notReady++
      await routeWebhook(address, publishNotReady || ready ? [port] : [])
      if (!ready || (await op.metric('leader_election_master_status')) !== 1) return false
      if (!patched) {
        await apps.patch('app-1', { spec: { replicas: 2 } }, 'merge')
        patched = true
      }
      return (await admin.resource(CORE_TYPES.deployments, ns).get('app-1')).spec?.replicas === 2
    },
    { timeoutMs: 90_000, intervalMs: 250, what: 'the lone operator Ready, leading, and app-1 reconciled' },
  )
  console.log(
    `cold start: /readyz not 200 at ${notReady} of the checks; publishNotReadyAddresses ${publishNotReady}`,
  )
})
