/**
 * @module apiserver — one kube-apiserver process of the test control plane.
 *
 * Two flavours share one etcd:
 * - `cached` — the watch cache on (the Kubernetes default; needed for streaming lists,
 *   `sendInitialEvents=true`, and what every real cluster runs);
 * - `uncached` — `--watch-cache=false`, so watches and lists are served by etcd and an
 *   etcd compaction produces a real `410 Expired` deterministically (with the cache on,
 *   the cache's own window hides compaction; see the control-plane recipe §4).
 *
 * Neither runs the periodic compactor (`--etcd-compaction-interval=0`): history is only
 * compacted when a test asks for it, so no test sees a 410 it did not cause.
 */
import { join } from 'node:path'
import { kubeRequest, type TlsIdentity } from './kube-request.ts'
import { FRONT_PROXY_CLIENT_NAME, type TestPki } from './pki.ts'
import { LOOPBACK } from './ports.ts'
import { ManagedProcess } from './process.ts'

/** Which of the two apiservers. */
export type ApiserverFlavor = 'cached' | 'uncached'

/**
 * How long to wait for `/readyz` on a cold start. The first start bootstraps RBAC and
 * API priority-and-fairness objects; on 2 busy cores that has been seen to take a minute.
 */
export const APISERVER_READY_TIMEOUT_MS = 120_000

/**
 * Grace period between SIGTERM and SIGKILL. kube-apiserver stops listening at once on
 * SIGTERM but then waits (up to a minute) for open watches to end; with controllers
 * watching, that wait always runs into the grace period. Clients see the same dropped
 * connections either way, so a restart does not wait long for it.
 */
export const APISERVER_STOP_GRACE_MS = 2_000

/**
 * Service CIDR; its first address (10.0.0.1) is in the serving cert, like a real cluster's.
 * A /16: envtest's /24 runs out of ClusterIPs after 254 Services, which the 1,000-AppService
 * benchmark exceeds.
 */
export const SERVICE_CLUSTER_IP_RANGE = '10.0.0.0/16'

/** Service-account token issuer (what a kubeadm cluster uses). */
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local'

/** Header names the fault proxy uses to pass the caller's identity (`--requestheader-*`). */
export const REQUEST_HEADER_USER = 'X-Remote-User'
export const REQUEST_HEADER_GROUP = 'X-Remote-Group'
export const REQUEST_HEADER_EXTRA_PREFIX = 'X-Remote-Extra-'

/** Options for {@link Apiserver}. */
export interface ApiserverOptions {
  flavor: ApiserverFlavor
  /** Path of the `kube-apiserver` binary. */
  bin: string
  port: number
  etcdUrl: string
  pki: TestPki
  workDir: string
  /** Extra flags appended last; each replaces ours of the same name (a list flag such as `--disable-admission-plugins` would append otherwise). */
  extraArgs?: readonly string[]
}

/** Builds the kube-apiserver command line (exported for tests and for the report). */
export function apiserverArgs(options: ApiserverOptions): string[] {
  const { pki } = options
  const extra = options.extraArgs ?? []
  const replaced = new Set(extra.map(flagName))
  const ours = [
    `--etcd-servers=${options.etcdUrl}`,
    `--bind-address=${LOOPBACK}`,
    `--secure-port=${options.port}`,
    // No default route on a sandbox: the advertise address must be given, and a loopback
    // address must not be written into the `kubernetes` Endpoints (recipe §3.3).
    `--advertise-address=${LOOPBACK}`,
    '--endpoint-reconciler-type=none',
    `--tls-cert-file=${pki.apiserver.cert}`,
    `--tls-private-key-file=${pki.apiserver.key}`,
    `--client-ca-file=${pki.ca.cert}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${pki.serviceAccount.pub}`,
    `--service-account-signing-key-file=${pki.serviceAccount.key}`,
    `--service-cluster-ip-range=${SERVICE_CLUSTER_IP_RANGE}`,
    '--authorization-mode=RBAC',
    '--allow-privileged=true',
    // Without kube-controller-manager nobody creates the `default` ServiceAccount, and
    // this plugin would reject Pods in fresh namespaces (recipe pitfall 9).
    '--disable-admission-plugins=ServiceAccount',
    // Added to the default plugins (this flag adds, it does not replace), as hardened clusters
    // and OpenShift run it: setting `blockOwnerDeletion` then needs `update` on the owner's
    // `finalizers`, so tests under deploy/'s RBAC see what such a cluster would refuse.
    '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
    '--etcd-compaction-interval=0',
    `--watch-cache=${options.flavor === 'cached'}`,
    // The fault proxy authenticates with the front-proxy client cert and names the caller in headers.
    `--requestheader-client-ca-file=${pki.frontProxyCa.cert}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_NAME}`,
    `--requestheader-username-headers=${REQUEST_HEADER_USER}`,
    `--requestheader-group-headers=${REQUEST_HEADER_GROUP}`,
    `--requestheader-extra-headers-prefix=${REQUEST_HEADER_EXTRA_PREFIX}`,
    `--proxy-client-cert-file=${pki.frontProxyClient.cert}`,
    `--proxy-client-key-file=${pki.frontProxyClient.key}`,
    '--profiling=false',
  ]
  return [...ours.filter((a) => !replaced.has(flagName(a))), ...extra]
}

/** `--name` of a `--name=value` flag. */
const flagName = (arg: string): string => arg.split('=', 1)[0]!

/** One kube-apiserver; restartable on the same port with the same data. */
export class Apiserver {
  readonly flavor: ApiserverFlavor
  readonly url: string
  readonly process: ManagedProcess
  readonly #admin: TlsIdentity

  constructor(options: ApiserverOptions, admin: TlsIdentity) {
    this.flavor = options.flavor
    this.url = `https://${LOOPBACK}:${options.port}`
    this.#admin = admin
    this.process = new ManagedProcess({
      name: `kube-apiserver-${options.flavor}`,
      command: options.bin,
      args: apiserverArgs(options),
      logFile: join(options.workDir, `kube-apiserver-${options.flavor}.log`),
      stopGraceMs: APISERVER_STOP_GRACE_MS,
    })
  }

  /** Spawns the process without waiting. */
  spawn(): void {
    this.process.start()
  }

  /**
   * Waits until `/readyz` answers `ok` to the admin and the `default` namespace exists
   * (what envtest waits for too: readyz can be ok a moment before the namespace is).
   */
  async waitReady(timeoutMs = APISERVER_READY_TIMEOUT_MS): Promise<void> {
    await this.process.eventually(
      async () => {
        const res = await kubeRequest(this.url, this.#admin, 'GET', '/readyz', undefined, 5_000)
        if (res.status === 200) return true
        throw new Error(`/readyz HTTP ${res.status}: ${res.body.slice(0, 300)}`)
      },
      { timeoutMs, what: `${this.process.name} /readyz` },
    )
    await this.process.eventually(
      async () => {
        const res = await kubeRequest(this.url, this.#admin, 'GET', '/api/v1/namespaces/default')
        return res.status === 200 ? true : undefined
      },
      { timeoutMs, what: `${this.process.name} namespace "default"` },
    )
  }

  /** Starts and waits for readiness. */
  async start(timeoutMs = APISERVER_READY_TIMEOUT_MS): Promise<void> {
    this.spawn()
    await this.waitReady(timeoutMs)
  }

  /** Stops the process (SIGTERM, then SIGKILL after the grace period). */
  async stop(): Promise<void> {
    await this.process.stop()
  }

  /** Stops and starts again on the same port with the same flags; resolves when ready. */
  async restart(timeoutMs = APISERVER_READY_TIMEOUT_MS): Promise<void> {
    await this.stop()
    await this.start(timeoutMs)
  }
}
