/**
 * @module supervisor — the process that owns a control plane and serves its control API.
 *
 * Started by the test runner (`build/test.ts`), by `getTestEnv()` when a test file runs
 * on its own, and detached by `cli.ts up`. Usage:
 *
 *     node test/controlplane/supervisor.ts [--bin-dir DIR] [--work-dir DIR]
 *         [--uncached eager|lazy|off] [--state-file FILE] [--watch-stdin]
 *         [--apiserver-arg=--flag=value …]
 *
 * When ready it prints one JSON line to stdout, `{"ready": SupervisorState}`, or
 * `{"error": "…"}` on failure (exit code 1); progress goes to stderr. It tears
 * everything down on SIGINT/SIGTERM/SIGHUP and, with `--watch-stdin`, when its stdin
 * reaches end-of-file — which happens whenever the parent exits, even by SIGKILL, so a
 * crashed test process never leaves a control plane behind.
 */
import { rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { onTerminationSignal } from '../../src/testing/cleanup.ts'
import { AssetsUnavailableError, type Binaries, readVersions, resolveBinaries } from './assets.ts'
import { ControlPlane, type ControlPlaneInfo, type StartTimings, type UncachedMode } from './control-plane.ts'
import { ControlServer } from './control-server.ts'

/** What the supervisor reports when ready (and writes to `--state-file`). */
export interface SupervisorState {
  /** The supervisor's PID (signal it to stop everything). */
  pid: number
  controlUrl: string
  controlToken: string
  /** Admin kubeconfig of the cached apiserver. */
  kubeconfig: string
  workDir: string
  /** etcd's data directory (on tmpfs). */
  etcdDataDir: string
  timings: StartTimings
  /** PIDs of the control plane's processes, for `cli.ts down` if the supervisor died. */
  pids: { name: string; pid: number }[]
  info: ControlPlaneInfo
}

const { values } = parseArgs({
  options: {
    'bin-dir': { type: 'string' },
    'work-dir': { type: 'string' },
    uncached: { type: 'string', default: 'lazy' },
    'state-file': { type: 'string' },
    'watch-stdin': { type: 'boolean', default: false },
    // Flags for kube-apiserver, each replacing ours of its name (the real node needs some).
    'apiserver-arg': { type: 'string', multiple: true, default: [] },
  },
})

const log = (message: string): void => {
  process.stderr.write(`${message}\n`)
}

let plane: ControlPlane | undefined
let server: ControlServer | undefined
let stopping: Promise<void> | undefined
const stateFile = values['state-file']

async function state(): Promise<SupervisorState> {
  const p = plane!
  const processes = await p.processes()
  return {
    pid: process.pid,
    controlUrl: server!.url,
    controlToken: server!.token,
    kubeconfig: p.info.kubeconfig,
    workDir: p.workDir,
    etcdDataDir: p.etcd.dataDir,
    timings: p.timings,
    pids: processes.flatMap((m) => (m.pid === undefined ? [] : [{ name: m.name, pid: m.pid }])),
    info: p.info,
  }
}

async function writeState(): Promise<void> {
  if (stateFile === undefined || plane === undefined) return
  const tmp = `${stateFile}.tmp`
  await writeFile(tmp, JSON.stringify(await state(), null, 2), { mode: 0o600 })
  await rename(tmp, stateFile)
}

function stop(): Promise<void> {
  stopping ??= (async () => {
    await server?.close().catch(() => {})
    await plane?.stop().catch((err: unknown) => log(`control plane: teardown failed: ${String(err)}`))
    if (stateFile !== undefined) await rm(stateFile, { force: true })
  })()
  return stopping
}

onTerminationSignal(stop)
if (values['watch-stdin']) {
  process.stdin.on('end', () => void stop().then(() => process.exit(0)))
  process.stdin.on('error', () => void stop().then(() => process.exit(0)))
  process.stdin.resume()
}

try {
  const mode = values.uncached as UncachedMode
  if (!['eager', 'lazy', 'off'].includes(mode)) throw new Error(`--uncached must be eager, lazy or off`)
  const binDir = values['bin-dir']
  const binaries: Binaries =
    binDir === undefined
      ? await resolveBinaries({ log })
      : { dir: binDir, versions: readVersions(), path: (name) => join(binDir, name) }
  plane = await ControlPlane.start({
    binaries,
    workDir: values['work-dir'],
    uncached: mode,
    log,
    apiserverArgs: values['apiserver-arg'],
  })
  server = await ControlServer.start(plane, () => void writeState().catch(() => {}))
  await writeState()
  process.stdout.write(`${JSON.stringify({ ready: await state() })}\n`)
} catch (err) {
  const message = err instanceof AssetsUnavailableError || err instanceof Error ? err.message : String(err)
  process.stdout.write(`${JSON.stringify({ error: message })}\n`)
  log(message)
  await stop()
  process.exit(1)
}
