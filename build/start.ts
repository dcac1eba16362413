/**
 * @module build/start — `npm start`: see the operator work with one command.
 *
 * - With a cluster configured (`KUBECONFIG`, `~/.kube/config`, or in-cluster), runs the
 *   operator against it: `node src/main.ts run <extra args>`, after `edgeop install` when the
 *   AppService CRD is missing (build/start-install.ts).
 * - Without one, starts the local control plane of the test environment (etcd,
 *   kube-apiserver, kube-controller-manager, kube-scheduler, KWOK with a fake node),
 *   installs the AppService CRD, starts the database API stand-in, creates a sample
 *   AppService in namespace `demo`, and runs the operator against all of that.
 *
 * Extra arguments go to `edgeop run`: `npm start -- --log-format=text`.
 *
 * `npm start -- --real-node` (root) runs it all on a real kubelet node instead, with the chart
 * installed by `helm install` (build/start-real-node.ts); it takes no other argument.
 *
 * Stopping (Ctrl-C, SIGTERM, SIGHUP): the operator and the control plane run in process
 * groups of their own, so a terminal's Ctrl-C reaches only this process, which stops them
 * in order — the operator first (it drains once, against a live apiserver), then the
 * database stand-in, then the control plane (its processes, etcd's data, the work dir
 * with certificates and the kubeconfig) — and exits only when all of it is gone, with the
 * operator's exit code (0 after a clean drain). A second signal (not the same Ctrl-C
 * delivered twice, see {@link DUPLICATE_SIGNAL_WINDOW_MS}) exits at once: the operator is
 * killed, the control plane stops by itself when this process's end of its stdin closes.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { constants, homedir } from 'node:os'
import { join } from 'node:path'
import { trackPid, untrackPid } from '../test/controlplane/cleanup.ts'
import type { LaunchedSupervisor } from '../test/controlplane/supervisor-launch.ts'
import { ROOT } from './artifact.ts'
import { REAL_NODE_FLAG, runRealNode } from './start-real-node.ts'

/**
 * Signals closer together than this are one request to stop: a shell or npm may pass on the
 * SIGINT the terminal already sent to the whole foreground group, so one Ctrl-C can arrive twice
 * within milliseconds. A person pressing Ctrl-C again takes far longer.
 */
const DUPLICATE_SIGNAL_WINDOW_MS = 1_000

/** The operator's usual metrics and probe ports (its flag defaults), used when free. */
const PREFERRED_METRICS_PORT = 8080
const PREFERRED_PROBES_PORT = 8081

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

const extra = process.argv.slice(2)
const main = join(ROOT, 'src/main.ts')
const hasCluster =
  !!process.env.KUBECONFIG ||
  !!process.env.KUBERNETES_SERVICE_HOST ||
  existsSync(join(homedir(), '.kube/config'))

const log = (message: string): void => void process.stderr.write(`${message}\n`)

/** Aborted by the first stop signal; its reason is the signal's name. */
const stopping = new AbortController()
let operator: ChildProcess | undefined
let firstSignalAt: number | undefined

function exitCodeOf(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0)
}

for (const name of STOP_SIGNALS) {
  process.on(name, () => {
    const now = performance.now()
    if (firstSignalAt === undefined) {
      firstSignalAt = now
      log(`npm start: ${name}: stopping (send it again to exit at once)`)
      stopping.abort(name)
      operator?.kill(name)
      return
    }
    if (now - firstSignalAt < DUPLICATE_SIGNAL_WINDOW_MS) return
    log(`npm start: ${name} again: exiting at once`)
    operator?.kill('SIGKILL')
    process.exit(exitCodeOf(name))
  })
}

/** Runs `edgeop run` in its own process group; resolves with its exit code. */
function runOperator(args: string[]): Promise<number> {
  if (stopping.signal.aborted) return Promise.resolve(exitCodeOf(stopping.signal.reason as NodeJS.Signals))
  const child = spawn(process.execPath, [main, 'run', ...args, ...extra], {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  })
  operator = child
  if (child.pid !== undefined) trackPid(child.pid) // killed if we exit any other way
  return new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      if (child.pid !== undefined) untrackPid(child.pid)
      operator = undefined
      resolve(code ?? (signal === null ? 1 : exitCodeOf(signal)))
    }),
  )
}

/** `port` on 127.0.0.1 if nothing listens there, else one the kernel picks. */
function portOrFree(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE' && port !== 0) resolve(portOrFree(0))
      else reject(err)
    })
    server.listen(port, '127.0.0.1', () => {
      const address = server.address()
      const chosen = typeof address === 'object' && address !== null ? address.port : port
      server.close(() => resolve(chosen))
    })
  })
}

/** Starts kcm, scheduler and kwok through the supervisor's control API. */
async function startControllers(supervisor: LaunchedSupervisor): Promise<void> {
  const res = await fetch(`${supervisor.state.controlUrl}/v1/controllers`, {
    method: 'POST',
    headers: { authorization: `Bearer ${supervisor.state.controlToken}` },
    signal: stopping.signal,
  })
  if (res.status !== 200)
    throw new Error(`starting the controllers failed: ${(await res.text()).slice(0, 2000)}`)
}

/** Control plane, sample and stand-in up, operator run until it exits; returns its exit code. */
async function runLocal(): Promise<number> {
  const { resolveBinaries } = await import('../test/controlplane/assets.ts')
  const { launchSupervisor } = await import('../test/controlplane/supervisor-launch.ts')
  const { adminClient } = await import('../test/support/kube.ts')
  const { installAppServiceCrd } = await import('../test/support/appservice.ts')
  const { startDatabaseStandin } = await import('../test/standin/database-api.ts')
  const { APPSERVICES } = await import('../src/operators/appservice/api.ts')
  const { CORE_TYPES } = await import('../src/client/resource.ts')
  log(
    'npm start: no kubeconfig found; starting a local control plane (first run builds it from the Go module proxy)',
  )
  // In our process group, so a Ctrl-C during a first-run build stops the build too.
  const binaries = await resolveBinaries({ log })
  let supervisor: LaunchedSupervisor | undefined
  let db: Awaited<ReturnType<typeof startDatabaseStandin>> | undefined
  try {
    supervisor = await launchSupervisor({
      binDir: binaries.dir,
      uncached: 'off',
      detached: true,
      signal: stopping.signal,
    })
    await startControllers(supervisor)
    const info = supervisor.state.info
    const client = adminClient(info, info.servers.cached!)
    try {
      await installAppServiceCrd(client)
      await client
        .resource(CORE_TYPES.namespaces)
        .apply(
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'demo' } },
          { fieldManager: 'npm-start', force: true },
        )
      await client.resource(APPSERVICES, 'demo').apply(
        {
          apiVersion: 'platform.example.com/v1alpha1',
          kind: 'AppService',
          metadata: { name: 'hello', namespace: 'demo' },
          spec: { image: 'nginx:1.27', replicas: 2, port: 8080, database: { enabled: true, class: 'small' } },
        },
        { fieldManager: 'npm-start', force: true },
      )
    } finally {
      await client.close()
    }
    db = await startDatabaseStandin()
    const [metrics, probes] = [
      await portOrFree(PREFERRED_METRICS_PORT),
      await portOrFree(PREFERRED_PROBES_PORT),
    ]
    if (stopping.signal.aborted) return exitCodeOf(stopping.signal.reason as NodeJS.Signals)
    log(
      [
        'npm start: control plane ready',
        `  export KUBECONFIG=${supervisor.state.kubeconfig}`,
        `  database API stand-in: ${db.url}`,
        `  operator metrics: http://127.0.0.1:${metrics}/metrics  probes: http://127.0.0.1:${probes}/readyz`,
        '  sample: AppService demo/hello (2 replicas, database enabled)',
        '  try: kubectl get appservices -n demo -w   (or edit spec.replicas and watch it follow)',
        '  Ctrl-C stops the operator and the control plane and removes their files',
      ].join('\n'),
    )
    return await runOperator([
      `--kubeconfig=${supervisor.state.kubeconfig}`,
      `--database-api=${db.url}`,
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      // Loopback on a developer's machine: plain HTTP, so `curl` reads the metrics without a token.
      '--metrics-secure=false',
      `--health-probe-bind-address=127.0.0.1:${probes}`,
    ])
  } catch (err) {
    if (!stopping.signal.aborted) throw err
    return exitCodeOf(stopping.signal.reason as NodeJS.Signals)
  } finally {
    await db?.close()
    await supervisor?.stop()
  }
}

if (extra.includes(REAL_NODE_FLAG)) {
  if (extra.length > 1) {
    log(`npm start: ${REAL_NODE_FLAG} takes no other argument (got ${extra.join(' ')})`)
    process.exitCode = 2
  } else {
    process.exitCode = await runRealNode(stopping.signal, log).catch((err: unknown) => {
      log(`npm start: ${err instanceof Error ? err.message : String(err)}`)
      return 1
    })
    if (stopping.signal.aborted)
      log(
        `npm start: stopped (exit code ${process.exitCode})${process.exitCode === 0 ? '; the node, the control plane and their files are gone' : ''}`,
      )
  }
} else if (hasCluster) {
  log('npm start: using the configured cluster (KUBECONFIG, ~/.kube/config or in-cluster)')
  const { installIfCrdMissing } = await import('./start-install.ts')
  const installed = await installIfCrdMissing(main, log)
  process.exitCode = installed === 0 ? await runOperator([]) : installed
} else {
  process.exitCode = await runLocal().catch((err: unknown) => {
    log(`npm start: ${err instanceof Error ? err.message : String(err)}`)
    return 1
  })
  if (stopping.signal.aborted)
    log(`npm start: stopped (exit code ${process.exitCode}); the control plane and its files are gone`)
}
