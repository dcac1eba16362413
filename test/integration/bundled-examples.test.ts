/**
 * The examples as a user ships them: edgeop packed once from a clean checkout of HEAD and installed
 * into a new project, each example's `main.ts` bundled there with esbuild + the shipped `edgeop()`
 * plugin and with rolldown (both ESM: the mains use top-level await), each bundle copied out of the
 * project (so nothing resolves from node_modules) and run as its own process with `KUBECONFIG` at
 * the real apiserver until it did its job; then SIGTERM, and it exits 0. The first test's
 * diagnostics give every bundle's size (bytes, gzip -9) and how long packing and bundling took.
 *
 * Exclusive lease: the mains bind the fixed ports :8080 and :8081, and the mirror reconciles the
 * `mirror=true` ConfigMaps of every namespace (readme-example.test.ts labels its own so), so no
 * other file may run meanwhile. Only committed files are packed: commit before running this file.
 */
import assert from 'node:assert/strict'
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { type Bundler, bundle, packedConsumer } from '../../build/package-consumer.ts'
import type { KubeClient } from '../../src/client/kube-client.ts'
import { CORE_TYPES } from '../../src/client/resource.ts'
import type { KubeObject } from '../../src/core/types.ts'
import { installCrds } from '../../src/testing/crds.ts'
import { eventually } from '../../src/testing/eventually.ts'
import { isNotFound } from '../../src/transport/api-error.ts'
import { adminClient } from '../support/kube.ts'
import { useTestEnv } from '../support/test-env.ts'

const run = promisify(execFile)

/** The examples whose `main.ts` is bundled and run (examples/<name>/main.ts). */
const EXAMPLES = ['configmap-mirror', 'bucket-finalizer', 'node-labels-agent'] as const
type Example = (typeof EXAMPLES)[number]

/** The bundlers a user would pick for a Node program with top-level await: ESM output. */
const BUNDLERS: readonly Bundler[] = ['esbuild+plugin', 'rolldown']

/** How long an example may take to do its job (start, sync, reconcile) on a loaded machine. */
const JOB_TIMEOUT_MS = 60_000

/** How much of a child's output a failure message quotes (its tail). */
const OUTPUT_TAIL_CHARS = 4_000

// The examples' own names (copied, not imported: importing them would load a second edgeop).
/** examples/configmap-mirror/mirror.ts MIRROR_LABEL. */
const MIRROR_LABEL = 'mirror'
/** examples/bucket-finalizer/bucket.ts BUCKETS and BUCKET_FINALIZER. */
const BUCKETS = {
  group: 'storage.example.com',
  version: 'v1alpha1',
  resource: 'buckets',
  namespaced: true,
  kind: 'Bucket',
} as const
const BUCKET_FINALIZER = 'storage.example.com/bucket-cleanup'
/** examples/node-labels-agent/agent.ts LABELS_FILE. */
const LABELS_FILE = 'labels.json'

const { env, setup, defer } = useTestEnv({ exclusive: true })
let admin: KubeClient
let work: string
let project: string
let packMs = 0
/** The bundle of each example by each bundler, outside the consumer project. */
const bundles = new Map<string, string>()
const bundleKey = (example: Example, bundler: Bundler): string => `${example} ${bundler}`

setup(async () => {
  admin = adminClient(env(), env().server)
  defer(() => admin.close())
  work = await mkdtemp(join(tmpdir(), 'edgeop-bundled-examples-'))
  defer(() => rm(work, { recursive: true, force: true }))
  const started = performance.now()
  const packed = await packedConsumer(work)
  project = packed.project
  // The committed examples (the checkout's), without their tests, as files of the user's project.
  for (const example of EXAMPLES)
    await cp(join(packed.checkout, 'examples', example), join(project, example), {
      recursive: true,
      filter: (src) => !src.endsWith('.test.ts'),
    })
  packMs = performance.now() - started
})

test('each example bundles with esbuild + edgeop() and rolldown (sizes in the diagnostics)', async (t) => {
  const started = performance.now()
  const built = await Promise.all(
    EXAMPLES.flatMap((example) =>
      BUNDLERS.map(async (bundler) => ({
        example,
        bundler,
        result: await bundle(project, `${example}/main.ts`, bundler, 'esm'),
      })),
    ),
  )
  const bundleMs = performance.now() - started
  const shipped = join(work, 'shipped') // no node_modules here or above: the bundle must hold it all
  await mkdir(shipped)
  t.diagnostic(
    `pack + install ${Math.round(packMs)} ms; ${built.length} bundles in parallel ${Math.round(bundleMs)} ms`,
  )
  t.diagnostic('| example | bundler | bytes | gzip -9 |')
  for (const { example, bundler, result } of built) {
    const file = join(shipped, `${example}.${basename(result.file)}`)
    await copyFile(result.file, file)
    bundles.set(bundleKey(example, bundler), file)
    t.diagnostic(`| ${example} | ${bundler} | ${result.bytes} | ${result.gzip} |`)
    const text = await readFile(file, 'utf8')
    assert.doesNotMatch(
      text,
      /(from|import|require)\s*\(?\s*["'](edgeop|undici|zod)[/"']/,
      `${file} is self-contained`,
    )
  }
})

/** A bundle running as its own process. */
interface Running {
  readonly child: ChildProcess
  /** stdout and stderr so far (interleaved). */
  output(): string
  readonly exited: Promise<number | null>
}

/** The environment of a child: ours without the test runner's `EDGEOP_*` variables, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([k]) => !k.startsWith('EDGEOP_'))
  return { ...Object.fromEntries(inherited), KUBECONFIG: env().kubeconfig, ...extra }
}

/** Starts `node <bundle> <args>` in `work` with {@link childEnv}; killed after the file if still running. */
function start(
  example: Example,
  bundler: Bundler,
  args: string[] = [],
  extra: Record<string, string> = {},
): Running {
  const file = bundles.get(bundleKey(example, bundler))
  assert.ok(file, `${example} was bundled with ${bundler}`)
  const child = spawn(process.execPath, [file, ...args], {
    cwd: work,
    env: childEnv(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const append = (d: Buffer): void => {
    output += d.toString()
  }
  child.stdout!.on('data', append)
  child.stderr!.on('data', append)
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
  defer(() => child.kill('SIGKILL'))
  return { child, output: () => output, exited }
}

/** SIGTERM, then the exit code must be 0 (a graceful stop). */
async function stop(p: Running): Promise<void> {
  p.child.kill('SIGTERM')
  assert.equal(await p.exited, 0, `exit code after SIGTERM; output:\n${p.output().slice(-OUTPUT_TAIL_CHARS)}`)
}

/** Waits for `check`, quoting the child's output when it does not come; fails at once if the child exited. */
async function until<T>(
  p: Running,
  check: () => T | Promise<T>,
  what: string,
): Promise<Exclude<T, undefined | false>> {
  try {
    return await eventually(
      () => {
        if (p.child.exitCode !== null) throw new Error(`exited with code ${p.child.exitCode} before: ${what}`)
        return check()
      },
      { timeoutMs: JOB_TIMEOUT_MS, what },
    )
  } catch (err) {
    throw new Error(`${(err as Error).message}; output:\n${p.output().slice(-OUTPUT_TAIL_CHARS)}`, {
      cause: err,
    })
  }
}

/** The object, or undefined when it is not found (other errors reject). */
const getOrUndefined = <T>(get: Promise<T>): Promise<T | undefined> =>
  get.catch((err: unknown) => {
    if (isNotFound(err)) return undefined
    throw err
  })

interface ConfigMap extends KubeObject {
  data?: Record<string, string>
}

interface Bucket extends KubeObject {
  spec: { storageClass: string }
  status?: { url?: string }
}

for (const bundler of BUNDLERS) {
  test(`configmap-mirror bundled with ${bundler}: a labelled ConfigMap gets its <name>-copy, owned by it; SIGTERM exits 0`, async () => {
    const ns = await env().createNamespace('bundled-mirror')
    const configMaps = admin.resource<ConfigMap>(CORE_TYPES.configMaps, ns)
    const p = start('configmap-mirror', bundler)
    const original = await configMaps.create({
      metadata: { name: 'settings', labels: { [MIRROR_LABEL]: 'true' } },
      data: { colour: 'blue' },
    })
    const copy = await until(
      p,
      () => getOrUndefined(configMaps.get('settings-copy')),
      'settings-copy created',
    )
    assert.deepEqual(copy.data, { colour: 'blue' })
    assert.deepEqual(
      copy.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid, o.controller]),
      [['ConfigMap', 'settings', original.metadata.uid, true]],
    )
    await stop(p)
  })

  test(`bucket-finalizer bundled with ${bundler}: its CRD installs; a Bucket gets the finalizer and status, and goes once deleted; SIGTERM exits 0`, async () => {
    const printed = await run(
      process.execPath,
      [bundles.get(bundleKey('bucket-finalizer', bundler))!, 'crd'],
      {
        cwd: work,
        env: childEnv({}),
      },
    )
    const crdFile = join(work, `bucket-crd.${bundler}.json`)
    await writeFile(crdFile, printed.stdout)
    const [crd] = await installCrds(admin, [crdFile]) // as `main.ts crd | kubectl apply -f -`
    assert.equal(crd?.metadata.name, `${BUCKETS.resource}.${BUCKETS.group}`)
    defer(() => admin.resource(CORE_TYPES.customResourceDefinitions).delete(crd!.metadata.name!))
    defer(() => admin.resource(CORE_TYPES.leases, 'default').delete('bucket-controller'))

    const ns = await env().createNamespace('bundled-bucket')
    const buckets = admin.resource<Bucket>(BUCKETS, ns)
    const p = start('bucket-finalizer', bundler)
    await buckets.create({
      apiVersion: `${BUCKETS.group}/${BUCKETS.version}`,
      kind: BUCKETS.kind,
      metadata: { name: 'photos' },
      spec: { storageClass: 'archive' },
    })
    const ready = await until(
      p,
      async () => {
        const b = await buckets.get('photos')
        return b.status?.url !== undefined && b
      },
      'the Bucket has a status url',
    )
    assert.deepEqual(ready.metadata.finalizers, [BUCKET_FINALIZER])
    assert.equal(ready.status?.url, `memory://${ns}.photos`)
    await buckets.delete('photos')
    await until(
      p,
      async () => (await getOrUndefined(buckets.get('photos'))) === undefined,
      'the Bucket is gone',
    )
    await stop(p)
  })

  test(`node-labels-agent bundled with ${bundler}: labels.json holds the Node's labels and follows an edit; SIGTERM exits 0`, async () => {
    const nodes = admin.resource(CORE_TYPES.nodes)
    const nodeName = `bundled-${bundler.replace('+', '-')}-${Math.random().toString(16).slice(2, 8)}`
    await nodes.create({ metadata: { name: nodeName, labels: { 'example.com/rack': 'r7' } } })
    defer(() => nodes.delete(nodeName))
    const dir = join(work, `labels-${nodeName}`)
    const p = start('node-labels-agent', bundler, [dir], { NODE_NAME: nodeName })
    const labels = async (): Promise<Record<string, string> | undefined> =>
      readFile(join(dir, LABELS_FILE), 'utf8').then(
        (text) => JSON.parse(text) as Record<string, string>,
        () => undefined,
      )
    const first = await until(
      p,
      async () => {
        const written = await labels()
        return written?.['example.com/rack'] === 'r7' && written
      },
      'labels.json written',
    )
    assert.deepEqual(first, (await nodes.get(nodeName)).metadata.labels)
    await nodes.patch(nodeName, { metadata: { labels: { 'example.com/rack': 'r8' } } }, 'merge')
    await until(
      p,
      async () => (await labels())?.['example.com/rack'] === 'r8',
      'labels.json follows the edit',
    )
    await stop(p)
  })
}
