/**
 * @module control-plane — etcd + kube-apiserver(s) (+ optional controllers) for integration tests.
 *
 * One object owns every process and directory it creates. Start with
 * {@link ControlPlane.start}; tear down with {@link ControlPlane.stop} (also safe after a
 * failed start). The last-resort hooks of `cleanup.ts` kill the processes and remove the
 * directories if the owning process dies without calling `stop`.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Apiserver, type ApiserverFlavor } from '../../src/testing/apiserver.ts'
import { trackTempDir, untrackTempDir } from '../../src/testing/cleanup.ts'
import { Etcd } from '../../src/testing/etcd.ts'
import { kubeJson, type TlsIdentity } from '../../src/testing/kube-request.ts'
import { writeKubeconfig } from '../../src/testing/kubeconfig.ts'
import { TEST_NAMESPACE_LABEL, testNamespaceName } from '../../src/testing/namespace.ts'
import { TestPki } from '../../src/testing/pki.ts'
import { freePorts } from '../../src/testing/ports.ts'
import type { ManagedProcess } from '../../src/testing/process.ts'
import type { Binaries, Versions } from './assets.ts'
import { type Controllers, startControllers } from './controllers.ts'

/**
 * When the uncached apiserver starts:
 * - `eager` — together with the cached one (both become ready in parallel);
 * - `lazy` — on the first request for it ({@link ControlPlane.apiserver}`('uncached')`);
 * - `off` — never (requests for it fail).
 */
export type UncachedMode = 'eager' | 'lazy' | 'off'

/** Options for {@link ControlPlane.start}. */
export interface ControlPlaneOptions {
  binaries: Binaries
  /** Directory for certificates, kubeconfigs and logs. Default: a fresh temp dir, removed on stop. */
  workDir?: string
  /** Default {@link DEFAULT_UNCACHED_MODE}. */
  uncached?: UncachedMode
  /** Progress messages. Default: none. */
  log?: (message: string) => void
  /** Flags added to every kube-apiserver's command line; each replaces ours of the same name. Default: none. */
  apiserverArgs?: readonly string[]
}

/**
 * The uncached apiserver starts on demand by default: it costs a second apiserver's
 * memory and start-up CPU, and only tests of 410/compaction behaviour need it.
 */
export const DEFAULT_UNCACHED_MODE: UncachedMode = 'lazy'

/** A kubeconfig and the material in it. */
export interface KubeconfigInfo {
  /** Path of the kubeconfig file. */
  kubeconfig: string
  server: string
  caPem: string
  certPem: string
  keyPem: string
}

/** Everything a test process needs to know; JSON-serializable. */
export interface ControlPlaneInfo {
  workDir: string
  versions: Versions
  etcdUrl: string
  /** URL of each running apiserver. */
  servers: Partial<Record<ApiserverFlavor, string>>
  /** Admin kubeconfig of the cached apiserver. */
  kubeconfig: string
  /** Admin kubeconfig of the uncached apiserver, once it has started. */
  uncachedKubeconfig?: string
  caPem: string
  admin: { certPem: string; keyPem: string }
  /** The fault proxy's upstream identity (front-proxy client cert). */
  frontProxyClient: { certPem: string; keyPem: string }
  /** Serving cert for fault proxies (127.0.0.1, signed by the cluster CA). */
  proxyServing: { certPem: string; keyPem: string }
}

/** Memory of one process. */
export interface ProcessStats {
  name: string
  pid: number | undefined
  rssKb: number | undefined
  peakRssKb: number
}

/** Phase durations of the start, in milliseconds. */
export interface StartTimings {
  pki: number
  etcd: number
  apiservers: number
  total: number
}

/** A running test control plane. */
export class ControlPlane {
  readonly workDir: string
  readonly pki: TestPki
  readonly etcd: Etcd
  readonly binaries: Binaries
  readonly timings: StartTimings
  readonly #ownsWorkDir: boolean
  readonly #admin: TlsIdentity & { certPem: string; keyPem: string }
  readonly #apiservers: Record<ApiserverFlavor, Apiserver>
  readonly #uncachedMode: UncachedMode
  readonly #log: (message: string) => void
  #uncachedStart: Promise<void> | undefined
  #controllers: Promise<Controllers> | undefined
  #info: ControlPlaneInfo
  #stopped = false

  private constructor(init: {
    workDir: string
    ownsWorkDir: boolean
    pki: TestPki
    etcd: Etcd
    binaries: Binaries
    admin: TlsIdentity & { certPem: string; keyPem: string }
    apiservers: Record<ApiserverFlavor, Apiserver>
    uncachedMode: UncachedMode
    log: (message: string) => void
    info: ControlPlaneInfo
    timings: StartTimings
  }) {
    this.workDir = init.workDir
    this.#ownsWorkDir = init.ownsWorkDir
    this.pki = init.pki
    this.etcd = init.etcd
    this.binaries = init.binaries
    this.#admin = init.admin
    this.#apiservers = init.apiservers
    this.#uncachedMode = init.uncachedMode
    this.#log = init.log
    this.#info = init.info
    this.timings = init.timings
  }

  /**
   * Creates certificates, starts etcd and the cached apiserver (and the uncached one in
   * `eager` mode), and waits until they are ready. On failure everything started so far
   * is stopped and the error carries the failing process's log tail.
   */
  static async start(options: ControlPlaneOptions): Promise<ControlPlane> {
    const log = options.log ?? (() => {})
    const t0 = performance.now()
    const ownsWorkDir = options.workDir === undefined
    const workDir = options.workDir ?? (await mkdtemp(join(tmpdir(), 'edgeop-cp-')))
    if (ownsWorkDir) trackTempDir(workDir)
    await mkdir(workDir, { recursive: true, mode: 0o700 })
    const cleanupDirs = async (): Promise<void> => {
      if (ownsWorkDir) {
        await rm(workDir, { recursive: true, force: true })
        untrackTempDir(workDir)
      }
    }

    let etcd: Etcd | undefined
    const started: Apiserver[] = []
    try {
      const pki = await TestPki.create(join(workDir, 'pki'))
      const tPki = performance.now()
      const [caPem, admin, frontProxyClient, proxyServing] = await Promise.all([
        readFile(pki.ca.cert, 'utf8'),
        pki.read(pki.admin),
        pki.read(pki.frontProxyClient),
        pki.read(pki.proxyServing),
      ])
      const adminIdentity = { caPem, ...admin }

      etcd = await Etcd.create({ bin: options.binaries.path('etcd'), workDir })
      log(
        `control plane: starting etcd ${options.binaries.versions.etcd} (${etcd.url}, data ${etcd.dataDir})`,
      )
      await etcd.start()
      const tEtcd = performance.now()

      const [cachedPort, uncachedPort] = await freePorts(2)
      const make = (flavor: ApiserverFlavor, port: number): Apiserver =>
        new Apiserver(
          {
            flavor,
            port,
            bin: options.binaries.path('kube-apiserver'),
            etcdUrl: etcd!.url,
            pki,
            workDir,
            extraArgs: options.apiserverArgs ?? [],
          },
          adminIdentity,
        )
      const apiservers = { cached: make('cached', cachedPort!), uncached: make('uncached', uncachedPort!) }
      const mode = options.uncached ?? DEFAULT_UNCACHED_MODE
      const first = mode === 'eager' ? [apiservers.cached, apiservers.uncached] : [apiservers.cached]
      log(
        `control plane: starting kube-apiserver ${options.binaries.versions.kubernetes} (${first.map((a) => `${a.flavor} ${a.url}`).join(', ')})`,
      )
      for (const a of first) {
        a.spawn()
        started.push(a)
      }
      await Promise.all(first.map((a) => a.waitReady()))
      const tApi = performance.now()

      const kubeconfig = await writeKubeconfig(join(workDir, 'admin.kubeconfig'), {
        server: apiservers.cached.url,
        caPem,
        credentials: admin,
      })
      const info: ControlPlaneInfo = {
        workDir,
        versions: options.binaries.versions,
        etcdUrl: etcd.url,
        servers: Object.fromEntries(first.map((a) => [a.flavor, a.url])),
        kubeconfig,
        caPem,
        admin,
        frontProxyClient,
        proxyServing,
      }
      const timings = {
        pki: Math.round(tPki - t0),
        etcd: Math.round(tEtcd - tPki),
        apiservers: Math.round(tApi - tEtcd),
        total: Math.round(tApi - t0),
      }
      const plane = new ControlPlane({
        workDir,
        ownsWorkDir,
        pki,
        etcd,
        binaries: options.binaries,
        admin: adminIdentity,
        apiservers,
        uncachedMode: mode,
        log,
        info,
        timings,
      })
      if (mode === 'eager') {
        plane.#uncachedStart = Promise.resolve()
        plane.#info.uncachedKubeconfig = await writeKubeconfig(join(workDir, 'admin-uncached.kubeconfig'), {
          server: apiservers.uncached.url,
          caPem,
          credentials: admin,
        })
      }
      log(`control plane: ready in ${(timings.total / 1000).toFixed(1)} s (${kubeconfig})`)
      return plane
    } catch (err) {
      await Promise.allSettled(started.map((a) => a.stop()))
      await etcd?.destroy().catch(() => {})
      await cleanupDirs()
      throw err
    }
  }

  /** Serializable description for test processes. */
  get info(): ControlPlaneInfo {
    return this.#info
  }

  /** The admin identity (PEMs). */
  get admin(): TlsIdentity & { certPem: string; keyPem: string } {
    return this.#admin
  }

  /** Returns a running apiserver of the flavour, starting the uncached one on first use in `lazy` mode. */
  async apiserver(flavor: ApiserverFlavor = 'cached'): Promise<Apiserver> {
    const a = this.#apiservers[flavor]
    if (flavor === 'uncached') {
      if (this.#uncachedMode === 'off')
        throw new Error('the uncached apiserver is disabled (uncached: "off")')
      this.#uncachedStart ??= (async () => {
        this.#log(`control plane: starting the uncached kube-apiserver (${a.url})`)
        const t = performance.now()
        await a.start()
        this.#log(
          `control plane: uncached kube-apiserver ready in ${((performance.now() - t) / 1000).toFixed(1)} s`,
        )
        const uncachedKubeconfig = await writeKubeconfig(join(this.workDir, 'admin-uncached.kubeconfig'), {
          server: a.url,
          caPem: this.#admin.caPem,
          credentials: this.#admin,
        })
        this.#info = {
          ...this.#info,
          servers: { ...this.#info.servers, uncached: a.url },
          uncachedKubeconfig,
        }
      })()
      try {
        await this.#uncachedStart
      } catch (err) {
        this.#uncachedStart = undefined
        await a.stop()
        throw err
      }
    }
    return a
  }

  /** The apiservers whose process has been started (for restarts and healing). */
  #startedApiservers(): Apiserver[] {
    const list = [this.#apiservers.cached]
    if (this.#uncachedStart !== undefined) list.push(this.#apiservers.uncached)
    return list
  }

  /** Creates a namespace `<prefix>-<random>` and returns its name. */
  async createNamespace(prefix = 'test'): Promise<string> {
    const name = testNamespaceName(prefix)
    await kubeJson(this.#info.servers.cached!, this.#admin, 'POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { [TEST_NAMESPACE_LABEL]: 'true' } },
    })
    return name
  }

  /**
   * Issues a client cert for `user` in `groups` (no others; in particular not
   * system:masters unless asked) and writes a kubeconfig for it against the flavour's apiserver.
   */
  async userKubeconfig(
    user: string,
    groups: readonly string[] = [],
    flavor: ApiserverFlavor = 'cached',
  ): Promise<KubeconfigInfo> {
    const server = (await this.apiserver(flavor)).url
    const cert = await this.pki.issueClientCert(user, groups)
    const kubeconfig = await writeKubeconfig(cert.cert.replace(/\.crt$/, '.kubeconfig'), {
      server,
      caPem: this.#admin.caPem,
      credentials: cert,
      name: user,
    })
    return { kubeconfig, server, caPem: this.#admin.caPem, certPem: cert.certPem, keyPem: cert.keyPem }
  }

  /** Compacts etcd history up to the current revision; returns that revision. */
  async compact(): Promise<number> {
    return this.etcd.compact()
  }

  /**
   * Restarts apiservers (same port, same data) and waits until they are ready.
   * `which`: a flavour, or `all` (default: `cached`). An uncached apiserver that never
   * started is not started by `all`.
   */
  async restartApiserver(which: ApiserverFlavor | 'all' = 'cached'): Promise<void> {
    const targets = which === 'all' ? this.#startedApiservers() : [await this.apiserver(which)]
    await Promise.all(targets.map((a) => a.stop()))
    for (const a of targets) a.spawn()
    await Promise.all(targets.map((a) => a.waitReady()))
  }

  /**
   * Stops etcd abruptly (SIGKILL, like a crash; data and ports kept). The apiservers keep
   * running and fail requests until {@link ControlPlane.startEtcd}.
   */
  async stopEtcd(): Promise<void> {
    await this.etcd.stop({ crash: true })
  }

  /** Starts etcd again with the same data and ports and waits until the apiservers are ready again. */
  async startEtcd(): Promise<void> {
    if (!this.etcd.process.running) await this.etcd.start()
    await Promise.all(this.#startedApiservers().map((a) => a.waitReady()))
  }

  /**
   * Brings everything back to "all started processes running and ready" after a
   * disruptive test: starts etcd if stopped, restarts any apiserver that died.
   */
  async heal(): Promise<void> {
    if (!this.etcd.process.running) await this.etcd.start()
    await Promise.all(
      this.#startedApiservers().map(async (a) => {
        if (!a.process.running) a.spawn()
        await a.waitReady()
      }),
    )
  }

  /** Starts kube-controller-manager, kube-scheduler and kwok (once; later calls share the first). */
  async startControllers(): Promise<void> {
    this.#controllers ??= startControllers({
      bins: {
        kubeControllerManager: this.binaries.path('kube-controller-manager'),
        kubeScheduler: this.binaries.path('kube-scheduler'),
        kwok: this.binaries.path('kwok'),
      },
      server: this.#info.servers.cached!,
      pki: this.pki,
      workDir: this.workDir,
      admin: this.#admin,
    })
    try {
      await this.#controllers
    } catch (err) {
      this.#controllers = undefined
      throw err
    }
  }

  /** Every process this control plane has (running or not). */
  async processes(): Promise<ManagedProcess[]> {
    const controllers =
      this.#controllers === undefined
        ? []
        : ((await this.#controllers.catch(() => undefined))?.processes ?? [])
    const apiservers = [this.#apiservers.cached, this.#apiservers.uncached]
    return [this.etcd.process, ...apiservers.map((a) => a.process), ...controllers]
  }

  /** Memory of every process that has run, including its peak so far. */
  async stats(): Promise<ProcessStats[]> {
    return (await this.processes())
      .filter((p) => p.peakRssKb > 0)
      .map((p) => ({ name: p.name, pid: p.pid, rssKb: p.memory()?.rssKb, peakRssKb: p.peakRssKb }))
  }

  /** Stops every process (controllers, apiservers, etcd) and removes etcd's data and an owned work dir. */
  async stop(): Promise<void> {
    if (this.#stopped) return
    this.#stopped = true
    const controllers = await this.#controllers?.catch(() => undefined)
    await controllers?.stop()
    await Promise.allSettled([this.#apiservers.cached.stop(), this.#apiservers.uncached.stop()])
    await this.etcd.destroy()
    if (this.#ownsWorkDir) {
      await rm(this.workDir, { recursive: true, force: true })
      untrackTempDir(this.workDir)
    }
  }
}
