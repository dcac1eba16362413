/**
 * @module build/start-real-node — `npm start -- --real-node`: the operator on a real kubelet node
 * instead of KWOK's fake one. Runs test/node/probe-node.sh (root; the project's control plane,
 * containerd, runc, the CNI bridge and kubelet in a network and mount namespace of its own,
 * docs/real-node.md) with test/node/demo-on-node.ts on the Ready node, which installs the chart
 * with `helm install`, creates the sample AppService and runs until it is stopped; the probe then
 * tears the node down.
 *
 * The probe runs in a process group of its own, so a terminal's Ctrl-C reaches only `npm start`,
 * which asks the demo to stop ({@link STOP_FILE}, then SIGTERM to the pid in {@link PID_FILE}) and
 * waits for the probe's tear-down. Its work directory (logs, containerd's root) is removed after a
 * clean stop and kept, and named, otherwise.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './artifact.ts'

/** The flag of `npm start` that asks for the real node. */
export const REAL_NODE_FLAG = '--real-node'
/** In the probe's work directory: the demo script's pid, written once its signal handlers are set. */
export const PID_FILE = 'demo.pid'
/** In the probe's work directory: present once a stop was asked for (the demo checks it after writing its pid). */
export const STOP_FILE = 'demo.stop'
/** How long the probe waits for the Node to be Ready (4 to 8 s after kubelet's start, measured; slack for a loaded machine). */
const READY_WAIT_S = 120

const PROBE = join(ROOT, 'test/node/probe-node.sh')

/**
 * Brings the real node up with the demo and waits until it is torn down, after `stopping` aborts or
 * the demo fails; resolves with the probe's exit code (0 after a clean stop).
 *
 * @throws Error naming what is missing when not run as root.
 */
export async function runRealNode(stopping: AbortSignal, log: (line: string) => void): Promise<number> {
  if (process.getuid?.() !== 0)
    throw new Error(
      `${REAL_NODE_FLAG} needs root (network and mount namespaces, cgroups, containerd): run npm start as root`,
    )
  const work = await mkdtemp(join(tmpdir(), 'edgeop-real-node-'))
  log(
    `npm start: bringing up a real node (control plane, containerd, kubelet; the first run builds them from the Go module proxy), work directory ${work}`,
  )
  const probe = spawn('bash', [PROBE, String(READY_WAIT_S)], {
    cwd: ROOT,
    env: {
      ...process.env,
      EDGEOP_NODE_PROBE_DIR: work,
      EDGEOP_NODE_THEN: `${process.execPath} test/node/demo-on-node.ts`,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  })
  const exited = new Promise<number>((resolve) => probe.once('exit', (code) => resolve(code ?? 1)))
  const stop = (): void => {
    writeFileSync(join(work, STOP_FILE), '')
    const pidFile = join(work, PID_FILE)
    if (!existsSync(pidFile)) return
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGTERM')
    } catch {
      // already gone
    }
  }
  if (stopping.aborted) stop()
  else stopping.addEventListener('abort', stop, { once: true })
  const code = await exited
  if (code === 0) await rm(work, { recursive: true, force: true })
  else log(`npm start: the real node's logs are kept in ${work}`)
  return code
}
