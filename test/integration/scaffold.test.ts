/**
 * The scaffold end to end, as a new user runs it: `npm pack` of a clean checkout of HEAD, `npx edgeop
 * init` from that tarball, `npm install` (npm's cache first), the project's own test on edgeop/testing,
 * its build to one file, then its install into the real control plane with the manifests it generates.
 * `npm run image` builds its OCI image without Docker; umoci unpacks it and runc runs its entrypoint as the
 * generated Deployment's container (uid 65532, read-only root, no capabilities, no network, its memory limit).
 * The operator runs as the Dockerfile's image runs it (its one file alone, no node_modules; with no
 * Docker engine here, the image's files are staged from the Dockerfile), as the generated
 * ServiceAccount under exactly the generated RBAC, with the generated Deployment's args: it passes its
 * own `check` (SubjectAccessReviews against the apiserver), leads through a Lease in the install
 * namespace and reconciles its CRD. Only committed files are packed: commit first.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { parseAllDocuments } from 'yaml'
import { NONROOT } from '../../build/image.ts'
import { packCleanCheckout } from '../../build/package-consumer.ts'
import { umociPath } from '../../build/tools/umoci.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { nodeBinaryDir } from '../node/assets.ts'
import { configureBundle, unpackBundle } from '../node/oci-bundle.ts'
import { memoryBytes } from '../node/quantity.ts'
import { Runc } from '../node/runc.ts'
import { applyObjects, serviceAccountToken } from '../support/deploy-manifests.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const run = promisify(execFile)
const { env, setup, defer } = useTestEnv()
/** The project's name, so its cluster-scoped objects (CRD aside) are this run's own. */
const NAME = `scaffold-${randomBytes(3).toString('hex')}`
const WIDGETS = { group: 'example.com', version: 'v1alpha1', resource: 'widgets', namespaced: true }
/**
 * The environment of the commands: this Node first on PATH (npm's scripts and npx's bin run on it, not
 * on the system's), and without NODE_TEST_CONTEXT, which would make the project's `node --test` report
 * to this runner instead of printing its results.
 */
const { NODE_TEST_CONTEXT: _, ...inherited } = process.env
const ENV = { ...inherited, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` }

let admin: KubeClient
let work: string
let tarball: string
let project: string

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  work = await mkdtemp(join(tmpdir(), 'edgeop-scaffold-'))
  defer(() => rm(work, { recursive: true, force: true }))
  tarball = await packCleanCheckout(work)
  project = join(work, NAME)
})

/** Runs `cmd` in `cwd` with this Node first on PATH; rejects with its output when it fails. */
async function sh(cmd: string, args: string[], cwd: string) {
  try {
    return await run(cmd, args, { cwd, env: ENV, maxBuffer: 16 * 1024 * 1024 })
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string }
    throw new Error(`${cmd} ${args.join(' ')}: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`)
  }
}

test('npx edgeop init from the packed tarball creates the project; npm install installs it from the tarball', async () => {
  await sh(
    'npx',
    ['--prefer-offline', '--yes', '--package', tarball, '--', 'edgeop', 'init', NAME, '--edgeop', tarball],
    work,
  )
  const pkg = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'))
  assert.equal(pkg.dependencies.edgeop, `file:${tarball}`)
  await sh('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project)
  const installed = JSON.parse(await readFile(join(project, 'node_modules/edgeop/package.json'), 'utf8'))
  assert.equal(
    installed.version,
    JSON.parse(await readFile(join(import.meta.dirname, '../../package.json'), 'utf8')).version,
  )
})

test("the project's own test type-checks (strict) and passes on edgeop/testing's apiserver", async () => {
  const { stdout } = await sh('npm', ['test'], project)
  assert.match(stdout, /^ℹ pass 1$/m)
  assert.match(stdout, /^ℹ fail 0$/m)
})

/**
 * What the project's Dockerfile puts into its image, without a Docker engine: its COPY sources copied
 * under `root` (and nothing else: no node_modules), its ENV, and its ENTRYPOINT with the image's Node as
 * this Node and image paths under `root`.
 */
async function stageImage(dockerfile: string, root: string) {
  const env: Record<string, string> = {}
  let entrypoint: string[] = []
  for (const line of dockerfile.split('\n')) {
    const [op, ...rest] = line.trim().split(/\s+/)
    if (op === 'COPY') {
      const [from, to] = rest as [string, string]
      await mkdir(dirname(join(root, to)), { recursive: true })
      await copyFile(join(project, from), join(root, to))
    } else if (op === 'ENV') for (const kv of rest) env[kv.split('=')[0]!] = kv.split('=')[1]!
    else if (op === 'ENTRYPOINT') entrypoint = JSON.parse(rest.join(' ')) as string[]
  }
  const [node, ...args] = entrypoint
  assert.equal(node, '/nodejs/bin/node', 'the distroless image runs its Node')
  return { env, argv: args.map((a) => (a.startsWith('/') ? join(root, a) : a)) }
}

let image: { env: Record<string, string>; argv: string[] }
type GeneratedContainer = {
  securityContext: { readOnlyRootFilesystem: boolean }
  resources: { limits: { memory: string } }
}

test("npm run build writes the operator as one file; the Dockerfile's image holds that file alone, and it runs there", async () => {
  await sh('npm', ['run', 'build'], project)
  assert.deepEqual(await readdir(join(project, 'dist')), ['operator.mjs'])
  const root = join(work, 'image')
  image = await stageImage(await readFile(join(project, 'Dockerfile'), 'utf8'), root)
  assert.deepEqual(await readdir(join(root, 'app')), ['operator.mjs'])
  assert.equal(image.env.NODE_ENV, 'production')
  const { stdout } = await sh(process.execPath, [...image.argv, '--help'], root)
  assert.match(stdout, /^ {2}manifests +Print the CRDs, RBAC/m)
})

test("npm run image builds the project's OCI image without Docker; runc runs its entrypoint as the generated Deployment's container: uid 65532, read-only root, no capabilities, its memory limit", async (t) => {
  const { stdout: built } = await sh('npm', ['run', 'image'], project)
  const line = /^dist\/image:0\.1\.0 linux\/\w+: \d+ bytes compressed, user 65532$/m.exec(built)
  assert.ok(line, built)
  t.diagnostic(line[0])
  const { stdout: yaml } = await sh(
    process.execPath,
    [...image.argv, 'manifests', `--image=${NAME}:0.1.0`],
    work,
  )
  const container = (
    parseAllDocuments(yaml)
      .map((d) => d.toJS() as KubeObject)
      .find((o) => o.kind === 'Deployment')!.spec as {
      template: { spec: { securityContext: { runAsUser: number }; containers: GeneratedContainer[] } }
    }
  ).template.spec
  const generated = container.containers[0]!
  const bundle = join(work, 'bundle')
  const unpacked = await unpackBundle(umociPath(), `${join(project, 'dist/image')}:0.1.0`, bundle)
  // The image's user (its config, read by umoci) is the one the generated Deployment runs as.
  assert.deepEqual([unpacked.process.user.uid, unpacked.process.user.gid], [NONROOT, NONROOT])
  assert.equal(container.securityContext.runAsUser, NONROOT)
  assert.deepEqual(unpacked.process.args, ['/nodejs/bin/node', '/app/operator.mjs', 'run'])
  assert.deepEqual((await readdir(join(bundle, 'rootfs/app'))).sort(), ['operator.mjs'])
  const id = `scaffold-${randomBytes(4).toString('hex')}`
  await mkdir(join(work, 'runc'))
  const runc = new Runc(join(await nodeBinaryDir('runc'), 'runc'), join(work, 'runc'))
  defer(() => runc.delete(id))
  const spec = await configureBundle(bundle, {
    entrypoint: unpacked.process.args.slice(0, -1),
    args: ['manifests', `--image=${NAME}:0.1.0`],
    readOnlyRoot: generated.securityContext.readOnlyRootFilesystem,
    memoryLimitBytes: memoryBytes(generated.resources.limits.memory),
    cgroupsPath: `/${id}`,
    network: 'own',
  })
  assert.equal(spec.root.readonly, true)
  const argv = runc.runArgv(id, bundle)
  // In the container (no node_modules, no network, nothing writable): the same manifests as outside.
  const { stdout } = await sh(argv[0]!, argv.slice(1), work)
  assert.equal(stdout, yaml)
})

test('installed with its generated manifests, the built operator passes its check as its ServiceAccount, leads, reconciles a Widget, and fits its memory request', async (t) => {
  const namespace = await env().createNamespace('scaffold-system')
  const { stdout: yaml } = await sh(
    process.execPath,
    [...image.argv, 'manifests', `--image=${NAME}:0.1.0`, `--install-namespace=${namespace}`],
    work,
  )
  const objects = parseAllDocuments(yaml).map((d) => d.toJS() as KubeObject)
  const deployment = objects.find((o) => o.kind === 'Deployment')!
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind).map((o) => o.metadata.name)
  assert.deepEqual(byKind('ClusterRole'), [NAME, `${NAME}-metrics-auth`])
  assert.deepEqual(byKind('Role'), [`${NAME}-leader-election`])
  await applyObjects(admin, objects)
  defer(async () => {
    for (const o of objects.filter((x) => x.metadata.namespace === undefined && x.kind !== 'Namespace')) {
      const type = await admin.mapper.forApiVersionKind(o.apiVersion!, o.kind!)
      await admin.resource(type).delete(o.metadata.name!)
    }
  })
  await eventually(
    () =>
      admin
        .resource(WIDGETS, namespace)
        .list()
        .then(
          () => true,
          () => false,
        ),
    {
      what: 'widgets served',
    },
  )

  const token = await serviceAccountToken(
    env().server,
    { caPem: env().caPem, ...env().admin },
    namespace,
    NAME,
  )
  const kubeconfig = await env().writeKubeconfig({ server: env().server, credentials: { token } })
  const pod = (
    deployment.spec as {
      template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } }
    }
  ).template.spec
  assert.equal(pod.serviceAccountName, NAME)
  const args = [
    ...pod.containers[0]!.args.filter((a) => !/^--(metrics|health-probe)-bind-address=/.test(a)),
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    `--kubeconfig=${kubeconfig}`,
  ]
  assert.equal(args[0], 'run')

  // check: every rule and the Lease rights, as SubjectAccessReviews of the ServiceAccount.
  const check = await sh(process.execPath, [...image.argv, 'check', ...args.slice(1)], work)
  assert.doesNotMatch(check.stdout, /^\[-\]/m, check.stdout)
  assert.match(check.stdout, /^\[\+\]may patch configmaps cluster-wide$/m)
  assert.match(
    check.stdout,
    new RegExp(`^\\[\\+\\]may update leases.coordination.k8s.io in namespace "${namespace}"$`, 'm'),
  )

  const operator: ChildProcess = spawn(process.execPath, [...image.argv, ...args], {
    cwd: work,
    env: { ...ENV, ...image.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  operator.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString()
  })
  const exited = new Promise<number | null>((resolve) => operator.on('exit', resolve))
  defer(() => operator.kill('SIGKILL'))

  const lease = await eventually(
    () =>
      admin
        .resource(CORE_TYPES.leases, namespace)
        .get(NAME)
        .then(
          (l) => (l.spec as { holderIdentity?: string }).holderIdentity,
          () => undefined,
        ),
    { timeoutMs: 60_000, what: `the Lease ${NAME} held` },
  )
  assert.ok(lease)

  const watched = await env().createNamespace('scaffold-widgets')
  await admin.resource(WIDGETS, watched).create({
    apiVersion: 'example.com/v1alpha1',
    kind: 'Widget',
    metadata: { name: 'hello' },
    spec: { message: 'from the scaffold' },
  })
  const configMap = await eventually(
    () =>
      admin
        .resource(CORE_TYPES.configMaps, watched)
        .get('hello')
        .catch(() => undefined),
    { timeoutMs: 60_000, what: `the Widget's ConfigMap (operator stderr: ${stderr.slice(-2000)})` },
  )
  assert.deepEqual(configMap.data, { message: 'from the scaffold' })
  await eventually(
    async () =>
      ((await admin.resource(WIDGETS, watched).get('hello')).status as { configMap?: string } | undefined)
        ?.configMap === 'hello',
    { timeoutMs: 60_000, what: "the Widget's status" },
  )
  assert.doesNotMatch(stderr, /forbidden/i)
  // The generated request is what the scheduler reserves: the running operator fits it.
  const rssKiB = Number(
    /^VmRSS:\s+(\d+) kB$/m.exec(await readFile(`/proc/${operator.pid}/status`, 'utf8'))?.[1],
  )
  const container = pod.containers[0] as unknown as { resources: { requests: { memory: string } } }
  const requestMiB = Number(container.resources.requests.memory.replace(/Mi$/, ''))
  t.diagnostic(
    `operator RSS after one reconcile: ${(rssKiB / 1024).toFixed(1)} MiB (request ${requestMiB} Mi)`,
  )
  assert.ok(rssKiB > 0 && rssKiB / 1024 < requestMiB, `${rssKiB} KiB within ${requestMiB} Mi`)
  operator.kill('SIGTERM')
  assert.equal(await exited, 0, stderr.slice(-2000))
})
