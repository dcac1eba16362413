/**
 * @module test-environment — a real etcd + kube-apiserver for an operator's tests, started with one
 * call: edgeop's counterpart of controller-runtime's envtest.
 *
 * ```ts
 * const env = await startTestEnvironment({ crds: ['config/crd'] })
 * try {
 *   const ns = await env.createNamespace('my-test')
 *   // run the controller against env.client (or env.kubeconfig), assert with waitFor(…)
 * } finally {
 *   await env.stop()
 * }
 * ```
 *
 * Like envtest it runs only etcd and kube-apiserver: no controllers, so no Pods get scheduled,
 * no garbage collection happens and deleted namespaces stay `Terminating`. With
 * `useExistingCluster` (or `EDGEOP_TEST_USE_EXISTING_CLUSTER=true`) it starts nothing and uses the
 * cluster of a kubeconfig instead. Everything started is torn down by {@link TestEnvironment.stop},
 * and, if the process ends without it, by last-resort exit and signal hooks.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { KubeClient } from '../client/kube-client.ts'
import type { ClusterConfig } from '../config/cluster-config.ts'
import { loadKubeconfig } from '../config/kubeconfig.ts'
import { readKubeconfigText } from '../config/kubeconfig-text.ts'
import { RECOMMENDED_HOME_KUBECONFIG } from '../config/load.ts'
import { EdgeopError } from '../core/errors.ts'
import type { KubeObject } from '../core/types.ts'
import { Apiserver } from './apiserver.ts'
import { type Binaries, resolveBinaries, TEST_ASSETS_ENV, type Versions } from './assets.ts'
import { onTerminationSignal, trackTempDir, untrackTempDir } from './cleanup.ts'
import { type CrdSource, installCrds } from './crds.ts'
import { Etcd } from './etcd.ts'
import { renderKubeconfig } from './kubeconfig.ts'
import { createTestNamespace } from './namespace.ts'
import { TestPki } from './pki.ts'
import { freePort } from './ports.ts'

/** Environment variable: `true` attaches to the cluster of `KUBECONFIG` instead of starting one (envtest's `USE_EXISTING_CLUSTER`). */
export const EXISTING_CLUSTER_ENV = 'EDGEOP_TEST_USE_EXISTING_CLUSTER'

/**
 * How long etcd and kube-apiserver may take to become ready. A warm start takes about 3 s; the
 * apiserver's first start bootstraps RBAC and priority-and-fairness objects, which on two busy cores
 * has been seen to take a minute. envtest's default is 20 s per process on a typical laptop.
 */
export const DEFAULT_START_TIMEOUT_MS = 120_000

/** Options for {@link startTestEnvironment}. Every field is optional. */
export interface TestEnvironmentOptions {
  /** CRDs to install before returning: objects, YAML/JSON files (any number of documents) or directories of them. */
  crds?: readonly CrdSource[]
  /**
   * Directory holding `etcd` and `kube-apiserver`. Default: `EDGEOP_TEST_ASSETS`, else the build cache,
   * else built with Go (see `resolveBinaries`).
   */
  binaryAssetsDirectory?: string
  /** Use the cluster of {@link TestEnvironmentOptions.kubeconfig} instead of starting one. Default: `EDGEOP_TEST_USE_EXISTING_CLUSTER` is `true`. */
  useExistingCluster?: boolean
  /** The existing cluster's kubeconfig file. Default: the first path in `KUBECONFIG`, else `~/.kube/config`. */
  kubeconfig?: string
  /** Extra kube-apiserver flags (`--name=value`), appended last so they win. */
  apiserverArgs?: readonly string[]
  /** Per process; default {@link DEFAULT_START_TIMEOUT_MS}. */
  startTimeoutMs?: number
  /** How long to wait for the CRDs to be served; default `DEFAULT_CRD_INSTALL_TIMEOUT_MS`. */
  crdInstallTimeoutMs?: number
  /** Progress messages (binary builds, start). Default: none. */
  log?: (message: string) => void
  /** Environment to read the `EDGEOP_*` variables and `KUBECONFIG` from. Default `process.env`. */
  env?: NodeJS.ProcessEnv
}

const OPTION_NAMES: ReadonlySet<string> = new Set([
  'crds',
  'binaryAssetsDirectory',
  'useExistingCluster',
  'kubeconfig',
  'apiserverArgs',
  'startTimeoutMs',
  'crdInstallTimeoutMs',
  'log',
  'env',
])

function invalid(message: string): EdgeopError {
  return new EdgeopError('EDGEOP_ERR_INVALID', `startTestEnvironment: ${message}`, {
    step: 'validate options',
  })
}

/**
 * Checks `options` and fills in the defaults that depend on the environment. Throws one
 * `EDGEOP_ERR_INVALID` error naming the first wrong option (unknown names included, so a typo such
 * as `crd:` is not silently ignored).
 */
export function resolveTestEnvironmentOptions(options: TestEnvironmentOptions = {}): {
  useExistingCluster: boolean
  kubeconfig: string | undefined
  startTimeoutMs: number
} {
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object')
  const unknown = Object.keys(options).filter((k) => !OPTION_NAMES.has(k))
  if (unknown.length > 0)
    throw invalid(
      `unknown option ${JSON.stringify(unknown[0]!.slice(0, 40))} (known: ${[...OPTION_NAMES].join(', ')})`,
    )
  if (options.crds !== undefined) {
    if (!Array.isArray(options.crds)) throw invalid('crds must be an array of CRD objects or paths')
    options.crds.forEach((c, i) => {
      if (typeof c === 'string' ? c === '' : typeof c !== 'object' || c === null)
        throw invalid(`crds[${i}] must be a CRD object or a non-empty path`)
    })
  }
  for (const key of ['startTimeoutMs', 'crdInstallTimeoutMs'] as const) {
    const v = options[key]
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      throw invalid(`${key} must be a positive number of ms`)
  }
  for (const [i, arg] of (options.apiserverArgs ?? []).entries())
    if (typeof arg !== 'string' || !arg.startsWith('--'))
      throw invalid(`apiserverArgs[${i}] must be a flag starting with "--"`)
  const env = options.env ?? process.env
  const useExistingCluster = options.useExistingCluster ?? env[EXISTING_CLUSTER_ENV] === 'true'
  if (useExistingCluster) {
    if (options.binaryAssetsDirectory !== undefined)
      throw invalid('binaryAssetsDirectory and useExistingCluster exclude each other (nothing is started)')
    if (options.apiserverArgs !== undefined)
      throw invalid('apiserverArgs and useExistingCluster exclude each other (nothing is started)')
  } else if (options.kubeconfig !== undefined) {
    throw invalid('kubeconfig is the existing cluster’s; set useExistingCluster: true to use it')
  }
  const fromEnv = env.KUBECONFIG?.split(':').find((p) => p !== '')
  return {
    useExistingCluster,
    kubeconfig: useExistingCluster
      ? (options.kubeconfig ?? fromEnv ?? join(env.HOME || homedir(), RECOMMENDED_HOME_KUBECONFIG))
      : undefined,
    startTimeoutMs: options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS,
  }
}

/** The processes and files a started environment owns. */
interface Owned {
  workDir: string
  etcd: Etcd
  apiserver: Apiserver | undefined
  binaries: Binaries
}

/** A running test environment (or an attached existing cluster). */
export class TestEnvironment {
  /** An admin client (client-side throttling off, like envtest's 1000 QPS), closed by {@link TestEnvironment.stop}. */
  readonly client: KubeClient
  /** The cluster configuration {@link TestEnvironment.client} uses, for clients of your own. */
  readonly config: ClusterConfig
  /** Path of an admin kubeconfig file (for a controller started as a process, or kubectl). */
  readonly kubeconfig: string
  /** The contents of {@link TestEnvironment.kubeconfig}: it holds a private key, never log it. */
  readonly kubeconfigText: string
  /** `https://127.0.0.1:<port>` of the apiserver. */
  readonly server: string
  /** The versions of the binaries started; undefined for an existing cluster. */
  readonly versions: Versions | undefined
  /** CRDs installed so far, as the apiserver stored them. */
  readonly crds: KubeObject[] = []
  readonly #owned: Owned | undefined
  #unregisterSignal: () => void = () => {}
  #stopping: Promise<void> | undefined

  private constructor(init: {
    config: ClusterConfig
    kubeconfig: string
    kubeconfigText: string
    owned: Owned | undefined
  }) {
    this.config = init.config
    this.client = new KubeClient(init.config, { qps: -1 })
    this.kubeconfig = init.kubeconfig
    this.kubeconfigText = init.kubeconfigText
    this.server = init.config.server
    this.#owned = init.owned
    this.versions = init.owned?.binaries.versions
  }

  /** Whether this environment attached to an existing cluster instead of starting one. */
  get existingCluster(): boolean {
    return this.#owned === undefined
  }

  /** Used by {@link startTestEnvironment}. */
  static async start(options: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
    const resolved = resolveTestEnvironmentOptions(options)
    let env: TestEnvironment
    if (resolved.useExistingCluster) {
      const path = resolved.kubeconfig!
      const config = await loadKubeconfig({ paths: [path] })
      env = new TestEnvironment({
        config,
        kubeconfig: path,
        kubeconfigText: await readKubeconfigText(path),
        owned: undefined,
      })
    } else {
      env = await TestEnvironment.#startLocal(options, resolved.startTimeoutMs)
    }
    try {
      if (options.crds !== undefined && options.crds.length > 0) await env.installCrds(options.crds, options)
    } catch (err) {
      await env.stop()
      throw err
    }
    return env
  }

  static async #startLocal(options: TestEnvironmentOptions, timeoutMs: number): Promise<TestEnvironment> {
    const log = options.log ?? (() => {})
    const processEnv = options.env ?? process.env
    const binaries = await resolveBinaries({
      env:
        options.binaryAssetsDirectory === undefined
          ? processEnv
          : { ...processEnv, [TEST_ASSETS_ENV]: options.binaryAssetsDirectory },
      log,
    })
    const workDir = await mkdtemp(join(tmpdir(), 'edgeop-testenv-'))
    trackTempDir(workDir)
    let etcd: Etcd | undefined
    let apiserver: Apiserver | undefined
    const teardown = async (): Promise<void> => {
      await apiserver?.stop().catch(() => {})
      await etcd?.destroy().catch(() => {})
      await rm(workDir, { recursive: true, force: true })
      untrackTempDir(workDir)
    }
    const unregisterEarly = onTerminationSignal(teardown)
    try {
      const pki = await TestPki.create(join(workDir, 'pki'))
      const [caPem, admin] = await Promise.all([readFile(pki.ca.cert, 'utf8'), pki.read(pki.admin)])
      etcd = await Etcd.create({ bin: binaries.path('etcd'), workDir })
      log(`test environment: starting etcd ${binaries.versions.etcd} (${etcd.url})`)
      await etcd.start(timeoutMs)
      apiserver = new Apiserver(
        {
          flavor: 'cached',
          bin: binaries.path('kube-apiserver'),
          port: await freePort(),
          etcdUrl: etcd.url,
          pki,
          workDir,
          extraArgs: options.apiserverArgs ?? [],
        },
        { caPem, ...admin },
      )
      log(`test environment: starting kube-apiserver ${binaries.versions.kubernetes} (${apiserver.url})`)
      await apiserver.start(timeoutMs)
      const kubeconfigText = renderKubeconfig({ server: apiserver.url, caPem, credentials: admin })
      const kubeconfig = join(workDir, 'admin.kubeconfig')
      await writeFile(kubeconfig, kubeconfigText, { mode: 0o600 })
      const env = new TestEnvironment({
        config: {
          server: apiserver.url,
          tls: { ca: caPem, cert: admin.certPem, key: admin.keyPem, insecureSkipVerify: false },
          namespace: 'default',
          source: `edgeop test environment at ${apiserver.url}`,
        },
        kubeconfig,
        kubeconfigText,
        owned: { workDir, etcd, apiserver, binaries },
      })
      env.#unregisterSignal = onTerminationSignal(() => env.stop())
      unregisterEarly()
      return env
    } catch (err) {
      unregisterEarly()
      await teardown()
      throw err
    }
  }

  /** Installs more CRDs (see `installCrds`) and waits until they are served; returns them as stored. */
  async installCrds(
    sources: readonly CrdSource[],
    options: { crdInstallTimeoutMs?: number } = {},
  ): Promise<KubeObject[]> {
    const installed = await installCrds(this.client, sources, {
      timeoutMs: options.crdInstallTimeoutMs,
    })
    this.crds.push(...installed)
    return installed
  }

  /** Creates a fresh namespace `<prefix>-<8 hex>` for one test and returns its name (see `createTestNamespace`). */
  createNamespace(prefix?: string): Promise<string> {
    return createTestNamespace(this.client, prefix)
  }

  /**
   * Takes the cluster down: stops kube-apiserver, then etcd (killed, as a crash), keeping their
   * ports, certificates and data, so that {@link startControlPlane} brings the same cluster back.
   * Rejects with `EDGEOP_ERR_INVALID` for an existing cluster (nothing was started).
   */
  async stopControlPlane(): Promise<void> {
    const owned = this.#ownedOrThrow('stop the control plane')
    await owned.apiserver?.stop()
    await owned.etcd.stop({ crash: true })
  }

  /** Starts etcd and kube-apiserver again after {@link stopControlPlane}, on the same ports with the same data; resolves when ready. */
  async startControlPlane(timeoutMs = DEFAULT_START_TIMEOUT_MS): Promise<void> {
    const owned = this.#ownedOrThrow('start the control plane')
    await owned.etcd.start(timeoutMs)
    await owned.apiserver?.start(timeoutMs)
  }

  #ownedOrThrow(step: string): Owned {
    if (this.#owned === undefined)
      throw new EdgeopError('EDGEOP_ERR_INVALID', `cannot ${step} of an existing cluster`, { step })
    return this.#owned
  }

  /**
   * Closes the client, stops kube-apiserver and etcd, and removes every file the environment wrote
   * (certificates, kubeconfig, logs, etcd data). Idempotent; an existing cluster is left as it is.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      this.#unregisterSignal()
      await this.client.close()
      const owned = this.#owned
      if (owned === undefined) return
      await owned.apiserver?.stop()
      await owned.etcd.destroy()
      await rm(owned.workDir, { recursive: true, force: true })
      untrackTempDir(owned.workDir)
    })()
    return this.#stopping
  }

  /** `await using env = await startTestEnvironment()` stops it at the end of the scope. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.stop()
  }
}

/**
 * Starts etcd and kube-apiserver on loopback (or attaches to an existing cluster), installs
 * `options.crds` and waits until they are served, and returns the environment with a ready admin
 * client. Call {@link TestEnvironment.stop} when done (in `after()`). Rejects with `EDGEOP_ERR_INVALID`
 * for bad options, `EDGEOP_ERR_CONFIG` when no binaries (or no `openssl`) are available,
 * `EDGEOP_ERR_CONTROL_PLANE` when a process fails to start (with its log tail), and the CRD
 * errors of `installCrds`; nothing is left running after a rejection.
 */
export function startTestEnvironment(options: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
  return TestEnvironment.start(options)
}
