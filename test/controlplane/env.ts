/**
 * @module env — how an integration test file reaches the test control plane.
 *
 * ```ts
 * import { getTestEnv } from '../controlplane/env.ts'
 *
 * const env = await getTestEnv()                 // shared use (most files)
 * const ns = await env.createNamespace('my-test') // a fresh namespace per test
 * // env.kubeconfig: admin kubeconfig file (cached apiserver); env.server, env.caPem, env.admin.{certPem,keyPem}
 * ```
 *
 * ## Where the control plane comes from
 * - Under the runner (`npm test`, `node build/test.ts integration`): ONE control plane
 *   serves the whole run. The runner passes `EDGEOP_TEST_CONTROL_URL`,
 *   `EDGEOP_TEST_CONTROL_TOKEN` and `EDGEOP_TEST_KUBECONFIG` to every test process;
 *   `getTestEnv()` talks to that control API.
 * - After `npm run cluster:up`: export the two `EDGEOP_TEST_CONTROL_*` variables it
 *   prints and run any file with `node --test` against the long-lived cluster.
 * - Without those variables (e.g. `node --test test/integration/x.test.ts`):
 *   `getTestEnv()` starts a private control plane for this process (etcd + cached
 *   apiserver, about 3 s when the binaries are built; the uncached one on first use)
 *   and it is torn down when the process exits, however it exits.
 *
 * ## Sharing: leases
 * Test files run concurrently (`--test-concurrency=2`), each in its own namespaces.
 * `getTestEnv()` takes a *shared* lease for the life of the process. Controls that
 * disturb everyone — {@link TestEnv.compact}, {@link TestEnv.restartApiserver},
 * {@link TestEnv.stopEtcd}/{@link TestEnv.startEtcd} — need
 * `getTestEnv({ exclusive: true })`: that file waits until no other file runs and
 * blocks new ones until it exits; then the control plane is healed (etcd started,
 * apiservers restarted if stopped). Calling them with a shared lease throws.
 *
 * ## The two apiservers
 * Both use the same etcd. `cached` (default everywhere) has the watch cache on, like
 * every real cluster (streaming lists, `sendInitialEvents=true`). `uncached`
 * (`--watch-cache=false`, started on first use: {@link TestEnv.uncached}) serves
 * watches and lists from etcd, so after {@link TestEnv.compact} a watch or list from an
 * older resourceVersion gets a real `410 Expired`. Neither compacts on its own.
 *
 * ## Identities
 * `env.kubeconfig` / `env.admin` is `edgeop-admin` in `system:masters` (bypasses RBAC).
 * {@link TestEnv.userKubeconfig}`(user, groups)` issues a client cert for exactly that
 * identity, so a test can apply the RBAC from `deploy/` and run with those permissions.
 *
 * ## Faults
 * {@link TestEnv.startFaultProxy} starts a {@link FaultProxy} in this process in front
 * of an apiserver; point a client at `proxy.url` (e.g. with
 * {@link TestEnv.writeKubeconfig}`({ server: proxy.url })`) and add rules. Close it in
 * `after()`.
 *
 * ## Realism
 * {@link TestEnv.startControllers} adds kube-controller-manager, kube-scheduler and
 * kwok with one fake Ready node `kwok-node-0`, so Deployments get ReplicaSets and Ready
 * Pods, Jobs complete, GC runs and namespaces can be deleted. Once started they run
 * for the rest of the run and act on every namespace (a Pod anyone creates gets
 * scheduled and becomes Running), so tests that create workloads should not assume
 * they stay untouched. The controllers that would add objects to every namespace
 * (`kube-root-ca.crt`, ServiceAccount `default`) are off, so a namespace holds only
 * what its test created (plus what controllers derive from that).
 */

import { mkdtemp } from 'node:fs/promises'
import { request } from 'node:http'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ApiserverFlavor } from '../../src/testing/apiserver.ts'
import { trackTempDir } from '../../src/testing/cleanup.ts'
import { type KubeconfigCredentials, writeKubeconfig } from '../../src/testing/kubeconfig.ts'
import type { Versions } from './assets.ts'
import type { ControlPlaneInfo, KubeconfigInfo, ProcessStats, StartTimings } from './control-plane.ts'
import { LEASE_HEADER } from './control-server.ts'
import { FaultProxy } from './fault-proxy.ts'
import type { LeaseMode } from './lease.ts'
import { launchSupervisor } from './supervisor-launch.ts'

/** Environment variable: URL of the control API. */
export const CONTROL_URL_ENV = 'EDGEOP_TEST_CONTROL_URL'
/** Environment variable: bearer token of the control API. */
export const CONTROL_TOKEN_ENV = 'EDGEOP_TEST_CONTROL_TOKEN'
/** Environment variable: admin kubeconfig of the cached apiserver (informational; `env.kubeconfig` is the same). */
export const KUBECONFIG_ENV = 'EDGEOP_TEST_KUBECONFIG'

/**
 * Control calls can wait for an apiserver restart or a controller start on a loaded
 * machine, so they get far more than a normal request.
 */
const CONTROL_CALL_TIMEOUT_MS = 300_000

export type { ApiserverFlavor } from '../../src/testing/apiserver.ts'
export type { KubeconfigInfo } from './control-plane.ts'
export { FaultProxy } from './fault-proxy.ts'

/** Options for {@link getTestEnv}. */
export interface TestEnvOptions {
  /**
   * Take the control plane for this file alone, so it may compact, restart and stop
   * things. Default false (shared with files running concurrently).
   */
  exclusive?: boolean
  /**
   * Start a control plane for this process alone even under the runner, for a test that needs a
   * cluster nobody else changes (e.g. one without the CRDs other files install). Costs a start of
   * etcd and an apiserver (about 3 s). Default false.
   */
  private?: boolean
  /**
   * kube-apiserver flags for a `private` control plane (`--flag=value`, each replacing the control
   * plane's own of the same name), e.g. `--enable-aggregator-routing=true`. Ignored without `private`.
   */
  apiserverArgs?: readonly string[]
}

/** Options for {@link TestEnv.writeKubeconfig}. */
export interface KubeconfigFileOptions {
  /** Server URL, e.g. a fault proxy's `url`. */
  server: string
  /** Default: the admin's client cert. */
  credentials?: KubeconfigCredentials
  /** Default namespace of the context. */
  namespace?: string
}

/** The control plane as a test file sees it. */
export interface TestEnv {
  /** `https://127.0.0.1:<port>` of the cached apiserver. */
  readonly server: string
  /** Admin kubeconfig file for {@link TestEnv.server}. */
  readonly kubeconfig: string
  /** PEM of the cluster CA (signs the apiserver's and fault proxies' serving certs and all client certs). */
  readonly caPem: string
  /** The admin client cert (CN=edgeop-admin, O=system:masters). */
  readonly admin: { readonly certPem: string; readonly keyPem: string }
  /** `http://127.0.0.1:<port>` of etcd (for tests that inspect storage). */
  readonly etcdUrl: string
  readonly versions: Versions
  /** The lease this process holds. */
  readonly lease: LeaseMode
  /** Starts the uncached apiserver if needed; its URL and admin kubeconfig. */
  uncached(): Promise<{ server: string; kubeconfig: string }>
  /** URL of an apiserver flavour (starting the uncached one if needed). */
  serverOf(apiserver: ApiserverFlavor): Promise<string>
  /** Creates namespace `<prefix>-<8 hex>` (labelled `edgeop.dev/test=true`); returns its name. */
  createNamespace(prefix?: string): Promise<string>
  /**
   * A kubeconfig for a client-cert identity with exactly `groups` (default none): no
   * permissions until the test grants some with RBAC.
   */
  userKubeconfig(
    user: string,
    groups?: readonly string[],
    options?: { apiserver?: ApiserverFlavor },
  ): Promise<KubeconfigInfo>
  /** Writes a kubeconfig (cluster CA, admin cert unless given) for any server URL into a temp file. */
  writeKubeconfig(options: KubeconfigFileOptions): Promise<string>
  /** Starts a fault proxy in this process in front of an apiserver (default cached). Close it when done. */
  startFaultProxy(options?: { apiserver?: ApiserverFlavor; port?: number }): Promise<FaultProxy>
  /** Starts kube-controller-manager, kube-scheduler, kwok and the fake node (idempotent, shared). */
  startControllers(): Promise<void>
  /** Exclusive. Compacts etcd to its current revision (physically); returns that revision. */
  compact(): Promise<number>
  /** Exclusive. Restarts an apiserver (default `cached`) or `all` on the same port; waits for ready. */
  restartApiserver(which?: ApiserverFlavor | 'all'): Promise<void>
  /** Exclusive. Stops etcd (the apiservers keep running and fail requests). */
  stopEtcd(): Promise<void>
  /** Exclusive. Starts etcd with the same data; waits until the apiservers are ready again. */
  startEtcd(): Promise<void>
  /** Start timings and memory of the control plane's processes. */
  stats(): Promise<{ timings: StartTimings; processes: ProcessStats[] }>
}

class ControlClient {
  readonly #url: string
  readonly #token: string
  leaseId: string | undefined

  constructor(url: string, token: string) {
    this.#url = url
    this.#token = token
  }

  call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.#url}${path}`,
        {
          method,
          agent: false,
          timeout: CONTROL_CALL_TIMEOUT_MS,
          headers: {
            authorization: `Bearer ${this.#token}`,
            ...(this.leaseId === undefined ? {} : { [LEASE_HEADER]: this.leaseId }),
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('error', reject)
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let value: unknown
            try {
              value = JSON.parse(text)
            } catch {
              value = { error: text }
            }
            if (res.statusCode === 200) resolve(value as T)
            else
              reject(
                new Error(`control plane: ${path}: ${(value as { error?: string }).error ?? res.statusCode}`),
              )
          })
        },
      )
      req.on('timeout', () =>
        req.destroy(new Error(`control plane: ${path}: no answer in ${CONTROL_CALL_TIMEOUT_MS} ms`)),
      )
      req.on('error', reject)
      req.end(payload)
    })
  }

  /**
   * Waits for a lease. The connection stays open for the rest of the process's life
   * (unref'ed once granted, so it does not keep the process alive); the kernel closes
   * it when the process exits, which releases the lease.
   */
  acquireLease(mode: LeaseMode): Promise<string> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.#url}/v1/lease?mode=${mode}`, {
        agent: false,
        headers: { authorization: `Bearer ${this.#token}` },
      })
      req.on('error', reject)
      req.on('response', (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          return reject(new Error(`control plane: lease: HTTP ${res.statusCode}`))
        }
        let buffered = ''
        res.on('data', (chunk: Buffer) => {
          if (this.leaseId !== undefined) return
          buffered += chunk.toString('utf8')
          const nl = buffered.indexOf('\n')
          if (nl < 0) return
          const { id } = JSON.parse(buffered.slice(0, nl)) as { id: string }
          this.leaseId = id
          ;(res.socket as Socket).unref()
          resolve(id)
        })
        // Before the grant, any end of the connection (the supervisor died) is a failure.
        res.on('error', () => {})
        res.on('close', () => reject(new Error('control plane: lease connection closed before the grant')))
      })
      req.on('close', () => reject(new Error('control plane: lease connection closed before the grant')))
      req.end()
    })
  }
}

class RemoteTestEnv implements TestEnv {
  readonly server: string
  readonly kubeconfig: string
  readonly caPem: string
  readonly admin: { readonly certPem: string; readonly keyPem: string }
  readonly etcdUrl: string
  readonly versions: Versions
  readonly lease: LeaseMode
  readonly #client: ControlClient
  #info: ControlPlaneInfo
  #tempDir: Promise<string> | undefined
  #kubeconfigSeq = 0

  constructor(client: ControlClient, info: ControlPlaneInfo, lease: LeaseMode) {
    this.#client = client
    this.#info = info
    this.server = info.servers.cached!
    this.kubeconfig = info.kubeconfig
    this.caPem = info.caPem
    this.admin = info.admin
    this.etcdUrl = info.etcdUrl
    this.versions = info.versions
    this.lease = lease
  }

  async uncached(): Promise<{ server: string; kubeconfig: string }> {
    return this.#client.call('POST', '/v1/apiservers/uncached')
  }

  async serverOf(apiserver: ApiserverFlavor): Promise<string> {
    return apiserver === 'cached' ? this.server : (await this.uncached()).server
  }

  async createNamespace(prefix?: string): Promise<string> {
    return (await this.#client.call<{ name: string }>('POST', '/v1/namespaces', { prefix })).name
  }

  userKubeconfig(
    user: string,
    groups: readonly string[] = [],
    options: { apiserver?: ApiserverFlavor } = {},
  ) {
    return this.#client.call<KubeconfigInfo>('POST', '/v1/user-kubeconfig', {
      user,
      groups,
      apiserver: options.apiserver ?? 'cached',
    })
  }

  async writeKubeconfig(options: KubeconfigFileOptions): Promise<string> {
    this.#tempDir ??= mkdtemp(join(tmpdir(), 'edgeop-test-kubeconfig-')).then((dir) => {
      trackTempDir(dir)
      return dir
    })
    const path = join(await this.#tempDir, `kubeconfig-${++this.#kubeconfigSeq}.yaml`)
    return writeKubeconfig(path, {
      server: options.server,
      caPem: this.caPem,
      credentials: options.credentials ?? this.admin,
      ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    })
  }

  async startFaultProxy(options: { apiserver?: ApiserverFlavor; port?: number } = {}): Promise<FaultProxy> {
    return FaultProxy.start({
      upstream: await this.serverOf(options.apiserver ?? 'cached'),
      upstreamCaPem: this.caPem,
      upstreamClientCert: this.#info.frontProxyClient,
      servingCert: this.#info.proxyServing,
      clientCaPem: this.caPem,
      ...(options.port === undefined ? {} : { port: options.port }),
    })
  }

  async startControllers(): Promise<void> {
    await this.#client.call('POST', '/v1/controllers')
  }

  async compact(): Promise<number> {
    return (await this.#client.call<{ revision: number }>('POST', '/v1/compact')).revision
  }

  async restartApiserver(which: ApiserverFlavor | 'all' = 'cached'): Promise<void> {
    await this.#client.call('POST', '/v1/restart-apiserver', { which })
  }

  async stopEtcd(): Promise<void> {
    await this.#client.call('POST', '/v1/etcd/stop')
  }

  async startEtcd(): Promise<void> {
    await this.#client.call('POST', '/v1/etcd/start')
  }

  stats(): Promise<{ timings: StartTimings; processes: ProcessStats[] }> {
    return this.#client.call('GET', '/v1/stats')
  }
}

let current: { mode: LeaseMode; env: Promise<TestEnv> } | undefined

async function connect(mode: LeaseMode, alone: boolean, apiserverArgs?: readonly string[]): Promise<TestEnv> {
  let url = alone ? undefined : process.env[CONTROL_URL_ENV]
  let token = alone ? undefined : process.env[CONTROL_TOKEN_ENV]
  if (url === undefined || url === '' || token === undefined) {
    // Running on its own: a private control plane that lives as long as this process.
    const supervisor = await launchSupervisor({ uncached: 'lazy', ...(alone ? { apiserverArgs } : {}) })
    supervisor.unref()
    url = supervisor.state.controlUrl
    token = supervisor.state.controlToken
  }
  const client = new ControlClient(url, token)
  await client.acquireLease(mode)
  const info = await client.call<ControlPlaneInfo>('GET', '/v1/info')
  return new RemoteTestEnv(client, info, mode)
}

/**
 * The control plane for this test process (one per process; later calls return the
 * same object). See the module documentation for what it offers.
 */
export function getTestEnv(options: TestEnvOptions = {}): Promise<TestEnv> {
  const mode: LeaseMode = options.exclusive ? 'exclusive' : 'shared'
  if (current !== undefined) {
    if (current.mode !== mode) {
      return Promise.reject(
        new Error(
          `getTestEnv: this process already holds a ${current.mode} lease; ask for the same kind every time`,
        ),
      )
    }
    return current.env
  }
  const env = connect(mode, options.private ?? false, options.apiserverArgs)
  current = { mode, env }
  env.catch(() => {
    if (current?.env === env) current = undefined
  })
  return env
}
