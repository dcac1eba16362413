/**
 * @module controllers — kube-controller-manager, kube-scheduler and kwok, for realism.
 *
 * With only an apiserver, a Deployment gets no ReplicaSet, Pods never schedule, garbage
 * collection never runs and namespaces stay Terminating. These three make the chain
 * Deployment → ReplicaSet → Pods → bound to a fake Node → Running/Ready real (recipe §5).
 * They cost memory and CPU, so the control plane starts them only on request.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { kubeJson, kubeRequest, type TlsIdentity } from '../../src/testing/kube-request.ts'
import { writeKubeconfig } from '../../src/testing/kubeconfig.ts'
import { MASTERS_GROUP, type TestPki } from '../../src/testing/pki.ts'
import { freePorts, LOOPBACK } from '../../src/testing/ports.ts'
import { ManagedProcess } from '../../src/testing/process.ts'
import { kwokStagesConfig } from './kwok-stages.ts'

/** Name of the fake node created by {@link startControllers}. */
export const FAKE_NODE_NAME = 'kwok-node-0'

/** Every default controller except those that populate every namespace (see {@link startControllers}). */
export const KCM_CONTROLLERS = '*,-root-ca-certificate-publisher-controller,-serviceaccount-controller'

/** Controllers come up in seconds; a loaded 2-core machine gets a generous bound. */
export const CONTROLLERS_READY_TIMEOUT_MS = 90_000

/** Paths of the binaries. */
export interface ControllerBinaries {
  kubeControllerManager: string
  kubeScheduler: string
  kwok: string
}

/** Options for {@link startControllers}. */
export interface ControllersOptions {
  bins: ControllerBinaries
  /** URL of the apiserver the controllers talk to. */
  server: string
  pki: TestPki
  workDir: string
  admin: TlsIdentity
}

/** The running controllers. */
export interface Controllers {
  processes: ManagedProcess[]
  stop(): Promise<void>
}

/** A fake Node for kwok: no taint, so unmodified Pod templates schedule onto it. */
export function fakeNode(name: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        type: 'kwok',
      },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
  }
}

async function kubeconfigFor(options: ControllersOptions, file: string, user: string, groups: string[]) {
  const cert = await options.pki.issueClientCert(user, groups, file)
  const caPem = options.admin.caPem
  return writeKubeconfig(join(options.workDir, `${file}.kubeconfig`), {
    server: options.server,
    caPem,
    credentials: cert,
  })
}

async function healthz(port: number, proc: ManagedProcess): Promise<void> {
  await proc.eventually(
    async () => {
      const res = await kubeRequest(
        `https://${LOOPBACK}:${port}`,
        { caPem: '', insecure: true },
        'GET',
        '/healthz',
      ).catch(() => undefined)
      return res?.status === 200 ? true : undefined
    },
    { what: `${proc.name} /healthz`, timeoutMs: CONTROLLERS_READY_TIMEOUT_MS },
  )
}

/**
 * Starts kube-controller-manager, kube-scheduler and kwok against `server`, creates the
 * fake node {@link FAKE_NODE_NAME} and waits until it is Ready.
 */
export async function startControllers(options: ControllersOptions): Promise<Controllers> {
  const { bins, pki, workDir } = options
  // kcm runs every controller with its own credentials (no per-controller service
  // accounts), so it needs system:masters; the scheduler's bootstrap RBAC binding suffices.
  const [kcmConfig, schedulerConfig, kwokConfig] = await Promise.all([
    kubeconfigFor(options, 'kube-controller-manager', 'system:kube-controller-manager', [MASTERS_GROUP]),
    kubeconfigFor(options, 'kube-scheduler', 'system:kube-scheduler', []),
    kubeconfigFor(options, 'kwok', 'edgeop-kwok', [MASTERS_GROUP]),
  ])
  const kwokStages = join(workDir, 'kwok-stages.yaml')
  await writeFile(kwokStages, kwokStagesConfig())
  const [kcmPort, schedulerPort] = await freePorts(2)
  const delegated = (config: string) => [
    `--kubeconfig=${config}`,
    `--authentication-kubeconfig=${config}`,
    `--authorization-kubeconfig=${config}`,
    `--bind-address=${LOOPBACK}`,
    '--leader-elect=false',
  ]
  const kcm = new ManagedProcess({
    name: 'kube-controller-manager',
    command: bins.kubeControllerManager,
    logFile: join(workDir, 'kube-controller-manager.log'),
    args: [
      ...delegated(kcmConfig),
      `--secure-port=${kcmPort}`,
      '--use-service-account-credentials=false',
      // Once started, the controllers serve every test file. These two would add objects
      // (ConfigMap kube-root-ca.crt, ServiceAccount default) to every namespace, so a
      // test's namespace would hold objects it did not create depending on whether some
      // other file had started the controllers first.
      `--controllers=${KCM_CONTROLLERS}`,
      `--root-ca-file=${pki.ca.cert}`,
      `--service-account-private-key-file=${pki.serviceAccount.key}`,
      `--cluster-signing-cert-file=${pki.ca.cert}`,
      `--cluster-signing-key-file=${pki.ca.key}`,
    ],
  })
  const scheduler = new ManagedProcess({
    name: 'kube-scheduler',
    command: bins.kubeScheduler,
    logFile: join(workDir, 'kube-scheduler.log'),
    args: [...delegated(schedulerConfig), `--secure-port=${schedulerPort}`],
  })
  const kwok = new ManagedProcess({
    name: 'kwok',
    command: bins.kwok,
    logFile: join(workDir, 'kwok.log'),
    args: [
      `--kubeconfig=${kwokConfig}`,
      `--config=${kwokStages}`,
      '--manage-all-nodes=true',
      // Fake addresses written into Node and Pod status; nothing connects to them.
      '--cidr=10.244.0.1/16',
      '--node-ip=10.1.0.1',
      '--node-lease-duration-seconds=40',
    ],
  })
  const processes = [kcm, scheduler, kwok]
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((p) => p.stop()))
  }
  try {
    for (const p of processes) p.start()
    await Promise.all([healthz(kcmPort!, kcm), healthz(schedulerPort!, scheduler)])
    await kubeJson(options.server, options.admin, 'POST', '/api/v1/nodes', fakeNode(FAKE_NODE_NAME), [409])
    await kwok.eventually(
      async () => {
        const node = await kubeJson<{ status?: { conditions?: { type: string; status: string }[] } }>(
          options.server,
          options.admin,
          'GET',
          `/api/v1/nodes/${FAKE_NODE_NAME}`,
        )
        return node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')
          ? true
          : undefined
      },
      { what: `node ${FAKE_NODE_NAME} Ready`, timeoutMs: CONTROLLERS_READY_TIMEOUT_MS },
    )
  } catch (err) {
    await stop()
    throw err
  }
  return { processes, stop }
}
