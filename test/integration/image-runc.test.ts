/**
 * The operator's image run by a real OCI runtime, not a stand-in process: the `node` image of
 * dist/image for this machine's architecture, unpacked by umoci into a runtime bundle and run by
 * runc (test/node/build-binaries.sh builds it) as the chart's Deployment specifies its container:
 * the image's user (uid 65532), a read-only root filesystem, no capabilities, no privilege
 * escalation, and a memory cgroup whose limit is the chart's `resources.limits.memory`.
 * `version` runs in a network namespace of its own (loopback only). `run` is installed with
 * `helm install` and gets its credentials the way a pod does: in-cluster config from a mounted
 * service-account directory with a bound token. It shares the host's network namespace
 * (`hostNetwork`), because the test apiserver listens on the host's loopback; its probe and
 * metrics ports are ephemeral loopback ports, so nothing leaves the machine.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmod, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { before, test } from 'node:test'
import { promisify } from 'node:util'
import { archTag, buildImages, inspectImage, LAYOUT, NONROOT } from '../../build/image.ts'
import { HOST_ARCH } from '../../build/targets.ts'
import { umociPath } from '../../build/tools/umoci.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { SERVICE_ACCOUNT_DIR } from '../../src/config/in-cluster.ts'
import { APPSERVICES, type AppService } from '../../src/operators/appservice/api.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { nodeBinaryDir } from '../node/assets.ts'
import { type BundleOptions, configureBundle, unpackBundle } from '../node/oci-bundle.ts'
import { memoryBytes } from '../node/quantity.ts'
import { cgroupMemory, Runc } from '../node/runc.ts'
import { appServiceWhere, condition, installAppServiceCrd } from '../support/appservice.ts'
import { serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { metricsScraperToken } from '../support/metrics-scraper.ts'
import { installWithHelm } from '../support/operator-install.ts'
import { type OperatorProcess, startOperator } from '../support/operator-process.ts'
import { helmTemplate, operatorShape } from '../support/rendered-manifests.ts'
import { scratchDirs } from '../support/scratch.ts'
import { useTestEnv } from '../support/test-env.ts'

const execFileAsync = promisify(execFile)
const { env, setup, defer } = useTestEnv()
const scratch = scratchDirs('edgeop-runc-')

/**
 * runc built from the Go module proxy on a cold machine (96 s wall, 45 s of CPU on 2 cores), then the images
 * if no earlier test built them (test/build/image.test.ts's hook allows 600 s for that).
 */
const PREPARE_TIMEOUT_MS = 900_000
/** Start to Ready, an upper bound for a loaded 2-core machine (a failure names what was awaited). */
const READY_TIMEOUT_MS = 60_000
/** client-go's leader-election defaults; the chart leaves them (its renewDeadline is 10 s). */
const LEASE = { duration: 15_000, renew: 10_000, retry: 2_000 }

let runc: Runc
let umoci: string
let entrypoint: readonly string[]
/** What the chart's Deployment sets on its container, from `helm template` with the default values. */
let chart: { memoryLimitBytes: number; readOnlyRoot: boolean; runAsUser: number }
let admin: KubeClient

before(
  async () => {
    runc = new Runc(join(await nodeBinaryDir('runc'), 'runc'), await scratch())
    umoci = umociPath()
    const image = await inspectImage('node', HOST_ARCH).catch(() => undefined)
    if (image === undefined) await buildImages()
    entrypoint = (await inspectImage('node', HOST_ARCH)).config.Entrypoint ?? []
    const shape = operatorShape(await helmTemplate('edgeop', 'edgeop-system'))
    const resources = shape.resources as { limits: { memory: string } }
    chart = {
      memoryLimitBytes: memoryBytes(resources.limits.memory),
      readOnlyRoot: (shape.securityContext as { readOnlyRootFilesystem: boolean }).readOnlyRootFilesystem,
      runAsUser: (shape.podSecurityContext as { runAsUser: number }).runAsUser,
    }
  },
  { timeout: PREPARE_TIMEOUT_MS },
)

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  await installAppServiceCrd(admin)
})

/** A fresh bundle of the `node` image; its container id and cgroup are this run's own. */
async function bundleOf(
  options: Omit<BundleOptions, 'entrypoint' | 'readOnlyRoot' | 'memoryLimitBytes' | 'cgroupsPath'>,
) {
  const id = `edgeop-test-${randomBytes(4).toString('hex')}`
  const bundle = join(await scratch(), 'bundle')
  const unpacked = await unpackBundle(umoci, `${LAYOUT}:${archTag('node', HOST_ARCH)}`, bundle)
  const configure = (args: readonly string[]) =>
    configureBundle(bundle, {
      ...options,
      args,
      entrypoint,
      readOnlyRoot: chart.readOnlyRoot,
      memoryLimitBytes: chart.memoryLimitBytes,
      cgroupsPath: `/${id}`,
    })
  defer(() => runc.delete(id))
  return { id, bundle, unpacked, configure }
}

/** The `Key:\tvalue` lines of /proc/<pid>/status. */
async function procStatus(pid: number): Promise<Map<string, string>> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8')
  return new Map(
    text.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
  )
}

test("the image runs `version` under runc as the chart's user, read-only, without capabilities, in its own network namespace and the chart's memory limit", async () => {
  const { id, bundle, unpacked, configure } = await bundleOf({ args: [], network: 'own' })
  // The user comes from the image config (umoci), and it is the one the chart asks for.
  assert.deepEqual([unpacked.process.user.uid, unpacked.process.user.gid], [NONROOT, NONROOT])
  assert.equal(chart.runAsUser, NONROOT)
  // What runc is given (the `run` test below reads back what the kernel then enforces).
  const spec = await configure(['version'])
  assert.equal(spec.root.readonly, true)
  assert.deepEqual(Object.values(spec.process.capabilities ?? {}).flat(), [])
  assert.deepEqual(
    spec.linux?.namespaces?.filter((n) => n.type === 'network'),
    [{ type: 'network' }],
  )
  assert.equal(spec.linux?.resources?.memory?.limit, chart.memoryLimitBytes)
  const { stdout } = await execFileAsync(runc.runArgv(id, bundle)[0]!, runc.runArgv(id, bundle).slice(1))
  assert.match(
    stdout,
    /^edgeop \d+\.\d+\.\d+ \(node v24\.[^,]*, linux\/(?:x64|arm64), --optimize-for-size\)$/m,
  )
})

test('`run` in the image under runc, installed by helm, configured in-cluster like a pod: Ready, leader, reconciling; uid, read-only root and cgroup limit as the chart says; SIGTERM ends it with 0', async () => {
  await env().startControllers()
  const watched = await env().createNamespace('runc')
  const installed = await installWithHelm({
    env: env(),
    admin,
    defer,
    watchNamespace: watched,
    lease: LEASE,
    extraArgs: [],
  })
  const server = new URL(env().server)
  // The service-account volume the kubelet projects into every pod: token, CA and namespace.
  const sa = await scratch()
  await chmod(sa, 0o755)
  const token = await serviceAccountToken(
    env().server,
    { caPem: env().caPem, ...env().admin },
    installed.namespace,
    installed.serviceAccount,
  )
  for (const [file, content] of [
    ['token', token],
    ['ca.crt', env().caPem],
    ['namespace', installed.namespace],
  ] as const) {
    await writeFile(join(sa, file), content, { mode: 0o644 })
  }
  // The metrics are served as shipped (HTTPS, every scrape authorized), scraped as Prometheus would.
  const metricsToken = await metricsScraperToken(env(), admin, defer, watched, installed.metricsReaderRole)

  const { id, bundle, configure } = await bundleOf({
    args: [],
    network: 'host',
    env: { KUBERNETES_SERVICE_HOST: server.hostname, KUBERNETES_SERVICE_PORT: server.port },
    mounts: [{ source: sa, destination: SERVICE_ACCOUNT_DIR }],
  })
  let op: OperatorProcess | undefined
  defer(() => op?.kill('SIGKILL'))
  op = await startOperator('runc', installed.args, 120_000, {
    metricsToken,
    launch: async (args) => {
      await configure(args)
      return runc.runArgv(id, bundle)
    },
  })
  await eventually(async () => (await op!.ready()) === 200, {
    timeoutMs: READY_TIMEOUT_MS,
    what: 'GET /readyz answers 200',
  })

  const { pid, status } = await runc.state(id)
  assert.equal(status, 'running')
  const proc = await procStatus(pid)
  assert.match(proc.get('Uid') ?? '', new RegExp(`^${NONROOT}\\s+${NONROOT}\\s+${NONROOT}\\s+${NONROOT}$`))
  assert.match(proc.get('Gid') ?? '', new RegExp(`^${NONROOT}\\s`))
  assert.equal(proc.get('CapEff'), '0000000000000000')
  assert.equal(proc.get('NoNewPrivs'), '1')
  const rootMount = (await readFile(`/proc/${pid}/mountinfo`, 'utf8'))
    .split('\n')
    .find((l) => l.split(' ')[4] === '/')
  assert.match(
    rootMount?.split(' ')[5] ?? '',
    /^ro(,|$)/,
    `the container's / is mounted read-only: ${rootMount}`,
  )
  const memory = await cgroupMemory(`/${id}`)
  assert.equal(memory.limit, chart.memoryLimitBytes)
  assert.ok(
    memory.workingSet < memory.limit,
    `working set ${memory.workingSet} under the limit ${memory.limit}`,
  )
  process.stderr.write(
    `runc ${id}: memory usage ${(memory.usage / 2 ** 20).toFixed(1)} MiB, working set ${(memory.workingSet / 2 ** 20).toFixed(1)} MiB, limit ${(memory.limit / 2 ** 20).toFixed(0)} MiB\n`,
  )

  // It leads with the chart's Lease and reconciles.
  assert.equal(await op.metric('leader_election_master_status'), 1)
  const apps = admin.resource<AppService>(APPSERVICES, watched)
  await apps.create({ metadata: { name: 'web' }, spec: { image: 'nginx:1.27', replicas: 1 } } as AppService)
  const ready = await appServiceWhere(apps, 'web', (a) => condition(a, 'Ready')?.status === 'True', 'Ready')
  assert.equal(ready.status?.readyReplicas, 1)

  // runc forwards SIGTERM to the container's init, the operator itself (pid 1 of its pid namespace).
  op.kill('SIGTERM')
  assert.equal(await op.exited, 0)
})
